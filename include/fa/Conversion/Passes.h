//===- Passes.h - fa conversion passes and pipelines ------------*- C++ -*-===//
//
// Part of fa-mlir.
//
//===----------------------------------------------------------------------===//

#ifndef FA_CONVERSION_PASSES_H
#define FA_CONVERSION_PASSES_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassOptions.h"
#include "mlir/Transforms/DialectConversion.h"

namespace mlir {
class OpPassManager;
class RewritePatternSet;

namespace fa {

#define GEN_PASS_DECL
#include "fa/Conversion/Passes.h.inc"

/// fa tile ops -> linalg.generic (convert-fa-tile-to-linalg).
void populateFATileToLinalgPatterns(RewritePatternSet &patterns);

/// Scalar f8E4M3FN <-> f32 arith.extf / arith.truncf as integer ops
/// (fa-expand-f8-casts).
void populateExpandF8CastPatterns(RewritePatternSet &patterns);

class AttentionGPUStrategy;
/// fa-gpu-distribute on `module` for `chip` (the pass is a thin driver).
LogicalResult distributeAttentionToGPU(ModuleOp module, StringRef chip,
                                       bool deterministic = false,
                                       int64_t sharedMemoryBudgetKB = 0);
/// fa-gpu-lower-fragments' type conversions, patterns and legality for
/// `strategy`'s chip, for reuse in another compiler's conversion.
void populateFAGPULowerFragmentsPatterns(const AttentionGPUStrategy &strategy,
                                         TypeConverter &converter,
                                         RewritePatternSet &patterns,
                                         ConversionTarget &target);

/// fa.wgmma and fa.wgmma_wait -> llvm.inline_asm (convert-fa-gpu-to-llvm).
void populateFAGPUToLLVMPatterns(RewritePatternSet &patterns);

/// Options of the end-to-end pipelines.
struct FAPipelineOptions : public PassPipelineOptions<FAPipelineOptions> {
  Option<int64_t> blockM{*this, "block-m", llvm::cl::desc("Query rows per block"),
                         llvm::cl::init(64)};
  Option<int64_t> blockN{*this, "block-n",
                         llvm::cl::desc("Key/value rows per block"),
                         llvm::cl::init(64)};
  Option<bool> testOmitRescale{
      *this, "test-omit-rescale",
      llvm::cl::desc("Negative control: online softmax without the rescale"),
      llvm::cl::init(false)};
  Option<bool> testOmitRowDot{
      *this, "test-omit-row-dot",
      llvm::cl::desc("Negative control: backward without D = rowsum(dO*O)"),
      llvm::cl::init(false)};
  Option<bool> testOmitScoreModGrad{
      *this, "test-omit-score-mod-grad",
      llvm::cl::desc("Negative control: backward with a score_mod's "
                     "derivative taken as 1"),
      llvm::cl::init(false)};
};

/// fa-to-cpu: tiled (L2) IR -> LLVM dialect for the host. Tile ops become
/// linalg, tensors are bufferized (function boundaries included, identity
/// layouts), then everything is lowered to LLVM.
void buildFAToCPUPipeline(OpPassManager &pm);

/// fa-compile-cpu: L1 (fa.attention / fa.attention_grad) all the way to LLVM
/// for the host: fa-tile, fa-fuse-online-softmax, fa-recompute-backward,
/// then fa-to-cpu.
void buildFACompileCPUPipeline(OpPassManager &pm,
                               const FAPipelineOptions &options);

/// Options of the GPU pipeline.
struct FAToPTXOptions : public PassPipelineOptions<FAToPTXOptions> {
  Option<std::string> chip{*this, "chip", llvm::cl::desc("Target chip (sm_80)"),
                           llvm::cl::init("sm_80")};
  Option<int64_t> blockM{*this, "block-m", llvm::cl::desc("Query rows per block"),
                         llvm::cl::init(64)};
  Option<int64_t> blockN{*this, "block-n",
                         llvm::cl::desc("Key/value rows per block"),
                         llvm::cl::init(64)};
  Option<bool> testOmitRowDot{
      *this, "test-omit-row-dot",
      llvm::cl::desc("Negative control: the backward without D = rowsum(dO ∘ O)"),
      llvm::cl::init(false)};
  Option<bool> deterministic{
      *this, "deterministic",
      llvm::cl::desc("Backward: dQ in a fixed order when the launch asks "
                     "(fa-gpu-distribute's option)"),
      llvm::cl::init(false)};
  Option<int64_t> sharedMemoryBudget{
      *this, "shared-memory-budget",
      llvm::cl::desc("KB of shared memory a block may take (0: the chip's "
                     "default; fa-gpu-distribute's option)"),
      llvm::cl::init(0)};
};

/// fa-to-ptx: L1 fa.attention -> gpu.binary holding PTX: fa-tile,
/// fa-fuse-online-softmax, convert-fa-to-gpu, NVVM, gpu-module-to-binary.
struct FAConvertToGPUOptions : public PassPipelineOptions<FAConvertToGPUOptions> {
  Option<std::string> chip{*this, "chip", llvm::cl::desc("Target chip (sm_80)"),
                           llvm::cl::init("sm_80")};
  Option<int64_t> sharedMemoryBudget{
      *this, "shared-memory-budget",
      llvm::cl::desc("KB of shared memory a block may take (0: the chip's "
                     "default; fa-gpu-distribute's option)"),
      llvm::cl::init(0)};
};

/// convert-fa-to-gpu: fa-gpu-distribute, fa-gpu-lower-fragments, cleanup.
void buildConvertFAToGPUPipeline(OpPassManager &pm, StringRef chip,
                                 bool deterministic = false,
                                 int64_t sharedMemoryBudgetKB = 0);

void buildFAToPTXPipeline(OpPassManager &pm, const FAToPTXOptions &options);

/// fa-to-ptx but its last step: the kernels lowered to NVVM in their
/// gpu.module, not yet compiled to PTX by LLVM (the fuzz target runs it,
/// as LLVM's code generation would cost it most of its inputs).
void buildFAToNVVMPipeline(OpPassManager &pm, const FAToPTXOptions &options);

/// Registers the conversion passes and the named pipelines.
void registerFAConversionPassesAndPipelines();

} // namespace fa
} // namespace mlir

#endif // FA_CONVERSION_PASSES_H
