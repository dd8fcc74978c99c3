//===- FATileOps.cpp - fa tile-level (L2) operations ----------------------===//
//
// Part of fa-mlir.
//
// Shape rules of the tile ops. Element and rank constraints are in ODS.
//
//===----------------------------------------------------------------------===//

#include "fa/Dialect/FA/IR/FAOps.h"
#include "fa/Dialect/FA/IR/ModRegions.h"

using namespace mlir;
using namespace mlir::fa;

static ArrayRef<int64_t> shapeOf(Value value) {
  return cast<RankedTensorType>(value.getType()).getShape();
}

/// "<what> (<got>) does not match <expected>" as an op error.
static LogicalResult mismatch(Operation *op, StringRef what, int64_t got,
                              int64_t expected) {
  return op->emitOpError() << what << " (" << got << ") does not match "
                           << expected;
}

LogicalResult QKScoresOp::verify() {
  ArrayRef<int64_t> q = shapeOf(getQuery()), k = shapeOf(getKey()),
                    s = shapeOf(getScores());
  if (q[1] != k[1])
    return mismatch(*this, "D of key", k[1], q[1]);
  if (s[0] != q[0])
    return mismatch(*this, "rows of scores", s[0], q[0]);
  if (s[1] != k[0])
    return mismatch(*this, "columns of scores", s[1], k[0]);
  if (getQuery().getType().getElementType() !=
      getKey().getType().getElementType())
    return emitOpError("query and key tiles must have one element type");
  bool fp8 = isa<Float8E4M3FNType>(getQuery().getType().getElementType());
  if (fp8 && !getDescale())
    return emitOpError("f8E4M3FN tiles need a descale (Q's times K's)");
  if (!fp8 && getDescale())
    return emitOpError("a descale is only for f8E4M3FN tiles");
  if (auto softcap = getSoftcapAttr(); softcap &&
                                       !(softcap.getValueAsDouble() > 0.0))
    return emitOpError("softcap must be > 0 when present");
  return success();
}

/// Row reductions: [R, C] -> [R].
static LogicalResult verifyRowReduction(Operation *op, Value input,
                                        Value result) {
  if (shapeOf(result)[0] != shapeOf(input)[0])
    return mismatch(op, "rows of result", shapeOf(result)[0],
                    shapeOf(input)[0]);
  return success();
}

LogicalResult RowMaxOp::verify() {
  return verifyRowReduction(*this, getInput(), getResult());
}

LogicalResult RowSumOp::verify() {
  return verifyRowReduction(*this, getInput(), getResult());
}

LogicalResult RowDotOp::verify() {
  if (shapeOf(getLhs()) != shapeOf(getRhs()))
    return emitOpError("operand tiles must have one shape");
  return verifyRowReduction(*this, getLhs(), getResult());
}

/// Row-broadcast operands: a [R] vector next to an [R, ...] tile.
static LogicalResult verifyRowOperand(Operation *op, Value tile, Value row,
                                      StringRef name) {
  if (shapeOf(row)[0] != shapeOf(tile)[0])
    return mismatch(op, (Twine("length of ") + name).str(), shapeOf(row)[0],
                    shapeOf(tile)[0]);
  return success();
}

LogicalResult ExpShiftedOp::verify() {
  return verifyRowOperand(*this, getInput(), getShift(), "shift");
}

LogicalResult ScaleRowsOp::verify() {
  return verifyRowOperand(*this, getInput(), getFactor(), "factor");
}

LogicalResult SoftmaxGradOp::verify() {
  if (getProbs().getType() != getGradProbs().getType())
    return emitOpError("probs and grad_probs must have one type");
  return verifyRowOperand(*this, getProbs(), getRowDot(), "row_dot");
}

LogicalResult TileMatmulOp::verify() {
  ArrayRef<int64_t> a = shapeOf(getLhs()), b = shapeOf(getRhs()),
                    c = shapeOf(getAcc());
  int64_t rows = getTransposeA() ? a[1] : a[0];
  int64_t inner = getTransposeA() ? a[0] : a[1];
  int64_t innerB = getTransposeB() ? b[1] : b[0];
  int64_t cols = getTransposeB() ? b[0] : b[1];
  if (inner != innerB)
    return mismatch(*this, "contraction size of rhs", innerB, inner);
  if (c[0] != rows)
    return mismatch(*this, "rows of acc", c[0], rows);
  if (c[1] != cols)
    return mismatch(*this, "columns of acc", c[1], cols);
  // e4m3 MMAs take both operands in e4m3.
  if (isa<Float8E4M3FNType>(getLhs().getType().getElementType()) !=
      isa<Float8E4M3FNType>(getRhs().getType().getElementType()))
    return emitOpError("f8E4M3FN operands come in pairs (both or neither)");
  return success();
}

LogicalResult ScoreModOp::verifyRegions() {
  FailureOr<SmallVector<Type>> types =
      tileCaptureTypes(*this, getCaptures(), getBody(), ModKind::Score);
  if (failed(types) || failed(verifyCaptureTypes(*this, *types)))
    return failure();
  return verifyModRegion(*this, getBody(), ModKind::Score, *types,
                         /*optional=*/false);
}

LogicalResult MaskModOp::verifyRegions() {
  FailureOr<SmallVector<Type>> types =
      tileCaptureTypes(*this, getCaptures(), getBody(), ModKind::Mask);
  if (failed(types) || failed(verifyCaptureTypes(*this, *types)))
    return failure();
  return verifyModRegion(*this, getBody(), ModKind::Mask, *types,
                         /*optional=*/false);
}
