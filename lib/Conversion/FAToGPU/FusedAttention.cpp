//===- FusedAttention.cpp - reading the fused loop nest; the registry -----===//
//
// Part of fa-mlir.
//
//===----------------------------------------------------------------------===//

#include "fa/Conversion/FAToGPU/AttentionKernel.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::fa;

/// The tile stored by an insert_slice the Q-block loop yields (the slice of
/// the tile that exists is taken first for a partial last block).
static Value storedTile(Value yielded) {
  auto insert = yielded.getDefiningOp<tensor::InsertSliceOp>();
  if (!insert)
    return Value();
  Value source = insert.getSource();
  if (auto slice = source.getDefiningOp<tensor::ExtractSliceOp>())
    return slice.getSource();
  return source;
}

LogicalResult mlir::fa::findVariantCaptures(Block *body,
                                            SmallVectorImpl<Value> &captures) {
  for (Operation &op : *body) {
    if (!isa<ScoreModOp, MaskModOp>(op))
      continue;
    ValueRange own = isa<ScoreModOp>(op) ? cast<ScoreModOp>(op).getCaptures()
                                        : cast<MaskModOp>(op).getCaptures();
    if (!captures.empty() && ValueRange(captures) != own)
      return op.emitError("the GPU lowering takes the variant ops of one "
                          "attention, capturing one list");
    captures.assign(own.begin(), own.end());
  }
  return success();
}

SmallVector<HeadScoreInput> mlir::fa::findHeadScoreInputs(Block *body) {
  SmallVector<HeadScoreInput> inputs;
  auto add = [&](Value value, StringRef values, StringRef strideB) {
    if (llvm::none_of(inputs, [&](const HeadScoreInput &input) {
          return input.l2Value == value;
        }))
      inputs.push_back({value, values, strideB});
  };
  // The kernel parameters are the ABI table's (fa/runtime/KernelAbi.h).
  for (auto bias : body->getOps<AlibiBiasOp>())
    add(bias.getSlope(), "alibi_slopes", "alibi_stride_b");
  return inputs;
}

bool mlir::fa::readsAlibiSlopes(ArrayRef<HeadScoreInput> inputs) {
  return llvm::any_of(inputs, [](const HeadScoreInput &input) {
    return input.values == "alibi_slopes";
  });
}

FailureOr<FusedAttention> mlir::fa::analyzeFusedAttention(func::FuncOp func) {
  // The fused KV loop: carries (m, l, acc) and makes log2-unit scores.
  SmallVector<std::pair<scf::ForOp, QKScoresOp>> loops;
  func.walk([&](scf::ForOp loop) {
    if (loop.getNumRegionIterArgs() != 3)
      return;
    for (auto qk : loop.getBody()->getOps<QKScoresOp>())
      if (qk.getLog2Domain())
        loops.push_back({loop, qk});
  });
  if (loops.empty())
    return func.emitError(
        "the GPU lowering expects the fused online-softmax form: run "
        "fa-tile and fa-fuse-online-softmax first");
  if (loops.size() > 1)
    return func.emitError("the GPU lowering handles one attention per "
                          "function, found ")
           << loops.size();
  FusedAttention a;
  a.func = func;
  std::tie(a.kvLoop, a.scores) = loops.front();
  auto matmuls = a.kvLoop.getBody()->getOps<TileMatmulOp>();
  if (std::distance(matmuls.begin(), matmuls.end()) != 1)
    return a.kvLoop.emitError("fused attention loop without exactly one P·V");
  a.probsTimesValue = *matmuls.begin();
  a.headInputs = findHeadScoreInputs(a.kvLoop.getBody());
  for (HeadScoreInput input : a.headInputs) // (Value is not const-correct)
    if (a.kvLoop->isAncestor(input.l2Value.getParentBlock()->getParentOp()))
      return a.kvLoop.emitError("the per-head score input ")
             << input.values << " must be loop-invariant";
  if (failed(findVariantCaptures(a.kvLoop.getBody(), a.captures)))
    return failure();
  a.queryTile = a.scores.getQuery();
  a.keyTile = a.scores.getKey();
  a.valueTile = a.probsTimesValue.getRhs();
  if (a.kvLoop->isAncestor(a.queryTile.getParentBlock()->getParentOp()))
    return a.kvLoop.emitError("the query tile must be loop-invariant");

  // The Q-block loop around it yields the O (rank 4) and LSE (rank 3)
  // outputs with the epilogue's tiles inserted.
  auto queryLoop = dyn_cast<scf::ForOp>(a.kvLoop->getParentOp());
  if (!queryLoop)
    return a.kvLoop.emitError("the KV loop must sit in the Q-block loop");
  for (Value yielded : queryLoop.getBody()->getTerminator()->getOperands()) {
    auto rank = cast<RankedTensorType>(yielded.getType()).getRank();
    Value tile = storedTile(yielded);
    if (!tile)
      return queryLoop.emitError("Q-block loop yields an output it did not "
                                 "insert a tile into");
    (rank == 4 ? a.outputTile : a.lseRows) = tile;
  }
  if (!a.outputTile)
    return queryLoop.emitError("no output tile stored by the Q-block loop");
  // e4m3: V's descale scales O after the sweep, as a splat of a scalar
  // from outside the Q-block loop (fa-tile).
  a.scoreDescale = a.scores.getDescale();
  for (Operation *op = a.kvLoop->getNextNode(); op; op = op->getNextNode())
    if (auto splat = dyn_cast<tensor::SplatOp>(op))
      if (!queryLoop->isAncestor(splat.getInput().getParentBlock()->getParentOp()))
        a.valueDescale = splat.getInput();
  for (Value capture : a.captures)
    if (queryLoop->isAncestor(capture.getParentBlock()->getParentOp()))
      return queryLoop.emitError("a captured value must be defined outside "
                                 "the Q-block loop (a kernel parameter)");
  if (a.scoreDescale &&
      queryLoop->isAncestor(a.scoreDescale.getParentBlock()->getParentOp()))
    return a.scores.emitError("the descale must be defined outside the "
                              "Q-block loop");
  if (static_cast<bool>(a.scoreDescale) != static_cast<bool>(a.valueDescale))
    return a.scores.emitError("an f8E4M3FN attention needs both S's and O's "
                              "descales");
  return a;
}

