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

def ConvertFAToGPU : Pass<"convert-fa-to-gpu", "ModuleOp"> {
  let summary = "Lower fused tiled attention (L2) to a gpu.func kernel for a chip";
  let description = [{
    Reads each function's fused online-softmax loop nest (after fa-tile and
    fa-fuse-online-softmax) as an attention kernel configuration (element
    type, D, Dv, block sizes, mask, scale) and replaces the function by a
    `gpu.func` of the same name inside `gpu.module @fa_kernels`, emitted by
    the chip's strategy. The (batch, head, Q block) loops become the grid,
    the KV loop becomes the in-kernel pipelined loop, and the tile ops
    become warp-level code:

    * `sm_80`: cp.async double-buffered K/V tiles in XOR-swizzled shared
      memory, ldmatrix (.trans for V), mma.sync m16n8k16 with f32
      accumulation, xor-shuffle row reductions, exp2 with log2(e) folded
      into the scale.

    Problem sizes and strides become kernel parameters, so one kernel
    serves every (B, H, M, N) and both [B,S,H,D] and [B,H,S,D] layouts; the
    ABI is in include/fa/Conversion/FAToGPU/AttentionKernel.h.
  }];
  let options = [
    Option<"chip", "chip", "std::string", "\"sm_80\"", "Target chip (sm_80)">,
  ];
  let dependentDialects = ["::mlir::gpu::GPUDialect",
                           "::mlir::nvgpu::NVGPUDialect",
                           "::mlir::NVVM::NVVMDialect",
                           "::mlir::LLVM::LLVMDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::vector::VectorDialect",
                           "::mlir::math::MathDialect"];
}

#endif // FA_CONVERSION_PASSES_TD
