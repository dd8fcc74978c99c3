//===- PipelineInput.cpp - what a lowering takes, checked first -----------===//
//
// Part of fa-mlir.
//
//===----------------------------------------------------------------------===//

#include "fa/Dialect/FA/Utils/PipelineInput.h"

#include "fa/Dialect/FA/IR/FADialect.h"
#include "fa/Dialect/FA/IR/FAOps.h"
#include "fa/runtime/KernelAbi.h"
#include "fa/runtime/Limits.h"
#include "fa/runtime/Spec.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/TypeUtilities.h"
#include "mlir/IR/SymbolTable.h"

#include <algorithm>

using namespace mlir;
using namespace mlir::fa;

/// The longest suffix a backward's entries append to its name.
static size_t longestBackwardSuffix() {
  using ::fa::abi::BackwardStep;
  size_t longest = 0;
  for (BackwardStep step : {BackwardStep::Preprocess, BackwardStep::Main,
                            BackwardStep::Postprocess})
    longest = std::max(longest,
                       std::string(::fa::abi::backwardStepName(step)).size() + 1);
  return longest;
}

std::string mlir::fa::unsupportedKernelName(StringRef name, bool backward) {
  size_t room = ::fa::limits::kMaxKernelName -
                (backward ? longestBackwardSuffix() : 0);
  std::string text = name.str();
  if (::fa::limits::isPtxIdentifier(text) && text.size() <= room)
    return "";
  std::string reason = "'" + ::fa::printableText(text) +
                       "' is not a PTX identifier ([A-Za-z_][A-Za-z0-9_$]*, "
                       "at most " + std::to_string(room) + " characters";
  if (backward)
    reason += ": a backward's entries append _postprocess";
  return reason + ")";
}

std::string mlir::fa::unsupportedHostSymbolName(StringRef name) {
  // What the lowered code calls by name: the buffers' allocation (the
  // lowering declares malloc and free, renaming its declarations away from
  // a symbol of another type), a strided copy (memrefCopy, from MLIR's
  // runner utilities), and what LLVM emits for its memory and math
  // intrinsics and f16 conversions.
  static constexpr StringLiteral kCalled[] = {
      "malloc", "free",   "aligned_alloc", "memrefCopy",    "memcpy",
      "memset", "memmove", "expf",         "exp2f",         "logf",
      "tanhf",  "__extendhfsf2",            "__truncsfhf2"};
  if (!llvm::is_contained(kCalled, name))
    return "";
  return "'" + name.str() +
         "' is a C library function the CPU code calls (malloc, free, expf, "
         "tanhf, memcpy, ...)";
}

bool mlir::fa::hasGPULayout(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  return tensor &&
         isa_and_nonnull<FragmentLayoutAttr, OperandLayoutAttr, SharedLayoutAttr,
                         TmaSharedLayoutAttr>(tensor.getEncoding());
}

Operation *mlir::fa::findGPULayout(Operation *root) {
  Operation *found = nullptr;
  root->walk([&](Operation *op) {
    bool placed = llvm::any_of(op->getOperandTypes(), hasGPULayout) ||
                  llvm::any_of(op->getResultTypes(), hasGPULayout);
    for (Region &region : op->getRegions())
      for (Block &block : region)
        placed = placed ||
                 llvm::any_of(block.getArgumentTypes(), hasGPULayout);
    if (!placed)
      return WalkResult::advance();
    found = op;
    return WalkResult::interrupt();
  });
  return found;
}

/// A function the lowering makes a kernel of: one holding fa ops.
static bool holdsFAOps(func::FuncOp func) {
  return func
      .walk([](Operation *op) {
        return isa<FADialect>(op->getDialect()) ? WalkResult::interrupt()
                                                : WalkResult::advance();
      })
      .wasInterrupted();
}

/// A backward's function: fa.attention_grad, or fa-recompute-backward's nest.
static bool holdsBackward(func::FuncOp func) {
  return func
      .walk([](Operation *op) {
        return isa<AttentionGradOp, SoftmaxGradOp>(op) ? WalkResult::interrupt()
                                                       : WalkResult::advance();
      })
      .wasInterrupted();
}

