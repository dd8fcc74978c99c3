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

def FAExpandF8Casts : Pass<"fa-expand-f8-casts"> {
  let summary = "Expand scalar f8E4M3FN <-> f32 casts into integer ops (the CPU has no e4m3)";
  let description = [{
    `arith.extf` from f8E4M3FN and `arith.truncf` to it, on scalars, become
    bit manipulation on i8/i32: extension exactly (subnormals, NaN), and
    truncation with round-to-nearest-even, saturating to ±448 as the
    runtime's `toF8E4M3FNBits` does (e4m3fn has no infinity; NaN stays
    NaN). The CPU path runs it after linalg becomes loops, before LLVM:
    LLVM has no e4m3 type.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::math::MathDialect"];
}

def FAGPUDistribute : Pass<"fa-gpu-distribute", "ModuleOp"> {
  let summary = "Place the fused attention loop in a kernel: the chip's schedule, the L2 math on fragment layouts";
  let description = [{
    GPU lowering, step 1. For each function holding a fused online-softmax
    loop nest (after fa-tile and fa-fuse-online-softmax), the chip's
    strategy builds a `gpu.func` of the same name in `gpu.module
    @fa_kernels` and the function is erased:

    * the schedule is the strategy's: the signature from the kernel ABI
      table (fa/runtime/KernelAbi.h), the grid mapping (Q block, head,
      batch; GQA's KV head), shared memory, the K/V pipeline (sm_80: a
      two-stage cp.async ring), barriers and the KV loop;
    * the math is the tiled IR's: the loop body's tile ops (`fa.qk_scores`,
      `fa.apply_mask`, `fa.row_max`, `fa.exp_shifted`, `fa.scale_rows`,
      `fa.row_sum`, `fa.matmul`, the recurrence's arith) and the epilogue
      are cloned unchanged into the kernel loop, their tensors re-typed with
      layouts: `#fa.fragment` for accumulators and row statistics (the
      running sum quad-partial), `#fa.shared` for tiles read from shared
      memory (`fa.shared_tile`), `#fa.operand` for the query kept in
      registers (`fa.load_operand`). O and LSE leave by `fa.store_fragment`.

    Nothing is lowered to per-thread code yet: that is
    `fa-gpu-lower-fragments`.
  }];
  let options = [
    Option<"chip", "chip", "std::string", "\"sm_80\"",
           "Target chip (see fa-compile --help for the list)">,
    Option<"deterministic", "deterministic", "bool", "false",
           "Backward: dQ added in a fixed order (KV blocks in increasing order per Q block, through dq_semaphore) when the launch asks; bit-identical, slower">,
    Option<"sharedMemoryBudget", "shared-memory-budget", "int64_t", "0",
           "KB of shared memory a block may take (0: the chip's default; up to 227)">,
  ];
  let dependentDialects = ["::mlir::gpu::GPUDialect",
                           "::mlir::nvgpu::NVGPUDialect",
                           "::mlir::NVVM::NVVMDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::arith::ArithDialect"];
}

def FAGPULowerFragments : Pass<"fa-gpu-lower-fragments", "ModuleOp"> {
  let summary = "Lower the tile ops on fragment layouts to per-thread code (vector, nvgpu, nvvm)";
  let description = [{
    GPU lowering, step 2: a dialect conversion whose type converter turns
    each `#fa.fragment` tile into the vector of elements one thread holds,
    each `#fa.operand` tile into A-fragment registers, and each `#fa.shared`
    tile into a strided view of shared memory. One pattern per op:

    * chip-neutral, over the accumulator layout (FragmentPatterns.h):
      `fa.apply_mask` (per element, only on tiles the mask cuts),
      `fa.row_max` / `fa.row_sum` (thread, then quad shuffles),
      `fa.exp_shifted` (ex2.approx), `fa.scale_rows`, `fa.convert_layout`,
      arith/math on fragments, `fa.shared_tile`, `fa.store_fragment`;
    * the chip's MMAs (sm_80: `fa.qk_scores`, `fa.matmul`,
      `fa.load_operand` on ldmatrix + mma.sync).
  }];
  let options = [
    Option<"chip", "chip", "std::string", "\"sm_80\"", "Target chip">,
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

def ConvertFAGPUToLLVM : Pass<"convert-fa-gpu-to-llvm"> {
  let summary = "Lower the fa instruction ops (fa.wgmma, fa.wgmma_wait) to inline PTX";
  let description = [{
    The late lowering of the instructions the NVVM dialect does not give in
    the form the sm_90a schedule needs (docs/toolchain.md): each
    `fa.wgmma` becomes one `wgmma.mma_async` (its descriptor offsets added
    and its scale-d predicate set inside the PTX), each `fa.wgmma_wait` one
    `wgmma.wait_group` whose f32 operands are tied to its results. Both are
    `llvm.inline_asm` with side effects, so neither moves relative to the
    NVVM fences, commits and barriers around it. fa-to-ptx runs it on the
    kernel module just before convert-gpu-to-nvvm; everything upstream
    (fa-gpu-distribute, fa-gpu-lower-fragments) reads the named ops.
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect"];
}

def FANVVMGridConstantParams
    : Pass<"fa-nvvm-grid-constant-params", "::mlir::gpu::GPUModuleOp"> {
  let summary = "Make the kernel's tensor-map parameters by-value grid constants";
  let description = [{
    Runs after `convert-gpu-to-nvvm`. Each `llvm.func` kernel whose
    `fa.grid_constant_params` lists argument positions (the sm_90a TMA
    tensor maps, KernelAbi.h) gets, on each such `!llvm.ptr` argument,
    `llvm.byval = !llvm.array<128 x i8>`, `llvm.align = 64` and
    `nvvm.grid_constant`: PTX then declares `.param .align 64 .b8 p[128]`
    and the kernel takes the parameter's generic address (`cvta.param`)
    for `cp.async.bulk.tensor`, as CUDA's `__grid_constant__ const
    CUtensorMap` does. (convert-gpu-to-nvvm drops `llvm.byval` from
    gpu.func arguments, and NVVM rejects `nvvm.grid_constant` before the
    function is a kernel, so the marks wait until here.)
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect",
                           "::mlir::NVVM::NVVMDialect"];
}

#endif // FA_CONVERSION_PASSES_TD
