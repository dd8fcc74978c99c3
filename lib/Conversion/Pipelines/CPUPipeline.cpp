//===- CPUPipeline.cpp - fa-to-cpu and fa-compile-cpu ---------------------===//
//
// Part of fa-mlir.
//
// The CPU path runs the very same tiled IR the GPU path starts from, so CI
// can prove the algorithm's numerics without a GPU.
//
//===----------------------------------------------------------------------===//

#include "fa/Conversion/Passes.h"
#include "fa/Conversion/FAToGPU/AttentionKernel.h"
#include "fa/Dialect/FA/Transforms/Passes.h"
#include "fa/Dialect/FA/Utils/PipelineInput.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Dialect/Bufferization/Pipelines/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/Passes.h"
#include "mlir/Pass/PassRegistry.h"


namespace mlir {
namespace fa {
#define GEN_PASS_REGISTRATION
#include "fa/Conversion/Passes.h.inc"
} // namespace fa
} // namespace mlir

using namespace mlir;
using namespace mlir::fa;

namespace {
/// Each pipeline's first pass: what it takes (PipelineInput.h), checked
/// before any lowering runs.
struct CheckPipelineInputPass
    : PassWrapper<CheckPipelineInputPass, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(CheckPipelineInputPass)

  explicit CheckPipelineInputPass(fa::PipelineInput input) : input(input) {}
  StringRef getArgument() const override { return "fa-check-pipeline-input"; }
  StringRef getDescription() const override {
    return "Refuse input the pipeline does not take, with one line";
  }
  void runOnOperation() override {
    if (failed(fa::checkPipelineInput(getOperation(), input)))
      signalPassFailure();
  }

  fa::PipelineInput input;
};
} // namespace

static void addInputCheck(OpPassManager &pm, StringRef pipeline,
                          bool takesAttention, bool gpu) {
  fa::PipelineInput input;
  input.name = pipeline;
  input.takesAttention = takesAttention;
  input.gpu = gpu;
  pm.addPass(std::make_unique<CheckPipelineInputPass>(input));
}

/// fa-to-cpu's passes, after its input check.
static void addFAToCPUPasses(OpPassManager &pm) {
  // Tile ops -> linalg; elementwise arith/math on tensors -> linalg too.
  OpPassManager &tiles = pm.nest<func::FuncOp>();
  tiles.addPass(createConvertFATileToLinalg());
  tiles.addPass(createConvertElementwiseToLinalgPass());
  tiles.addPass(createCanonicalizerPass());
  tiles.addPass(createCSEPass());

  // Tensors -> buffers. Identity layouts keep the C interface plain; the
  // loops carry freshly computed tiles, so they may return allocations.
  bufferization::OneShotBufferizePassOptions bufferize;
  bufferize.bufferizeFunctionBoundaries = true;
  bufferize.functionBoundaryTypeConversion =
      bufferization::LayoutMapOption::IdentityLayoutMap;
  bufferize.allowReturnAllocsFromLoops = true;
  pm.addPass(bufferization::createOneShotBufferizePass(bufferize));
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  // Tiles are allocated inside loops: free them, or a large problem runs
  // out of memory.
  bufferization::buildBufferDeallocationPipeline(pm);
  pm.addPass(createConvertBufferizationToMemRefPass());

  // Loops, then LLVM. bf16 <-> f32 casts are expanded to integer ops: the
  // host has no bf16 instructions, and Debian 12's libgcc no helper.
  pm.nest<func::FuncOp>().addPass(createConvertLinalgToLoopsPass());
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createLowerAffinePass());
  arith::ArithExpandOpsPassOptions expand;
  expand.includeBf16 = true;
  pm.addPass(arith::createArithExpandOpsPass(expand));
  // e4m3 <-> f32 likewise (the fp8 path): LLVM has no e4m3 type.
  pm.addPass(createFAExpandF8Casts());
  pm.addPass(createConvertMathToLLVMPass());
  pm.addPass(createConvertMathToLibmPass()); // tanh, for the softcap
  pm.addPass(createSCFToControlFlowPass());
  pm.addPass(createConvertControlFlowToLLVMPass());
  pm.addPass(createArithToLLVMConversionPass());
  pm.addPass(createConvertIndexToLLVMPass());
  pm.addPass(createFinalizeMemRefToLLVMConversionPass());
  pm.addPass(createConvertFuncToLLVMPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
}

void mlir::fa::buildFAToCPUPipeline(OpPassManager &pm) {
  addInputCheck(pm, "fa-to-cpu", /*takesAttention=*/false, /*gpu=*/false);
  addFAToCPUPasses(pm);
}

/// fa-tile then fa-fuse-online-softmax on every function: the L1 -> fused
/// L2 prefix both end-to-end pipelines share.
static OpPassManager &addTileAndFuse(OpPassManager &pm, int64_t blockM,
                                     int64_t blockN, bool omitRescale) {
  OpPassManager &funcPm = pm.nest<func::FuncOp>();
  fa::FATileOptions tile;
  tile.blockM = blockM;
  tile.blockN = blockN;
  funcPm.addPass(fa::createFATile(tile));
  fa::FAFuseOnlineSoftmaxOptions fuse;
  fuse.testOmitRescale = omitRescale;
  funcPm.addPass(fa::createFAFuseOnlineSoftmax(fuse));
  return funcPm;
}

