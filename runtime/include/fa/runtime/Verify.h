//===- Verify.h - checking kernel outputs against the reference -*- C++ -*-===//
//
// Part of fa-mlir.
//
// docs/design.md's verification policy in one place, shared by every device of
// fa-run: outputs against the float64 reference, each bounded by twice the
// error of a naive attention in the input precision (plus 1e-5), NaN never
// passing. Large problems are checked on sampled rows.
//
//===----------------------------------------------------------------------===//

#ifndef FA_RUNTIME_VERIFY_H
#define FA_RUNTIME_VERIFY_H

#include "fa/runtime/Numerics.h"
#include "fa/runtime/Reference.h"

#include <cstdint>
#include <string>
#include <vector>

namespace fa {

/// The verdict on one output tensor.
struct TensorCheck {
  std::string name;
  ErrorStats kernel; ///< kernel vs float64 reference
  ErrorStats naive;  ///< naive low-precision attention vs the reference
  /// With ScoreAccumulation::Fp8TensorCore: the max error of the naive
  /// attention that sums Q·Kᵀ in f32 (shown beside, not the verdict's).
  double f32NaiveMaxAbs = -1.0;
  bool pass = false;
  std::string worstWhere; ///< "[b, h, i, e]" of the largest error or a NaN
};

struct VerifyReport {
  std::vector<TensorCheck> checks;
  size_t rowsChecked = 0, rowsTotal = 0;
  bool pass() const;
  /// One line per tensor plus the verdict, as fa-run prints it.
  std::string format() const;
};

/// Inputs and the kernel's outputs of one forward pass, as doubles holding
/// exactly the stored values. Layout: dense [B, H, S, W].
struct ForwardData {
  std::vector<double> query, key, value, output, lse;
};

/// Verifies O and LSE (O alone where `data.lse` is empty: a forward that
/// computes none). `rows` lists flat query rows (b·Hq·M + h·M + i) to
/// check; empty means every row. `accumulation` says how the yardstick
/// (the naive attention) sums Q·Kᵀ: as the kernel's matmul unit can.
VerifyReport verifyForward(ElementType type, const ref::Problem &problem,
                           const ForwardData &data,
                           const std::vector<int64_t> &rows = {},
                           ScoreAccumulation accumulation =
                               ScoreAccumulation::F32);

struct BackwardData {
  std::vector<double> query, key, value, gradOutput;
  std::vector<double> gradQuery, gradKey, gradValue;
};

/// Verifies dQ, dK and dV in full.
VerifyReport verifyBackward(ElementType type, const ref::Problem &problem,
                            const BackwardData &data);

/// At least `count` query rows spread over the problem, always including
/// the first and last row of every Q block of `blockM` rows in some head,
/// the last row M-1, and rows whose visible keys end inside a KV block of
/// `blockN` (when the mask makes that happen); the rest at random.
std::vector<int64_t> sampleRows(const ref::Problem &problem, int64_t blockM,
                                int64_t blockN, size_t count, uint64_t seed);

} // namespace fa

#endif // FA_RUNTIME_VERIFY_H
