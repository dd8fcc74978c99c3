//===- DistributedMath.cpp - the fused loop's math, placed in a kernel ----===//
//
// Part of fa-mlir.
//
// The L2 loop body is cloned op by op into the kernel's loop; only the
// tensor types change (a #fa.fragment layout on every 1-D and 2-D tile),
// plus three things a distributed tile needs:
//
// * tiles read from shared memory (K, V) come from the strategy, at the
//   point it chooses (after its wait for the copy);
// * the running row sum l stays quad-partial through the loop (each lane
//   sums its own columns; one quad reduction in the epilogue instead of two
//   shuffles per row per KV tile), with an fa.convert_layout wherever a
//   full row value is needed;
// * P is rounded to the MMA's input type as soon as it exists, so its f32
//   copy dies before the V wait (fewer live registers across the barrier).
//
//===----------------------------------------------------------------------===//

#include "fa/Conversion/FAToGPU/KernelSkeleton.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/Matchers.h"

#include "llvm/ADT/SetVector.h"

#include <cmath>

using namespace mlir;
using namespace mlir::fa;

LogicalResult mlir::fa::placeInKernel(Operation *clone, const GridCoords &grid,
                                      Value keyStart, const IRMapping &mapping,
                                      Operation *original) {
  // Masks, biases and variants are written against the kernel's coordinates.
  auto placeAt = [&](auto tileOp) {
    tileOp.getQueryOffsetMutable().assign(grid.queryStart);
    tileOp.getKeyOffsetMutable().assign(keyStart);
    tileOp.getQueryLenMutable().assign(grid.queryLen);
    tileOp.getKeyLenMutable().assign(grid.keyLen);
  };
  // A variant sees the kernel's batch and query head, and its captures as
  // the kernel's parameters.
  auto placeVariant = [&](auto variant) -> LogicalResult {
    placeAt(variant);
    variant.getBatchMutable().assign(grid.batch);
    variant.getHeadMutable().assign(grid.head);
    SmallVector<Value> captures;
    for (Value capture : variant.getCaptures()) {
      Value value = mapping.lookupOrNull(capture);
      if (!value)
        return original->emitError("the GPU lowering has no kernel parameter "
                                   "for a captured value");
      captures.push_back(value);
    }
    variant.getCapturesMutable().assign(captures);
    return success();
  };
  if (auto mask = dyn_cast<ApplyMaskOp>(clone))
    placeAt(mask);
  if (auto bias = dyn_cast<AlibiBiasOp>(clone))
    placeAt(bias);
  if (auto variant = dyn_cast<ScoreModOp>(clone))
    return placeVariant(variant);
  if (auto variant = dyn_cast<MaskModOp>(clone))
    return placeVariant(variant);
  return success();
}

LogicalResult mlir::fa::mapUnmaskedScores(Operation *mask, Value scores,
                                          IRMapping &mapping) {
  if (!scores)
    return mask->emitError("the GPU lowering cannot place the masked scores");
  mapping.map(mask->getResult(0), scores);
  return success();
}

Attribute mlir::fa::splatOf(Value value) {
  DenseElementsAttr dense;
  if (matchPattern(value, m_Constant(&dense)) && dense.isSplat())
    return dense.getSplatValue<Attribute>();
  if (auto fill = value.getDefiningOp<linalg::FillOp>()) {
    Attribute scalar;
    if (matchPattern(fill.getInputs()[0], m_Constant(&scalar)))
      return scalar;
  }
  return Attribute();
}

Value mlir::fa::scaleTile(OpBuilder &b, Location loc, Value tile, FloatAttr factor) {
  auto type = cast<RankedTensorType>(tile.getType());
  return arith::MulFOp::create(
      b, loc, tile,
      arith::ConstantOp::create(b, loc, DenseElementsAttr::get(type, factor)));
}

static bool isRows(Value v) {
  auto type = dyn_cast<RankedTensorType>(v.getType());
  return type && type.getRank() == 1;
}

DistributedMath::DistributedMath(const FusedAttention &fused,
                                 FragmentLayoutAttr layout)
    : attention(fused), layout(layout) {
  Block *body = attention.kvLoop.getBody();
  // The ops that only slice and pad K and V out of the global tensors.
  SmallVector<Value> worklist = {attention.keyTile, attention.valueTile};
  while (!worklist.empty()) {
    Operation *def = worklist.pop_back_val().getDefiningOp();
    if (!def || def->getBlock() != body || !tileFeeders.insert(def).second)
      continue;
    worklist.append(def->operand_begin(), def->operand_end());
  }
  findQuadPartialRows();
  findDeferredScores();
}

