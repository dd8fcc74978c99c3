//===- RegionReference.h - a variant region evaluated in float64 -*- C++ -*-===//
//
// Part of fa-mlir.
//
// fa-run's reference for an fa.attention with score_mod / mask_mod regions:
// the user's own region, evaluated op by op in float64 on the captured
// values fa-run drew. It reads the region as written (before any pass), so
// it is independent of how the compiler lowers it.
//
//===----------------------------------------------------------------------===//

#ifndef FA_TOOLS_FARUN_REGIONREFERENCE_H
#define FA_TOOLS_FARUN_REGIONREFERENCE_H

#include "fa/runtime/Reference.h"

#include "mlir/IR/Region.h"

#include <cstdint>
#include <string>
#include <vector>

namespace fa {

/// One captured value as the reference sees it: its shape (empty for a
/// scalar) and its elements, row-major, as doubles (integers exactly).
struct CaptureValue {
  std::vector<int64_t> shape;
  std::vector<double> elements;
};

/// Checks that every op of `region` is one the evaluator knows; empty when
/// so, else a one-line reason naming the op.
std::string checkEvaluable(mlir::Region &region);

/// The region's function for ref::Problem (score_mod: (score, b, h, i, j)
/// -> score; mask_mod: (b, h, i, j) -> visible). `region` and `captures`
/// must outlive the result.
std::function<double(double, int64_t, int64_t, int64_t, int64_t)>
scoreModOf(mlir::Region &region, const std::vector<CaptureValue> &captures);
std::function<bool(int64_t, int64_t, int64_t, int64_t)>
maskModOf(mlir::Region &region, const std::vector<CaptureValue> &captures);

} // namespace fa

#endif // FA_TOOLS_FARUN_REGIONREFERENCE_H
