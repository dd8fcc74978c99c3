//===- Passes.h - fa transformation passes ----------------------*- C++ -*-===//
//
// Part of fa-mlir.
//
//===----------------------------------------------------------------------===//

#ifndef FA_DIALECT_FA_TRANSFORMS_PASSES_H
#define FA_DIALECT_FA_TRANSFORMS_PASSES_H

#include "fa/Dialect/FA/IR/FAOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Pass/Pass.h"

namespace mlir {
class RewritePatternSet;

namespace fa {

/// `block` (a power of two) shrunk to the sequence `total` (>= 1) rounded
/// up to a power of two, so that it stays a valid #fa.tile size: the block
/// fa-tile uses (and fa-compile's manifest states) for a short sequence.
int64_t clampBlockToSequence(int64_t block, int64_t total);


#define GEN_PASS_DECL
#include "fa/Dialect/FA/Transforms/Passes.h.inc"

/// Block sizes for tiling; `tile` on an op overrides them.
struct TilingOptions {
  int64_t blockM = 64;
  int64_t blockN = 64;
};

/// fa.attention -> tiled loops with a 3-pass safe softmax (fa-tile).
void populateTileAttentionPatterns(RewritePatternSet &patterns,
                                   const TilingOptions &options);

/// Three softmax loops -> one online-softmax loop (fa-fuse-online-softmax).
/// `omitRescale` builds the deliberately wrong negative control.
void populateFuseOnlineSoftmaxPatterns(RewritePatternSet &patterns,
                                       bool omitRescale = false);

/// fa.attention_grad -> KV-outer loops recomputing P (fa-recompute-backward).
/// `omitRowDot` builds the deliberately wrong negative control.
void populateRecomputeBackwardPatterns(RewritePatternSet &patterns,
                                       const TilingOptions &options,
                                       bool omitRowDot = false,
                                       bool omitScoreModGrad = false);

/// Attention in linalg on tensors -> fa.attention (fa-raise-attention).
void populateRaiseAttentionPatterns(RewritePatternSet &patterns);

#define GEN_PASS_REGISTRATION
#include "fa/Dialect/FA/Transforms/Passes.h.inc"

} // namespace fa
} // namespace mlir

#endif // FA_DIALECT_FA_TRANSFORMS_PASSES_H
