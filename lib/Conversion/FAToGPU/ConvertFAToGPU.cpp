//===- ConvertFAToGPU.cpp - convert-fa-to-gpu -----------------------------===//
//
// Part of fa-mlir.
//
// Reads the fused online-softmax loop nest as a kernel configuration and
// hands it to the chip's strategy. Everything chip-specific is behind
// AttentionGPUStrategy; this file knows only the tiled IR.
//
//===----------------------------------------------------------------------===//

#include "fa/Conversion/FAToGPU/AttentionKernel.h"
#include "fa/Conversion/Passes.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/BuiltinOps.h"

namespace mlir {
namespace fa {
#define GEN_PASS_DEF_CONVERTFATOGPU
#include "fa/Conversion/Passes.h.inc"
} // namespace fa
} // namespace mlir

using namespace mlir;
using namespace mlir::fa;

const std::vector<std::string> &mlir::fa::attentionKernelScalarParams() {
  static const std::vector<std::string> names = {
      "batch",      "q_heads",    "kv_heads",   "q_len",      "kv_len",
      "q_stride_b", "q_stride_h", "q_stride_s", "k_stride_b", "k_stride_h",
      "k_stride_s", "v_stride_b", "v_stride_h", "v_stride_s", "o_stride_b",
      "o_stride_h", "o_stride_s", "lse_stride_b", "lse_stride_h"};
  return names;
}

FailureOr<AttentionKernelConfig>
mlir::fa::analyzeFusedAttention(func::FuncOp func, TileAttr tile) {
  // The fused KV loop: carries (m, l, acc) and makes log2-unit scores.
  QKScoresOp scores;
  ApplyMaskOp mask;
  TileMatmulOp probsTimesV;
  int loops = 0;
  func.walk([&](scf::ForOp loop) {
    if (loop.getNumRegionIterArgs() != 3)
      return;
    QKScoresOp qk;
    loop.getBody()->walk([&](QKScoresOp op) { qk = op; });
    if (!qk || !qk.getLog2Domain())
      return;
    ++loops;
    scores = qk;
    loop.getBody()->walk([&](ApplyMaskOp op) { mask = op; });
    loop.getBody()->walk([&](TileMatmulOp op) { probsTimesV = op; });
  });
  if (loops == 0)
    return func.emitError(
        "convert-fa-to-gpu expects the fused online-softmax form: run "
        "fa-tile and fa-fuse-online-softmax first");
  if (loops > 1)
    return func.emitError("convert-fa-to-gpu handles one attention per "
                          "function, found ")
           << loops;
  if (!mask || !probsTimesV)
    return func.emitError("fused attention loop without mask or P·V");

  AttentionKernelConfig c;
  auto queryTile = scores.getQuery().getType();
  auto keyTile = scores.getKey().getType();
  auto valueTile = probsTimesV.getRhs().getType();
  c.elementType = queryTile.getElementType();
  c.blockM = queryTile.getDimSize(0);
  c.headDim = queryTile.getDimSize(1);
  c.blockN = keyTile.getDimSize(0);
  c.valueDim = valueTile.getDimSize(1);
  c.mask = mask.getMask();
  c.scale = scores.getScale().convertToDouble();
  if (auto softcap = scores.getSoftcapAttr())
    c.softcap = softcap.getValueAsDouble();
  for (Operation *parent = scores->getParentOp(); !tile && parent;
       parent = parent->getParentOp())
    tile = parent->getAttrOfType<TileAttr>("fa.tile");
  if (tile) {
    c.stages = tile.getStages();
    c.warps = tile.getWarps();
  }
  return c;
}

namespace {

struct ConvertFAToGPUPass
    : fa::impl::ConvertFAToGPUBase<ConvertFAToGPUPass> {
  using ConvertFAToGPUBase::ConvertFAToGPUBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    std::unique_ptr<AttentionGPUStrategy> strategy =
        createAttentionStrategy(chip);
    if (!strategy) {
      module.emitError() << "convert-fa-to-gpu: unknown chip '" << chip
                         << "' (supported: sm_80)";
      return signalPassFailure();
    }
    SmallVector<func::FuncOp> funcs;
    module.walk([&](func::FuncOp func) {
      bool hasScores = false;
      func.walk([&](QKScoresOp) { hasScores = true; });
      if (hasScores)
        funcs.push_back(func);
    });
    if (funcs.empty())
      return;

    OpBuilder builder(module.getContext());
    module->setAttr(gpu::GPUDialect::getContainerModuleAttrName(),
                    builder.getUnitAttr());
    builder.setInsertionPointToEnd(module.getBody());
    auto gpuModule =
        gpu::GPUModuleOp::create(builder, module.getLoc(), "fa_kernels");
    for (func::FuncOp func : funcs) {
      FailureOr<AttentionKernelConfig> config =
          analyzeFusedAttention(func, TileAttr());
      if (failed(config))
        return signalPassFailure();
      std::string reason = strategy->unsupportedReason(*config);
      if (!reason.empty()) {
        func.emitError() << "convert-fa-to-gpu{chip=" << chip
                         << "}: " << reason;
        return signalPassFailure();
      }
      std::string name = func.getSymName().str();
      strategy->emitForwardKernel(builder, gpuModule, *config, name);
      func.erase();
    }
  }
};

} // namespace