void DistributedMath::findQuadPartialRows() {
  Block *body = attention.kvLoop.getBody();
  // The running sum stays quad-partial: row_sum results, their products
  // with full rows, sums of partials, and a carried value that starts at 0
  // and whose update is partial. Optimistic fixed point: assume every
  // zero-started carried value is partial, drop those whose update is not.
  auto yielded = body->getTerminator()->getOperands();
  llvm::SmallSetVector<unsigned, 4> assumed;
  for (auto [i, init] : llvm::enumerate(attention.kvLoop.getInitArgs())) {
    auto zero = dyn_cast_or_null<FloatAttr>(splatOf(init));
    if (zero && zero.getValue().isZero() && isRows(init))
      assumed.insert(i);
  }
  while (true) {
    quadPartial.clear();
    for (unsigned i : assumed)
      quadPartial.insert(attention.kvLoop.getRegionIterArgs()[i]);
    for (Operation &op : *body) {
      if (isa<RowSumOp>(op))
        quadPartial.insert(op.getResult(0));
      if (!isa<arith::MulFOp, arith::AddFOp>(op) || !isRows(op.getResult(0)))
        continue;
      int partials = llvm::count_if(
          op.getOperands(), [&](Value v) { return quadPartial.contains(v); });
      if ((isa<arith::MulFOp>(op) && partials == 1) ||
          (isa<arith::AddFOp>(op) && partials == 2))
        quadPartial.insert(op.getResult(0));
    }
    auto consistent = llvm::make_filter_range(
        assumed, [&](unsigned i) { return quadPartial.contains(yielded[i]); });
    llvm::SmallSetVector<unsigned, 4> kept(consistent.begin(), consistent.end());
    if (kept.size() == assumed.size())
      break;
    assumed = std::move(kept);
  }
  for (unsigned i : assumed)
    quadPartial.insert(attention.kvLoop.getResult(i));
}

llvm::DenseSet<Value>
mlir::fa::scoresHeldUnscaled(QKScoresOp scores,
                             llvm::function_ref<bool(OpOperand &)> mayRead) {
  SmallVector<Value> worklist = {scores.getResult()};
  llvm::DenseSet<Value> held;
  while (!worklist.empty()) {
    Value value = worklist.pop_back_val();
    held.insert(value);
    for (OpOperand &use : value.getUses()) {
      // The masks keep -inf and pass the rest through, in any unit.
      if (isa<ApplyMaskOp, MaskModOp>(use.getOwner()) &&
          use.getOperandNumber() == 0)
        worklist.push_back(use.getOwner()->getResult(0));
      else if (!mayRead(use))
        return {};
    }
  }
  return held;
}

void DistributedMath::findDeferredScores() {
  // S = c·q·k in log2 units (c = scale·log2 e) is held as q·k, and a
  // softcapped S = c'·tanh(scale·q·k / cap) as the tanh (c' = cap·log2 e),
  // when only the mask (which keeps -inf), the row max (which commutes with
  // c > 0: one multiply per row after it) and the exponent (c folds into its
  // FFMA) read it. ALiBi adds to the scaled value: no deferral. e4m3
  // scores defer their descale d with c (c·d, d > 0, is one multiply per
  // kernel) unless softcapped: tanh needs d inside. One FFMA a score instead
  // of an FMUL and an FFMA, for one register (c·d) live across the loop.
  QKScoresOp scores = attention.scores;
  double scale = scores.getScale().convertToDouble();
  if (!scores.getLog2Domain() || !(scale > 0))
    return;
  double factor = scale * M_LOG2E;
  if (auto softcap = scores.getSoftcapAttr())
    factor = softcap.getValueAsDouble() * M_LOG2E;
  llvm::DenseSet<Value> held = scoresHeldUnscaled(scores, [](OpOperand &use) {
    Operation *user = use.getOwner();
    return isa<RowMaxOp>(user) ||
           (isa<ExpShiftedOp>(user) && use.getOperandNumber() == 0);
  });
  if (held.empty())
    return;
  deferredScale = std::move(held);
  scoreDescaleDeferred = scores.getDescale() && !scores.getSoftcapAttr();
  scoreScale =
      FloatAttr::get(Float32Type::get(scores.getContext()), factor);
}

