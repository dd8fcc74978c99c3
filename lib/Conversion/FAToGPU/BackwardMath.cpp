//===- BackwardMath.cpp - the backward's Q-block step, placed in a kernel -===//
//
// Part of fa-mlir.
//
// The Q-block loop body of fa-recompute-backward is cloned op by op; only
// tensor types change (#fa.fragment, block_m rows or block_n rows), plus
// what a distributed tile needs:
//
// * tiles read from memory (Q, dO, K, V, the LSE and D rows) come from the
//   strategy, at the point it chooses;
// * the operands read transposed (P by dV += Pᵀ·dO, dS by dK += dSᵀ·Q) are
//   rounded to the MMA type and handed to the strategy, which writes them
//   to shared memory and returns the readable tile;
// * dQ_i = dS·K_j starts from zero in registers and the strategy adds it
//   into the f32 accumulator (the L2 IR's slice of dQ and its
//   insert_slice are that accumulator's, not tiles); dK's and dQ's common
//   α is applied once at the end (deferredGradientScale);
// * S is held as q·k where only the mask and the exponent read it, its
//   scale folded into the exponent's FFMA (findUnscaledScores).
//
//===----------------------------------------------------------------------===//

#include "fa/Conversion/FAToGPU/BackwardKernel.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

#include <limits>

using namespace mlir;
using namespace mlir::fa;

BackwardMath::BackwardMath(const AttentionBackward &bw,
                           FragmentLayoutAttr queryRows,
                           FragmentLayoutAttr keyRows,
                           FragmentLayoutAttr gradQueryRows)
    : backward(bw), queryRows(queryRows), keyRows(keyRows),
      gradQueryRows(gradQueryRows ? gradQueryRows : queryRows) {
  Block *body = backward.queryLoop.getBody();
  // The math: what dK_j, dV_j and dQ_i depend on in the body, up to the
  // tiles (which the strategy provides). Slicing, padding and dQ's
  // insert_slice are the global tensors' business, not the kernel's.
  llvm::DenseSet<Value> tiles = {backward.queryTile,  backward.keyTile,
                                 backward.valueTile,  backward.gradOutTile,
                                 backward.lseRows,    backward.rowDotRows,
                                 backward.gradQueryTile};
  auto yielded = body->getTerminator()->getOperands();
  SmallVector<Value> worklist = {yielded[0], yielded[1],
                                 backward.gradQuery.getResult()};
  while (!worklist.empty()) {
    Value value = worklist.pop_back_val();
    Operation *def = value.getDefiningOp();
    if (tiles.contains(value) || !def || def->getBlock() != body ||
        !math.insert(def).second)
      continue;
    if (isa<ApplyMaskOp, ScoreModOp, MaskModOp>(def))
      worklist.push_back(def->getOperand(0)); // coordinates are the kernel's
    else if (isa<AlibiBiasOp>(def))
      worklist.append({def->getOperand(0), def->getOperand(1)});
    else
      worklist.append(def->operand_begin(), def->operand_end());
  }
  // α is applied once at the end where dK's and dQ's share it; otherwise
  // it folds into an f32 operand every matmul of which applies the same α.
  gradientScale = deferredGradientScale(backward);
  for (TileMatmulOp matmul : {backward.gradKey, backward.gradQuery,
                              backward.gradValue}) {
    Value lhs = matmul.getLhs();
    if (foldedAlpha.count(lhs))
      continue;
    if (gradientScale && lhs == backward.gradKey.getLhs()) {
      foldedAlpha[lhs] = FloatAttr();
      continue;
    }
    FloatAttr common = matmul.getAlphaAttr();
    for (Operation *user : lhs.getUsers()) {
      auto other = dyn_cast<TileMatmulOp>(user);
      if (!other || other.getLhs() != lhs || other.getAlphaAttr() != common)
        common = FloatAttr();
    }
    foldedAlpha[lhs] = common;
  }
  findUnscaledScores();
  for (unsigned i : {0u, 1u})
    keyRowValues.insert(backward.queryLoop.getRegionIterArgs()[i]);
  keyRowValues.insert(backward.gradKey.getResult());
  keyRowValues.insert(backward.gradValue.getResult());
}

