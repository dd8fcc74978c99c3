//===- AttentionBackward.cpp - reading fa-recompute-backward's nest -------===//
//
// Part of fa-mlir.
//
//===----------------------------------------------------------------------===//

#include "fa/Conversion/FAToGPU/BackwardKernel.h"
#include "fa/Dialect/FA/Utils/MaskUtils.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::fa;

FailureOr<AttentionBackward> mlir::fa::analyzeAttentionBackward(func::FuncOp func) {
  SmallVector<SoftmaxGradOp> grads;
  func.walk([&](SoftmaxGradOp op) { grads.push_back(op); });
  if (grads.size() != 1)
    return func.emitError("the GPU backward expects one fa-recompute-backward "
                          "loop nest per function, found ")
           << grads.size();
  AttentionBackward a;
  a.func = func;
  SoftmaxGradOp softmaxGrad = grads.front();
  a.queryLoop = dyn_cast<scf::ForOp>(softmaxGrad->getParentOp());
  if (!a.queryLoop || a.queryLoop.getNumRegionIterArgs() != 3)
    return softmaxGrad.emitError("fa.softmax_grad must sit in the Q-block loop "
                                 "carrying (dK_j, dV_j, dQ)");
  Block *body = a.queryLoop.getBody();
  for (auto op : body->getOps<QKScoresOp>())
    a.scores = op;
  auto yielded = body->getTerminator()->getOperands();
  for (auto matmul : body->getOps<TileMatmulOp>()) {
    if (matmul.getTransposeB())
      a.gradProbs = matmul;
    else if (matmul.getTransposeA() && matmul.getResult() == yielded[0])
      a.gradKey = matmul;
    else if (matmul.getTransposeA() && matmul.getResult() == yielded[1])
      a.gradValue = matmul;
    else if (!matmul.getTransposeA())
      a.gradQuery = matmul;
  }
  if (!a.scores || !a.gradProbs || !a.gradKey || !a.gradValue || !a.gradQuery)
    return a.queryLoop.emitError("the Q-block loop lacks S, dP, dK, dV or dQ's "
                                 "matmul in fa-recompute-backward's form");
  for (auto op : body->getOps<ExpShiftedOp>())
    a.lseRows = op.getShift();
  a.headInputs = findHeadScoreInputs(body);
  // The score_mod, its derivative and the mask_mod capture one list.
  if (failed(findVariantCaptures(body, a.captures)))
    return failure();
  a.queryTile = a.scores.getQuery();
  a.keyTile = a.scores.getKey();
  a.valueTile = a.gradProbs.getRhs();
  a.gradOutTile = a.gradProbs.getLhs();
  a.rowDotRows = softmaxGrad.getRowDot();
  a.gradQueryTile = a.gradQuery.getAcc();
  if (!a.lseRows)
    return a.queryLoop.emitError("the Q-block loop recomputes no P");
  for (Value tile : {a.keyTile, a.valueTile})
    if (a.queryLoop->isAncestor(tile.getParentBlock()->getParentOp()))
      return a.queryLoop.emitError("K and V tiles must be loop-invariant in the "
                                   "Q-block loop");
  func.walk([&](RowDotOp op) { a.rowDot = op; });
  // dQ's accumulator leaves the loop nest (group members, KV blocks, heads,
  // batches: a loop of one trip may have been folded away) and is cast once.
  Value gradQueryAcc = a.queryLoop.getResult(2);
  while (gradQueryAcc && !a.gradQueryCast) {
    Value outer;
    for (OpOperand &use : gradQueryAcc.getUses()) {
      if (auto cast = dyn_cast<arith::TruncFOp>(use.getOwner()))
        a.gradQueryCast = cast;
      else if (isa<scf::YieldOp>(use.getOwner()))
        if (auto loop = dyn_cast<scf::ForOp>(use.getOwner()->getParentOp()))
          outer = loop.getResult(use.getOperandNumber());
    }
    gradQueryAcc = outer;
  }
  if (!a.gradQueryCast)
    return a.queryLoop.emitError("dQ's accumulator is not cast to the input "
                                 "type after the loop nest");
  return a;
}

AttentionKernelConfig mlir::fa::configOf(const AttentionBackward &backward) {
  AttentionBackward a = backward; // op handles are not const-correct
  AttentionKernelConfig c = configOfTiles(
      a.scores, a.valueTile, a.queryLoop.getBody(), readsAlibiSlopes(a.headInputs));
  c.captures = llvm::to_vector(ValueRange(a.captures).getTypes());
  for (auto maskMod : a.queryLoop.getBody()->getOps<MaskModOp>())
    c.keyBand = analyzeMaskModKeyBand(maskMod.getBody());
  readNestTiling(a.queryLoop, c);
  return c;
}