Type DistributedMath::distribute(Value l2Value) const {
  auto tensor = dyn_cast<RankedTensorType>(l2Value.getType());
  if (!tensor || tensor.getEncoding() || tensor.getRank() < 1 ||
      tensor.getRank() > 2)
    return l2Value.getType();
  Attribute encoding =
      tensor.getRank() == 1
          ? layout.withQuadPartial(quadPartial.contains(l2Value))
          : deferredScale.contains(l2Value)
                ? layout.withDeferredScale(scoreScale, scoreDescaleDeferred)
                : layout.withDeferredScale(FloatAttr());
  return RankedTensorType::get(tensor.getShape(), tensor.getElementType(),
                               encoding);
}

SmallVector<Value> DistributedMath::initialLoopValues(OpBuilder &b,
                                                      Location loc) {
  SmallVector<Value> values;
  for (auto [init, carried] : llvm::zip(attention.kvLoop.getInitArgs(),
                                        attention.kvLoop.getRegionIterArgs())) {
    auto type = cast<RankedTensorType>(distribute(carried));
    values.push_back(arith::ConstantOp::create(
        b, loc, DenseElementsAttr::get(type, splatOf(init))));
  }
  return values;
}

Value DistributedMath::lookup(OpBuilder &b, Value l2Value) {
  if (Value mapped = mapping.lookupOrNull(l2Value))
    return mapped;
  Value value;
  if (l2Value == attention.keyTile || l2Value == attention.valueTile) {
    value = tileFor(b, l2Value);
  } else if (Attribute splat = splatOf(l2Value)) {
    // Constants (and filled tiles) are rebuilt with the distributed type.
    Type type = distribute(l2Value);
    auto tensor = dyn_cast<RankedTensorType>(type);
    value = arith::ConstantOp::create(
        b, l2Value.getLoc(),
        tensor ? cast<TypedAttr>(DenseElementsAttr::get(tensor, splat))
               : cast<TypedAttr>(splat));
  }
  if (value)
    mapping.map(l2Value, value);
  return value;
}

Value DistributedMath::fullRows(OpBuilder &b, Value value) {
  Value &full = fullRowsOf[value];
  if (!full) {
    auto type = cast<RankedTensorType>(value.getType());
    auto partial = cast<FragmentLayoutAttr>(type.getEncoding());
    full = ConvertLayoutOp::create(
        b, value.getLoc(),
        RankedTensorType::get(type.getShape(), type.getElementType(),
                              partial.withQuadPartial(false)),
        value);
  }
  return full;
}

LogicalResult DistributedMath::cloneOp(OpBuilder &b, Operation *op) {
  if (tileFeeders.contains(op) || op->hasTrait<OpTrait::ConstantLike>())
    return success(); // tiles come from the strategy; constants on demand
  // An unmasked tile skips the mask; a full block of a block mask the
  // mask_mod as well (all its elements are visible).
  if (tilesUnmasked && (isa<MaskModOp>(op) ? unmaskedTilesListed
                                           : isa<ApplyMaskOp>(op) &&
                                                 !unmaskedTilesListed))
    return mapUnmaskedScores(op, lookup(b, op->getOperand(0)), mapping);
  bool partialResult =
      op->getNumResults() == 1 && quadPartial.contains(op->getResult(0));
  IRMapping operands;
  // A mask's coordinates are the kernel's, set after cloning (by operand
  // role: M and N may be one constant in the L2 IR).
  unsigned firstCoordinate =
      isa<ApplyMaskOp, ScoreModOp, MaskModOp>(op) ? 1
      : isa<AlibiBiasOp>(op)                      ? 2
                                                  : op->getNumOperands();
  for (Value operand : op->getOperands().take_front(firstCoordinate)) {
    Value value = lookup(b, operand);
    if (!value)
      return op->emitError("the GPU lowering cannot place this op's operand "
                           "in a kernel (defined outside the fused loop)");
    if (quadPartial.contains(operand) && !partialResult)
      value = fullRows(b, value);
    operands.map(operand, value);
  }
  // P goes to the MMA's 16-bit type as soon as it is computed.
  if (auto matmul = dyn_cast<TileMatmulOp>(op)) {
    Type mmaType = matmul.getRhs().getType().getElementType();
    Value probs = operands.lookup(matmul.getLhs());
    auto probsType = cast<RankedTensorType>(probs.getType());
    if (probsType.getElementType().isF32() && mmaType.getIntOrFloatBitWidth() == 16) {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointAfterValue(probs);
      operands.map(matmul.getLhs(),
                   arith::TruncFOp::create(b, op->getLoc(),
                                           probsType.clone(mmaType), probs)
                       .getResult());
    }
  }
  Operation *clone;
  if (isa<arith::MulFOp>(op) && partialResult) {
    // partial · full: one row factor per (quad-partial) row value.
    Value lhs = operands.lookup(op->getOperand(0));
    Value rhs = operands.lookup(op->getOperand(1));
    if (quadPartial.contains(op->getOperand(1)))
      std::swap(lhs, rhs);
    clone = ScaleRowsOp::create(b, op->getLoc(), lhs.getType(), lhs, rhs);
  } else {
    clone = b.clone(*op, operands);
  }
  for (auto [original, cloned] :
       llvm::zip(op->getResults(), clone->getResults())) {
    cloned.setType(distribute(original));
    mapping.map(original, cloned);
  }
  if (failed(placeInKernel(clone, *grid, keyStart, mapping, op)))
    return failure();
  if (auto mask = dyn_cast<ApplyMaskOp>(clone); mask && tilesUnmasked)
    mask.setMaskAttr(MaskAttr::get(b.getContext(), MaskKind::None)); // a full block
  return success();
}