FloatAttr mlir::fa::deferredGradientScale(const AttentionBackward &backward) {
  AttentionBackward a = backward; // op handles are not const-correct
  FloatAttr alpha = a.gradKey.getAlphaAttr();
  if (!alpha || a.gradQuery.getAlphaAttr() != alpha ||
      a.gradKey.getLhs() != a.gradQuery.getLhs())
    return FloatAttr();
  return alpha;
}

bool BackwardMath::dropsAlpha(TileMatmulOp matmul) const {
  AttentionBackward a = backward;
  if (gradientScale && (matmul == a.gradKey || matmul == a.gradQuery))
    return true;
  // Folded: only where the operand was rounded (with α) for an MMA.
  return roundedOf.count(matmul.getLhs()) &&
         static_cast<bool>(foldedAlpha.lookup(matmul.getLhs()));
}

SmallVector<Value> BackwardMath::finalGradients(OpBuilder &b, Location loc,
                                                ValueRange gradients) const {
  SmallVector<Value> values(gradients.begin(), gradients.end());
  if (gradientScale)
    values[0] = scaleTile(b, loc, values[0], gradientScale);
  return values;
}

void BackwardMath::findUnscaledScores() {
  // P = exp(S - LSE) with S = scale·q·k: held as q·k, P is
  // exp2(q·k·(scale·log2 e) - LSE·log2 e), one FFMA, as the forward's
  // deferred scale (DistributedMath::findDeferredScores). The mask keeps
  // -inf; nothing else may read S (softcap's gradient and ALiBi do).
  QKScoresOp scores = backward.scores;
  double scale = scores.getScale().convertToDouble();
  if (!(scale > 0) || scores.getSoftcapAttr() || scores.getDescale() ||
      scores.getLog2Domain())
    return;
  llvm::DenseSet<Value> held = scoresHeldUnscaled(scores, [](OpOperand &use) {
    auto exp = dyn_cast<ExpShiftedOp>(use.getOwner());
    return exp && use.getOperandNumber() == 0 && !exp.getBase2();
  });
  if (held.empty())
    return;
  unscaledScores = std::move(held);
  scoreScale = FloatAttr::get(Float32Type::get(scores.getContext()), scale);
}

Type BackwardMath::distribute(Value l2Value) const {
  auto tensor = dyn_cast<RankedTensorType>(l2Value.getType());
  if (!tensor || tensor.getEncoding() || tensor.getRank() < 1 ||
      tensor.getRank() > 2)
    return l2Value.getType();
  FragmentLayoutAttr layout =
      keyRowValues.contains(l2Value) ? keyRows : queryRows;
  TileMatmulOp gradQuery = backward.gradQuery; // not const-correct
  if (l2Value == backward.gradQueryTile || l2Value == gradQuery.getResult())
    layout = gradQueryRows;
  if (unscaledScores.contains(l2Value))
    layout = layout.withDeferredScale(scoreScale);
  return RankedTensorType::get(tensor.getShape(), tensor.getElementType(),
                               layout);
}

Value BackwardMath::loadQueryRows(OpBuilder &b, Location loc,
                                  const KernelArgs &args, const GridCoords &at,
                                  Value l2Rows, bool predicated) const {
  bool lse = l2Rows == backward.lseRows;
  StringRef name = lse ? "lse" : "delta";
  double padding = lse ? std::numeric_limits<double>::infinity() : 0.0;
  auto load = LoadFragmentOp::create(
      b, loc, cast<RankedTensorType>(distribute(l2Rows)), args[name],
      at.tensorBase(b, loc, args, name, at.head), at.queryStart, at.queryLen,
      Value(), b.getF32FloatAttr(padding));
  load.setPredicated(predicated);
  return load;
}