AttentionKernelConfig mlir::fa::configOfTiles(QKScoresOp scores,
                                              Value valueTile, Block *body,
                                              bool alibi) {
  AttentionKernelConfig c;
  auto query = cast<RankedTensorType>(scores.getQuery().getType());
  auto key = cast<RankedTensorType>(scores.getKey().getType());
  auto value = cast<RankedTensorType>(valueTile.getType());
  c.elementType = query.getElementType();
  c.blockM = query.getDimSize(0);
  c.headDim = query.getDimSize(1);
  c.blockN = key.getDimSize(0);
  c.valueDim = value.getDimSize(1);
  c.mask = MaskAttr::get(scores.getContext(), MaskKind::None);
  for (auto mask : body->getOps<ApplyMaskOp>())
    c.mask = mask.getMask();
  c.scale = scores.getScale().convertToDouble();
  if (auto softcap = scores.getSoftcapAttr())
    c.softcap = softcap.getValueAsDouble();
  c.alibi = alibi;
  return c;
}

void mlir::fa::readNestTiling(Operation *loop, AttentionKernelConfig &c) {
  auto *dialect = loop->getContext()->getLoadedDialect<FADialect>();
  for (Operation *op = loop; op; op = op->getParentOp())
    if (TileAttr tile = dialect->getTileAttrHelper().getAttr(op)) {
      c.stages = tile.getStages();
      c.warps = tile.getWarps();
      c.scheduleOverrides = scheduleOverridesOf(tile.getSchedule());
      if (auto blocks = dialect->getBlockSparseAttrHelper().getAttr(op)) {
        c.sparseQBlock = blocks.getQBlock();
        c.sparseKvBlock = blocks.getKvBlock();
      }
      return;
    }
}

AttentionKernelConfig mlir::fa::configOf(FusedAttention a) {
  AttentionKernelConfig c = configOfTiles(a.scores, a.valueTile,
                                          a.kvLoop.getBody(),
                                          readsAlibiSlopes(a.headInputs));
  c.captures = llvm::to_vector(ValueRange(a.captures).getTypes());
  for (auto maskMod : a.kvLoop.getBody()->getOps<MaskModOp>())
    c.keyBand = analyzeMaskModKeyBand(maskMod.getBody());
  readNestTiling(a.kvLoop, c);
  return c;
}

AttentionGPUStrategy::~AttentionGPUStrategy() = default;

LogicalResult AttentionGPUStrategy::buildBackwardKernels(
    OpBuilder &, gpu::GPUModuleOp module, const AttentionBackward &,
    const AttentionKernelConfig &c, StringRef) const {
  return module.emitError() << unsupportedBackwardReason(c);
}

std::string mlir::fa::unsupported16BitOperands(StringRef chip,
                                               const AttentionKernelConfig &c) {
  auto headDimOk = [](int64_t d) { return d >= 8 && d <= 256 && d % 8 == 0; };
  if (!c.elementType.isF16() && !c.elementType.isBF16())
    return (chip + " kernels take f16 or bf16").str();
  if (!headDimOk(c.headDim) || !headDimOk(c.valueDim))
    return (chip + " kernels need D and Dv multiples of 8 from 8 to 256, got D=" +
            Twine(c.headDim) + " Dv=" + Twine(c.valueDim) +
            " (pad the head dim with zeros to the next multiple of 8)")
        .str();
  return "";
}

std::string mlir::fa::unsupportedBackwardOperands(StringRef chip,
                                                  const AttentionKernelConfig &c,
                                                  int64_t maxHeadDim) {
  std::string operands = unsupported16BitOperands(chip, c);
  if (!operands.empty() ||
      (c.headDim <= maxHeadDim && c.valueDim <= maxHeadDim))
    return operands;
  return ("the " + chip +
          " backward keeps dK and dV in registers and takes D and Dv up to " +
          Twine(maxHeadDim) + ", got D=" + Twine(c.headDim) +
          " Dv=" + Twine(c.valueDim))
      .str();
}

std::string mlir::fa::unsupportedSharedMemoryBudget(int64_t kilobytes) {
  if (kilobytes >= 0 && kilobytes <= kLargestSharedMemoryBudget / 1024)
    return "";
  return "the shared-memory budget must be 1 to " +
         std::to_string(kLargestSharedMemoryBudget / 1024) +
         " KB (the largest opt-in maximum of a supported chip; 0: the chip's "
         "default), got " + std::to_string(kilobytes) + " KB";
}

std::string mlir::fa::checkAttentionKernel(StringRef chip,
                                           const AttentionKernelConfig &c) {
  std::unique_ptr<AttentionGPUStrategy> strategy = createAttentionStrategy(chip);
  if (!strategy)
    return "unknown chip '" + chip.str() + "' (supported: " +
           registeredChips() + ")";
  return strategy->unsupportedReason(c);
}