void DistributedMath::mapRunTimeScalars() {
  if (attention.scoreDescale && scoreDescale)
    mapping.map(attention.scoreDescale, scoreDescale);
  if (attention.valueDescale && valueDescale)
    mapping.map(attention.valueDescale, valueDescale);
  for (auto [input, value] : llvm::zip(attention.headInputs, headInputValues))
    mapping.map(input.l2Value, value);
  for (auto [capture, value] : llvm::zip(attention.captures, captureValues))
    mapping.map(capture, value);
}

void DistributedMath::beginBody(const GridCoords &coords, Value tileStart,
                                ValueRange carried, Value queryTile) {
  grid = &coords;
  keyStart = tileStart;
  // Each iteration's values are its own: forget the previous body's.
  mapping.clear();
  fullRowsOf.clear();
  mapping.map(attention.queryTile, queryTile);
  mapRunTimeScalars();
  Block *body = attention.kvLoop.getBody();
  mapping.map(body->getArguments().drop_front(),
              carried.take_front(body->getNumArguments() - 1));
}

FailureOr<SmallVector<Value>>
DistributedMath::emitLoopBody(OpBuilder &b, const GridCoords &coords,
                              Value tileStart, ValueRange carried,
                              Value queryTile, TileSource keyTile,
                              TileSource valueTile) {
  beginBody(coords, tileStart, carried, queryTile);
  tileFor = [&](OpBuilder &builder, Value tile) {
    return tile == attention.keyTile ? keyTile(builder) : valueTile(builder);
  };
  Block *body = attention.kvLoop.getBody();
  for (Operation &op : body->without_terminator())
    if (failed(cloneOp(b, &op)))
      return failure();
  SmallVector<Value> yielded;
  for (Value value : body->getTerminator()->getOperands())
    yielded.push_back(lookup(b, value));
  return yielded;
}

/// An asynchronous MMA's result, waited for with `pending` groups in flight.
static Value awaitMma(OpBuilder &b, Location loc, Value mma, int64_t pending) {
  return MmaWaitOp::create(b, loc, mma.getType(), mma,
                           b.getI64IntegerAttr(pending));
}

unsigned DistributedMath::accumulatorIndex() const {
  for (OpOperand &use : attention.probsTimesValue->getUses())
    if (isa<scf::YieldOp>(use.getOwner()))
      return use.getOperandNumber();
  llvm_unreachable("analyzeFusedAttention checked that P·V is carried");
}

RankedTensorType DistributedMath::deferredProbsType() const {
  TileMatmulOp matmul = attention.probsTimesValue; // op handles: not const
  auto probs = cast<RankedTensorType>(distribute(matmul.getLhs()));
  return probs.clone(matmul.getRhs().getType().getElementType());
}

