//===- Passes.td - fa conversion passes --------------------*- tablegen -*-===//
//
// Part of fa-mlir.
//
//===----------------------------------------------------------------------===//

#ifndef FA_CONVERSION_PASSES_TD
#define FA_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

def ConvertFATileToLinalg : Pass<"convert-fa-tile-to-linalg", "func::FuncOp"> {
  let summary = "Lower the fa tile ops (L2) to linalg.generic on tensors";
  let description = [{
    Each tile op becomes one or two `linalg.generic`s with the same meaning:
    `fa.qk_scores` a contraction over D plus an elementwise epilogue (scale,
    softcap, log2(e)), `fa.apply_mask` an elementwise select on
    `linalg.index`, the row reductions reductions over the last dimension,
    `fa.matmul` a contraction with the transposes in its indexing maps. This
    is the CPU path's view of a tile; the GPU conversions map the same ops
    onto MMA fragments instead.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::linalg::LinalgDialect",
                           "::mlir::math::MathDialect",
                           "::mlir::tensor::TensorDialect"];
}

#endif // FA_CONVERSION_PASSES_TD