/// The level check: an error on the first op `input` does not take.
static LogicalResult checkLevel(Operation *root, const PipelineInput &input) {
  StringRef takes = input.takesAttention ? "fa.attention or tiled IR"
                                         : "tiled IR";
  if (Operation *placed = findGPULayout(root)) {
    InFlightDiagnostic diag = placed->emitError();
    diag << input.name << " takes " << takes << ", but '" << placed->getName()
         << "' has tiles with a GPU layout (fa-gpu-distribute's output)";
    if (input.gpu)
      diag << ": run fa-gpu-lower-fragments on it instead";
    else
      diag << ", which only the GPU lowering (fa-gpu-lower-fragments) takes";
    return failure();
  }
  if (input.takesAttention)
    return success();
  // fa-gpu-distribute's words, for every pipeline that starts after tiling.
  WalkResult untiled = root->walk([&](Operation *op) {
    if (isa<AttentionGradOp>(op)) {
      op->emitError() << input.name << ": run fa-recompute-backward first";
      return WalkResult::interrupt();
    }
    if (isa<AttentionOp>(op)) {
      op->emitError() << input.name
                      << (input.gpu
                              ? ": run fa-tile and fa-fuse-online-softmax first"
                              : ": run fa-tile first");
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return failure(untiled.wasInterrupted());
}

/// The math ops a variant region may hold on the GPU, on f32 (the fragment
/// lowering's lowerRegionMath computes each without libdevice).
static bool isGpuRegionMath(Operation &op) {
  return isa<math::ExpOp, math::Exp2Op, math::LogOp, math::Log2Op,
             math::TanhOp, math::SinOp, math::CosOp, math::AbsFOp,
             math::SqrtOp, math::RsqrtOp, math::FmaOp, math::FloorOp,
             math::CeilOp, math::TruncOp>(op) &&
         op.getResult(0).getType().isF32();
}

/// What the GPU lowering cannot take of the variant regions (score_mod,
/// mask_mod) under `root`: a block-sparse backward, a math op
/// outside isGpuRegionMath, a captured integer of a width the kernel ABI
/// has no buffer for. Emits and fails.
static LogicalResult checkGpuVariants(Operation *root, StringRef pass) {
  auto checkRegion = [&](Operation *owner, Region &region,
                         StringRef name) -> LogicalResult {
    if (region.empty())
      return success();
    for (Type type : region.front().getArgumentTypes()) {
      auto integer = dyn_cast<IntegerType>(getElementTypeOrSelf(type));
      if (integer && !llvm::is_contained({1u, 8u, 16u, 32u, 64u},
                                         integer.getWidth()))
        return owner->emitError()
               << pass << ": a GPU kernel takes captured integers of 1, 8, "
               << "16, 32 or 64 bits, not " << type;
    }
    for (Operation &op : region.front().without_terminator())
      if (isa<math::MathDialect>(op.getDialect()) && !isGpuRegionMath(op))
        return owner->emitError()
               << pass << ": " << name << ": '" << op.getName()
               << "' on " << op.getResult(0).getType()
               << " is not compiled for the GPU (f32 math.exp, exp2, log, "
                  "log2, tanh, sin, cos, absf, sqrt, rsqrt, fma, floor, "
                  "ceil, trunc; the CPU takes every math op)";
    return success();
  };
  WalkResult result = root->walk([&](Operation *op) {
    if (auto bwd = dyn_cast<AttentionGradOp>(op)) {
      if (bwd.getBlockSparseAttr()) {
        op->emitError() << pass
                        << ": the GPU backward does not take a block mask "
                           "(block_sparse) yet; the CPU's ignores it";
        return WalkResult::interrupt();
      }
    }
    Region *score = nullptr, *mask = nullptr;
    if (auto bwd = dyn_cast<AttentionGradOp>(op)) {
      score = &bwd.getScoreMod();
      mask = &bwd.getMaskMod();
    } else if (auto fwd = dyn_cast<AttentionOp>(op)) {
      score = &fwd.getScoreMod();
      mask = &fwd.getMaskMod();
    } else if (auto tile = dyn_cast<ScoreModOp>(op)) {
      score = &tile.getBody();
    } else if (auto tile = dyn_cast<MaskModOp>(op)) {
      mask = &tile.getBody();
    } else {
      return WalkResult::advance();
    }
    if ((score && failed(checkRegion(op, *score, "score_mod"))) ||
        (mask && failed(checkRegion(op, *mask, "mask_mod"))))
      return WalkResult::interrupt();
    return WalkResult::skip();
  });
  return failure(result.wasInterrupted());
}

LogicalResult mlir::fa::checkPipelineInput(Operation *root,
                                           const PipelineInput &input) {
  if (failed(checkLevel(root, input)))
    return failure();
  if (input.gpu && failed(checkGpuVariants(root, input.name)))
    return failure();
  // Kernel names: the GPU's entries append a backward's step suffixes.
  // On the GPU path every symbol already in a gpu.module becomes a PTX
  // symbol too.
  WalkResult deviceNames = root->walk([&](Operation *op) {
    Operation *parent = op->getParentOp();
    auto name = op->getAttrOfType<StringAttr>(SymbolTable::getSymbolAttrName());
    if (!input.gpu || !name || !parent ||
        parent->getName().getStringRef() != "gpu.module")
      return WalkResult::advance();
    std::string reason = unsupportedKernelName(name.getValue());
    if (reason.empty())
      return WalkResult::advance();
    op->emitError() << input.name << ": symbol name " << reason
                    << ": it is compiled to PTX under it";
    return WalkResult::interrupt();
  });
  if (deviceNames.wasInterrupted())
    return failure();
  // On the CPU path every symbol shares one space with the C library the
  // lowered code calls.
  WalkResult hostNames = root->walk([&](Operation *op) {
    auto name = op->getAttrOfType<StringAttr>(SymbolTable::getSymbolAttrName());
    if (input.gpu || !name || op == root)
      return WalkResult::advance();
    std::string reason = unsupportedHostSymbolName(name.getValue());
    if (reason.empty())
      return WalkResult::advance();
    // The lowering would rename its own calls away from it, or the
    // linker bind them to it.
    op->emitError() << input.name << ": symbol name " << reason
                    << ": rename it";
    return WalkResult::interrupt();
  });
  if (hostNames.wasInterrupted())
    return failure();
  WalkResult names = root->walk([&](func::FuncOp func) {
    if (!holdsFAOps(func))
      return WalkResult::advance();
    std::string reason = unsupportedKernelName(
        func.getSymName(), input.gpu && holdsBackward(func));
    if (reason.empty())
      return WalkResult::advance();
    func.emitError() << input.name << ": function name " << reason
                     << ": the kernel takes its name";
    return WalkResult::interrupt();
  });
  return failure(names.wasInterrupted());
}
