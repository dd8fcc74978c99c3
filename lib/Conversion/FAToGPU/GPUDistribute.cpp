//===- GPUDistribute.cpp - fa-gpu-distribute ------------------------------===//
//
// Part of fa-mlir.
//
// A thin driver: find the fused loop nest, check the config against the
// chip, let the chip's strategy build the kernel. Everything chip-specific
// is behind AttentionGPUStrategy.
//
//===----------------------------------------------------------------------===//

#include "fa/Conversion/FAToGPU/BackwardKernel.h"
#include "fa/Conversion/Passes.h"
#include "fa/Dialect/FA/Utils/PipelineInput.h"

#include "mlir/IR/BuiltinOps.h"

namespace mlir {
namespace fa {
#define GEN_PASS_DEF_FAGPUDISTRIBUTE
#include "fa/Conversion/Passes.h.inc"
} // namespace fa
} // namespace mlir

using namespace mlir;
using namespace mlir::fa;

/// The gpu.funcs `build` adds to `module`, or failure.
static FailureOr<SmallVector<gpu::GPUFuncOp>>
kernelsBuiltBy(gpu::GPUModuleOp module, llvm::function_ref<LogicalResult()> build) {
  llvm::SmallPtrSet<Operation *, 4> before;
  for (gpu::GPUFuncOp func : module.getOps<gpu::GPUFuncOp>())
    before.insert(func);
  if (failed(build()))
    return failure();
  SmallVector<gpu::GPUFuncOp> built;
  for (gpu::GPUFuncOp func : module.getOps<gpu::GPUFuncOp>())
    if (!before.contains(func))
      built.push_back(func);
  return built;
}

/// The mask_per_warp knob, where it is not the chip's: on the kernels'
/// fa.apply_mask ops, for fa-gpu-lower-fragments.
static void markMaskGranularity(ArrayRef<gpu::GPUFuncOp> kernels,
                                const AttentionGPUStrategy &strategy,
                                const AttentionKernelConfig &c) {
  bool perWarp = c.schedule.maskPerWarp;
  if (perWarp == strategy.fragmentLoweringOptions().maskPerWarp)
    return;
  for (gpu::GPUFuncOp kernel : kernels)
    kernel.walk([&](ApplyMaskOp op) {
      op->setAttr(kMaskPerWarpAttrName, BoolAttr::get(op.getContext(), perWarp));
    });
}

LogicalResult mlir::fa::distributeAttentionToGPU(ModuleOp module,
                                                 StringRef chip,
                                                 bool deterministic,
                                                 int64_t sharedMemoryBudgetKB) {
  std::unique_ptr<AttentionGPUStrategy> strategy = createAttentionStrategy(chip);
  if (!strategy)
    return mlir::emitError(module.getLoc()) << "unknown chip '" << chip
                              << "' (supported: " << registeredChips() << ")";
  if (std::string reason = unsupportedSharedMemoryBudget(sharedMemoryBudgetKB);
      !reason.empty())
    return mlir::emitError(module.getLoc()) << reason;
  int64_t budgetBytes = sharedMemoryBudgetKB * 1024;
  // Tiled IR only (not fa.attention, not already distributed), in
  // functions whose names can name kernels: the pipelines' own check.
  PipelineInput input;
  input.name = "fa-gpu-distribute";
  if (failed(checkPipelineInput(module, input)))
    return failure();
  SmallVector<func::FuncOp> funcs;
  module.walk([&](func::FuncOp func) {
    if (!func.getOps<QKScoresOp>().empty() ||
        func.walk([](QKScoresOp) { return WalkResult::interrupt(); })
            .wasInterrupted())
      funcs.push_back(func);
  });
  if (funcs.empty())
    return success();
  OpBuilder builder(module.getContext());
  module->setAttr(gpu::GPUDialect::getContainerModuleAttrName(),
                  builder.getUnitAttr());
  auto gpuModule = module.lookupSymbol<gpu::GPUModuleOp>("fa_kernels");
  if (!gpuModule) {
    builder.setInsertionPointToEnd(module.getBody());
    gpuModule = gpu::GPUModuleOp::create(builder, module.getLoc(), "fa_kernels");
  }
  for (func::FuncOp func : funcs) {
    // fa-recompute-backward's nest (it has dS) or the fused forward.
    if (func.walk([](SoftmaxGradOp) { return WalkResult::interrupt(); })
            .wasInterrupted()) {
      FailureOr<AttentionBackward> backward = analyzeAttentionBackward(func);
      if (failed(backward))
        return failure();
      AttentionKernelConfig config = configOf(*backward);
      config.deterministic = deterministic;
      config.sharedMemoryBudget = budgetBytes;
      std::string reason = resolveSchedule(*strategy, config, KernelKind::Backward);
      if (reason.empty())
        reason = strategy->unsupportedBackwardReason(config);
      if (!reason.empty())
        return func.emitError() << chip << ": " << reason;
      auto built = kernelsBuiltBy(gpuModule, [&] {
        return strategy->buildBackwardKernels(builder, gpuModule, *backward,
                                              config, func.getSymName());
      });
      if (failed(built))
        return failure();
      markMaskGranularity(*built, *strategy, config);
      func.erase();
      continue;
    }
    FailureOr<FusedAttention> attention = analyzeFusedAttention(func);
    if (failed(attention))
      return failure();
    AttentionKernelConfig config = configOf(*attention);
    config.sharedMemoryBudget = budgetBytes;
    std::string reason = resolveSchedule(*strategy, config, KernelKind::Forward);
    if (reason.empty())
      reason = strategy->unsupportedReason(config);
    if (!reason.empty())
      return func.emitError() << chip << ": " << reason;
    auto built = kernelsBuiltBy(gpuModule, [&] {
      return strategy->buildForwardKernel(builder, gpuModule, *attention, config,
                                          func.getSymName());
    });
    if (failed(built))
      return failure();
    markMaskGranularity(*built, *strategy, config);
    func.erase();
  }
  return success();
}

namespace {
struct FAGPUDistributePass
    : mlir::fa::impl::FAGPUDistributeBase<FAGPUDistributePass> {
  using FAGPUDistributeBase::FAGPUDistributeBase;
  void runOnOperation() override {
    if (failed(distributeAttentionToGPU(getOperation(), chip, deterministic,
                                        sharedMemoryBudget)))
      signalPassFailure();
  }
};
} // namespace