FailureOr<SmallVector<Value>> DistributedMath::emitPipelinedBody(
    OpBuilder &b, const GridCoords &coords, Value tileStart, ValueRange carried,
    Value queryTile, TileSource keyTile, const DeferredProduct &previous,
    const PipelineHooks &hooks) {
  beginBody(coords, tileStart, carried, queryTile);
  tileFor = [&](OpBuilder &builder, Value) { return keyTile(builder); };
  Block *body = attention.kvLoop.getBody();
  TileMatmulOp matmul = attention.probsTimesValue;
  Value accArg = body->getArgument(1 + accumulatorIndex());
  Value pendingProduct;
  for (Operation &op : body->without_terminator()) {
    if (&op == matmul.getOperation())
      continue; // P_j·V_j: the next body's, or emitDeferredProduct's
    // The deferred P·V must have landed before the accumulator is read.
    if (pendingProduct && llvm::is_contained(op.getOperands(), accArg)) {
      mapping.map(accArg, awaitMma(b, op.getLoc(), pendingProduct, 0));
      pendingProduct = Value();
      if (hooks.productDone)
        hooks.productDone(b);
    }
    if (&op != attention.scores.getOperation()) {
      if (failed(cloneOp(b, &op)))
        return failure();
      continue;
    }
    // S_j, then the deferred P·V, both in flight; S_j is waited for with
    // the P·V group still running.
    if (hooks.beforeIssue)
      hooks.beforeIssue(b);
    if (failed(cloneOp(b, &op)))
      return failure();
    Value scores = mapping.lookup(op.getResult(0));
    if (previous.probs) {
      IRMapping operands;
      operands.map(matmul.getLhs(), previous.probs);
      operands.map(matmul.getRhs(), previous.valueTile(b));
      operands.map(matmul.getAcc(), mapping.lookup(accArg));
      auto product = cast<TileMatmulOp>(b.clone(*matmul, operands));
      product.getResult().setType(
          cast<RankedTensorType>(mapping.lookup(accArg).getType()));
      pendingProduct = product.getResult();
    }
    if (hooks.afterIssue)
      hooks.afterIssue(b);
    mapping.map(op.getResult(0),
                awaitMma(b, op.getLoc(), scores, previous.probs ? 1 : 0));
    if (hooks.scoresDone)
      hooks.scoresDone(b);
  }
  if (pendingProduct)
    return matmul.emitError("the GPU lowering found no rescale of the "
                            "accumulator to wait for P·V before");
  SmallVector<Value> yielded;
  for (Value value : body->getTerminator()->getOperands())
    yielded.push_back(lookup(b, value == matmul.getResult() ? matmul.getAcc()
                                                              : value));
  Value probs = lookup(b, matmul.getLhs());
  auto probsType = cast<RankedTensorType>(probs.getType());
  if (probsType != deferredProbsType())
    probs = arith::TruncFOp::create(b, matmul.getLoc(), deferredProbsType(), probs);
  yielded.push_back(probs);
  return yielded;
}

SmallVector<Value>
DistributedMath::emitDeferredProduct(OpBuilder &b, ValueRange carried,
                                     const DeferredProduct &last,
                                     const PipelineHooks &hooks) {
  SmallVector<Value> values(carried.drop_back());
  unsigned acc = accumulatorIndex();
  if (hooks.beforeIssue)
    hooks.beforeIssue(b);
  TileMatmulOp matmul = attention.probsTimesValue;
  IRMapping operands;
  operands.map(matmul.getLhs(), last.probs);
  operands.map(matmul.getRhs(), last.valueTile(b));
  operands.map(matmul.getAcc(), values[acc]);
  Operation *product = b.clone(*matmul, operands);
  product->getResult(0).setType(values[acc].getType());
  if (hooks.afterIssue)
    hooks.afterIssue(b);
  values[acc] = awaitMma(b, matmul.getLoc(), product->getResult(0), 0);
  if (hooks.productDone)
    hooks.productDone(b);
  return values;
}

FailureOr<std::pair<Value, Value>>
DistributedMath::emitEpilogue(OpBuilder &b, ValueRange loopResults) {
  mapping.clear();
  fullRowsOf.clear();
  mapping.map(attention.kvLoop.getResults(), loopResults);
  mapRunTimeScalars();
  // The epilogue: what the stored tiles depend on, after the KV loop.
  Block *block = attention.kvLoop->getBlock();
  llvm::DenseSet<Operation *> needed;
  SmallVector<Value> worklist = {attention.outputTile};
  if (attention.lseRows)
    worklist.push_back(attention.lseRows);
  while (!worklist.empty()) {
    Operation *def = worklist.pop_back_val().getDefiningOp();
    if (!def || def->getBlock() != block ||
        !attention.kvLoop->isBeforeInBlock(def) || !needed.insert(def).second)
      continue;
    worklist.append(def->operand_begin(), def->operand_end());
  }
  for (Operation &op : *block)
    if (needed.contains(&op) && failed(cloneOp(b, &op)))
      return failure();
  Value output = lookup(b, attention.outputTile);
  Value lse = attention.lseRows ? lookup(b, attention.lseRows) : Value();
  if (lse && quadPartial.contains(attention.lseRows))
    lse = fullRows(b, lse);
  return std::make_pair(output, lse);
}