SmallVector<Value> BackwardMath::initialGradients(OpBuilder &b, Location loc) {
  SmallVector<Value> values;
  for (unsigned i : {0u, 1u}) {
    Value carried = backward.queryLoop.getRegionIterArgs()[i];
    auto type = cast<RankedTensorType>(distribute(carried));
    values.push_back(arith::ConstantOp::create(
        b, loc, DenseElementsAttr::get(type, b.getF32FloatAttr(0.0))));
  }
  return values;
}

Value BackwardMath::lookup(OpBuilder &b, Value l2Value) {
  if (Value mapped = mapping.lookupOrNull(l2Value))
    return mapped;
  Value value;
  Attribute splat = splatOf(l2Value);
  if (l2Value == backward.gradQueryTile) {
    splat = b.getF32FloatAttr(0.0); // dQ_i starts from zero in registers
  } else if (!splat &&
             llvm::is_contained({backward.queryTile, backward.keyTile,
                                 backward.valueTile, backward.gradOutTile,
                                 backward.lseRows, backward.rowDotRows},
                                l2Value)) {
    value = sources->tile(b, l2Value);
  }
  if (!value && splat) {
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

LogicalResult BackwardMath::cloneOp(OpBuilder &b, Operation *op) {
  // Tiles come from the strategy; constants and filled tiles are made on
  // demand (lookup), and so are never cloned with their empty tensors.
  if (!math.contains(op) || op->hasTrait<OpTrait::ConstantLike>() ||
      isa<tensor::EmptyOp>(op) ||
      (op->getNumResults() == 1 && splatOf(op->getResult(0))))
    return success();
  if (tilesUnmasked && isa<ApplyMaskOp>(op))
    return mapUnmaskedScores(op, lookup(b, op->getOperand(0)), mapping);
  unsigned firstCoordinate = isa<ApplyMaskOp, ScoreModOp, MaskModOp>(op) ? 1
                             : isa<AlibiBiasOp>(op)                      ? 2
                                                    : op->getNumOperands();
  IRMapping operands;
  for (Value operand : op->getOperands().take_front(firstCoordinate)) {
    Value value = lookup(b, operand);
    if (!value)
      return op->emitError("the GPU backward cannot place this op's operand "
                           "in a kernel (defined outside the Q-block loop)");
    operands.map(operand, value);
  }
  auto matmul = dyn_cast<TileMatmulOp>(op);
  FloatAttr folded;
  if (matmul) {
    // An f32 left operand (P, dS) is rounded to the MMA's type once, times
    // the α its matmuls share; a transposed one goes through shared memory
    // and its matmul waits for the end of the body.
    Type mmaType = matmul.getRhs().getType().getElementType();
    Value lhs = operands.lookup(matmul.getLhs());
    auto lhsType = cast<RankedTensorType>(lhs.getType());
    if (lhsType.getElementType().isF32() && !mmaType.isF32()) {
      folded = foldedAlpha.lookup(matmul.getLhs());
      Value &rounded = roundedOf[matmul.getLhs()];
      if (!rounded) {
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPointAfterValue(lhs);
        Value scaled = lhs;
        if (folded)
          scaled = scaleTile(b, op->getLoc(), lhs, folded);
        rounded = arith::TruncFOp::create(b, op->getLoc(),
                                          lhsType.clone(mmaType), scaled);
      }
      lhs = rounded;
    }
    bool fromShared =
        sources->gradQueryFromShared && op == backward.gradQuery.getOperation();
    if (matmul.getTransposeA() || fromShared) {
      Value &tile = sharedOf[matmul.getLhs()];
      if (!tile)
        tile = sources->transposedOperand(b, matmul, lhs);
      operands.map(matmul.getLhs(), tile);
      deferred.push_back({op, operands});
      return success();
    }
    operands.map(matmul.getLhs(), lhs);
  }
  Operation *clone = b.clone(*op, operands);
  if (matmul && dropsAlpha(matmul))
    cast<TileMatmulOp>(clone).removeAlphaAttr();
  for (auto [original, cloned] : llvm::zip(op->getResults(), clone->getResults())) {
    cloned.setType(distribute(original));
    mapping.map(original, cloned);
  }
  if (failed(placeInKernel(clone, *grid, keyStart, mapping, op)))
    return failure();
  if (op == backward.gradQuery.getOperation())
    sources->accumulateGradQuery(b, clone->getResult(0), /*part=*/0);
  return success();
}

LogicalResult BackwardMath::emitGradQueryParts(OpBuilder &b, Operation *op,
                                               const IRMapping &operands) {
  auto matmul = cast<TileMatmulOp>(op);
  int64_t parts = sources->gradQueryParts;
  auto whole = cast<RankedTensorType>(distribute(op->getResult(0)));
  int64_t columns = whole.getDimSize(1);
  if (matmul.getRhs() != backward.keyTile || matmul.getTransposeB() ||
      columns % parts != 0)
    return op->emitError("dQ_i in column parts needs dS·K_j with K_j's "
                         "columns a multiple of the parts");
  auto partType = RankedTensorType::get({whole.getDimSize(0), columns / parts},
                                        whole.getElementType(), whole.getEncoding());
  for (int64_t part = 0; part < parts; ++part) {
    IRMapping partOperands = operands;
    partOperands.map(matmul.getRhs(), sources->keyColumns(b, part));
    partOperands.map(matmul.getAcc(),
                     arith::ConstantOp::create(
                         b, op->getLoc(),
                         DenseElementsAttr::get(partType, b.getF32FloatAttr(0.0))));
    Operation *clone = b.clone(*op, partOperands);
    if (dropsAlpha(matmul))
      cast<TileMatmulOp>(clone).removeAlphaAttr();
    clone->getResult(0).setType(partType);
    sources->accumulateGradQuery(b, clone->getResult(0), part);
  }
  return success();
}

FailureOr<SmallVector<Value>>
BackwardMath::emitBody(OpBuilder &b, const GridCoords &coords, Value tileStart,
                       ValueRange gradients, const Sources &bodySources) {
  grid = &coords;
  keyStart = tileStart;
  sources = &bodySources;
  if (gradQueryRows != queryRows && !sources->gradQueryFromShared) {
    backward.gradQuery->emitError(
        "dQ_i in a warp layout of its own needs dS read from shared memory");
    return failure();
  }
  mapping.clear();
  roundedOf.clear();
  deferred.clear();
  sharedOf.clear();
  Block *body = backward.queryLoop.getBody();
  mapping.map(body->getArguments().slice(1, 2), gradients);
  for (auto [input, value] : llvm::zip(backward.headInputs, headInputValues))
    mapping.map(input.l2Value, value);
  for (auto [capture, value] : llvm::zip(backward.captures, captureValues))
    mapping.map(capture, value);
  for (Operation &op : body->without_terminator())
    if (failed(cloneOp(b, &op)))
      return failure();
  // The matmuls that read written tiles, after one barrier for all.
  if (!deferred.empty())
    sources->sharedWritten(b);
  for (auto &[op, operands] : deferred) {
    auto matmul = cast<TileMatmulOp>(op);
    if (op == backward.gradQuery.getOperation() && sources->gradQueryParts > 1) {
      if (failed(emitGradQueryParts(b, op, operands)))
        return failure();
      continue;
    }
    Operation *clone = b.clone(*op, operands);
    if (dropsAlpha(matmul))
      cast<TileMatmulOp>(clone).removeAlphaAttr();
    clone->getResult(0).setType(distribute(op->getResult(0)));
    mapping.map(op->getResult(0), clone->getResult(0));
    if (op == backward.gradQuery.getOperation())
      sources->accumulateGradQuery(b, clone->getResult(0), /*part=*/0);
  }
  SmallVector<Value> yielded;
  for (Value value : body->getTerminator()->getOperands().take_front(2))
    yielded.push_back(lookup(b, value));
  return yielded;
}