void mlir::fa::buildFACompileCPUPipeline(OpPassManager &pm,
                                         const FAPipelineOptions &options) {
  addInputCheck(pm, "fa-compile-cpu", /*takesAttention=*/true,
                /*gpu=*/false);
  OpPassManager &funcPm = addTileAndFuse(pm, options.blockM, options.blockN,
                                         options.testOmitRescale);
  FARecomputeBackwardOptions backward;
  backward.blockM = options.blockM;
  backward.blockN = options.blockN;
  backward.testOmitRowDot = options.testOmitRowDot;
  backward.testOmitScoreModGrad = options.testOmitScoreModGrad;
  funcPm.addPass(createFARecomputeBackward(backward));
  addFAToCPUPasses(pm);
}

/// convert-fa-to-gpu's passes, after its input check.
static void addConvertFAToGPUPasses(OpPassManager &pm, StringRef chip,
                                    bool deterministic,
                                    int64_t sharedMemoryBudgetKB) {
  FAGPUDistributeOptions distribute;
  distribute.chip = chip.str();
  distribute.deterministic = deterministic;
  distribute.sharedMemoryBudget = sharedMemoryBudgetKB;
  pm.addPass(createFAGPUDistribute(distribute));
  FAGPULowerFragmentsOptions lower;
  lower.chip = chip.str();
  pm.addPass(createFAGPULowerFragments(lower));
  // The fragments' index math and constants, merged before NVVM.
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
}

void mlir::fa::buildConvertFAToGPUPipeline(OpPassManager &pm,
                                          StringRef chip, bool deterministic,
                                          int64_t sharedMemoryBudgetKB) {
  addInputCheck(pm, "convert-fa-to-gpu", /*takesAttention=*/false,
                /*gpu=*/true);
  addConvertFAToGPUPasses(pm, chip, deterministic, sharedMemoryBudgetKB);
}

void mlir::fa::buildFAToNVVMPipeline(OpPassManager &pm,
                                    const FAToPTXOptions &options) {
  addInputCheck(pm, "fa-to-ptx", /*takesAttention=*/true, /*gpu=*/true);
  OpPassManager &funcPm =
      addTileAndFuse(pm, options.blockM, options.blockN, /*omitRescale=*/false);
  FARecomputeBackwardOptions backward;
  backward.blockM = options.blockM;
  backward.blockN = options.blockN;
  backward.testOmitRowDot = options.testOmitRowDot;
  funcPm.addPass(createFARecomputeBackward(backward));
  addConvertFAToGPUPasses(pm, options.chip, options.deterministic,
                          options.sharedMemoryBudget);
  // NVVM at the chip's PTX ISA (the default 6.0 aborts the process). An
  // unknown chip is fa-gpu-distribute's to report.
  GpuNVVMAttachTargetOptions target;
  target.chip = options.chip;
  std::unique_ptr<AttentionGPUStrategy> strategy =
      createAttentionStrategy(options.chip);
  target.features = strategy ? strategy->ptxFeatures().str() : "+ptx70";
  target.optLevel = 3;
  pm.addPass(createGpuNVVMAttachTarget(target));
  pm.addPass(createConvertNVGPUToNVVMPass());
  OpPassManager &gpuPm = pm.nest<gpu::GPUModuleOp>();
  gpuPm.addPass(memref::createExpandStridedMetadataPass());
  gpuPm.addPass(createLowerAffinePass());
  gpuPm.addPass(createSCFToControlFlowPass());
  // fa.wgmma and fa.wgmma_wait become PTX here, just before NVVM to LLVM.
  gpuPm.addPass(createConvertFAGPUToLLVM());
  gpuPm.addPass(createConvertGpuOpsToNVVMOps());
  // The NVVM ops without an LLVM intrinsic (nvvm.barrier.arrive) as the
  // PTX MLIR gives them.
  gpuPm.addPass(createConvertNVVMToLLVMPass());
  gpuPm.addPass(createFANVVMGridConstantParams());
  gpuPm.addPass(createCanonicalizerPass());
  gpuPm.addPass(createCSEPass());
  gpuPm.addPass(createReconcileUnrealizedCastsPass());
}

void mlir::fa::buildFAToPTXPipeline(OpPassManager &pm,
                                   const FAToPTXOptions &options) {
  buildFAToNVVMPipeline(pm, options);
  GpuModuleToBinaryPassOptions binary;
  binary.compilationTarget = "isa";
  pm.addPass(createGpuModuleToBinaryPass(binary));
}

void mlir::fa::registerFAConversionPassesAndPipelines() {
  PassPipelineRegistration<FAToPTXOptions>(
      "fa-to-ptx",
      "fa.attention and fa.attention_grad (L1) to gpu.binary holding PTX: "
      "fa-tile, fa-fuse-online-softmax, fa-recompute-backward, "
      "convert-fa-to-gpu, NVVM, gpu-module-to-binary",
      buildFAToPTXPipeline);
  PassPipelineRegistration<FAConvertToGPUOptions>(
      "convert-fa-to-gpu",
      "Fused tiled attention (L2) to a gpu.func on nvgpu/nvvm: "
      "fa-gpu-distribute, fa-gpu-lower-fragments, canonicalize, cse",
      [](OpPassManager &pm, const FAConvertToGPUOptions &options) {
        buildConvertFAToGPUPipeline(pm, options.chip, /*deterministic=*/false,
                                    options.sharedMemoryBudget);
      });
  registerFAConversionPasses();
  PassPipelineRegistration<>(
      "fa-to-cpu", "Lower tiled fa IR (L2) to the LLVM dialect for the host",
      buildFAToCPUPipeline);
  PassPipelineRegistration<FAPipelineOptions>(
      "fa-compile-cpu",
      "fa.attention / fa.attention_grad to the LLVM dialect for the host: "
      "fa-tile, fa-fuse-online-softmax, fa-recompute-backward, fa-to-cpu",
      buildFACompileCPUPipeline);
}
