//===- DifferentiateScoreMod.h - d(score_mod)/d(score) ----------*- C++ -*-===//
//
// Part of fa-mlir.
//
// The backward of a score_mod region, derived by the compiler: forward-mode
// differentiation of its body with respect to its first argument (the
// score), op by op over the arith and math ops a region may hold.
//
//===----------------------------------------------------------------------===//

#ifndef FA_LIB_DIALECT_FA_TRANSFORMS_DIFFERENTIATESCOREMOD_H
#define FA_LIB_DIALECT_FA_TRANSFORMS_DIFFERENTIATESCOREMOD_H

#include "mlir/IR/Operation.h"
#include "mlir/IR/Region.h"

namespace mlir {
namespace fa {

/// Fills the empty `derivative` with a region of `scoreMod`'s signature that
/// yields d(result)/d(score) at the same arguments. Fails with one line on
/// `diagnosticOp` naming the first op the score flows through that has no
/// derivative rule.
LogicalResult differentiateScoreMod(Region &scoreMod, Region &derivative,
                                    Operation *diagnosticOp);

} // namespace fa
} // namespace mlir

#endif // FA_LIB_DIALECT_FA_TRANSFORMS_DIFFERENTIATESCOREMOD_H
