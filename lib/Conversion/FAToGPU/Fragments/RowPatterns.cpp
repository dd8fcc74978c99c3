//===- RowPatterns.cpp - row reductions, exp, rescale over fragments ------===//
//
// Part of fa-mlir.
//
// The online softmax's per-row steps. A thread holds 2·m_tiles rows; the
// four lanes of a quad share each row, so a row reduction is the thread's
// own elements first, then a two-step xor butterfly.
//
//===----------------------------------------------------------------------===//

#include "FragmentLowering.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace mlir::fa;

/// What the registers of a score tile held unscaled must be multiplied by
/// (c, or c·d with the scores' deferred descale d); null if not deferred.
/// `held` is the original (unconverted) tile: d is found on the
/// fa.qk_scores it comes from, through masks and MMA waits.
static FailureOr<Value> deferredFactor(ConversionPatternRewriter &rewriter,
                                       Location loc, Value held) {
  auto layout = dyn_cast_or_null<FragmentLayoutAttr>(
      cast<RankedTensorType>(held.getType()).getEncoding());
  if (!layout || !layout.getDeferredScale())
    return Value();
  Value descale; // found before anything is built: failing leaves no IR
  if (layout.getDeferredDescale()) {
    Value scores = held;
    while (Operation *def = scores.getDefiningOp()) {
      if (!isa<ApplyMaskOp, MmaWaitOp>(def))
        break;
      scores = def->getOperand(0);
    }
    auto qk = scores.getDefiningOp<QKScoresOp>();
    if (!qk || !qk.getDescale())
      return failure();
    descale = rewriter.getRemappedValue(qk.getDescale());
  }
  Value factor = arith::ConstantOp::create(rewriter, loc, layout.getDeferredScale());
  // Loop-invariant (the descales are read once per tile of the grid):
  // LLVM hoists the product out of the KV loop.
  return descale ? arith::MulFOp::create(rewriter, loc, factor, descale).getResult()
                 : factor;
}

namespace {

/// fa.row_max: the thread's maximum per row, then across the quad.
struct RowMaxLowering : OpConversionPattern<RowMaxOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(RowMaxOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (!isDistributed(op))
      return rewriter.notifyMatchFailure(op, "tiles without a GPU layout");
    Location loc = op.getLoc();
    FragmentShape shape = FragmentShape::of(op.getInput().getType());
    if (shape.columnGroups > 1)
      return rewriter.notifyMatchFailure(op, "rows split over warp groups");
    // Held unscaled (S / c, c > 0): the max of S is c · the max held.
    FailureOr<Value> deferred = deferredFactor(rewriter, loc, op.getInput());
    if (failed(deferred))
      return rewriter.notifyMatchFailure(op, "deferred descale without scores");
    SmallVector<Value> scores = unpackVector(rewriter, loc, adaptor.getInput());
    double minusInf = -std::numeric_limits<double>::infinity();
    SmallVector<Value> rows(2 * shape.mTiles,
                            arith::ConstantOp::create(
                                rewriter, loc, rewriter.getF32FloatAttr(minusInf)));
    for (auto [i, s] : llvm::enumerate(scores)) {
      Value &row = rows[shape.rowSlot(i)];
      row = arith::MaximumFOp::create(rewriter, loc, row, s);
    }
    for (Value &row : rows) {
      row = quadAllReduce(rewriter, loc, row, /*isMax=*/true);
      if (*deferred)
        row = arith::MulFOp::create(rewriter, loc, row, *deferred);
    }
    rewriter.replaceOp(op, packVector(rewriter, loc,
                                      getTypeConverter()->convertType(op.getType()),
                                      rows));
    return success();
  }
};

/// fa.row_sum: the thread's partial sum per row; across the quad only when
/// the result is not quad-partial.
struct RowSumLowering : OpConversionPattern<RowSumOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(RowSumOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (!isDistributed(op))
      return rewriter.notifyMatchFailure(op, "tiles without a GPU layout");
    Location loc = op.getLoc();
    FragmentShape shape = FragmentShape::of(op.getInput().getType());
    if (shape.columnGroups > 1)
      return rewriter.notifyMatchFailure(op, "rows split over warp groups");
    auto layout = cast<FragmentLayoutAttr>(op.getType().getEncoding());
    SmallVector<Value> rows(2 * shape.mTiles);
    for (auto [i, p] : llvm::enumerate(unpackVector(rewriter, loc, adaptor.getInput()))) {
      Value &row = rows[shape.rowSlot(i)];
      row = row ? arith::AddFOp::create(rewriter, loc, row, p).getResult() : p;
    }
    if (!layout.getQuadPartial())
      for (Value &row : rows)
        row = quadAllReduce(rewriter, loc, row, /*isMax=*/false);
    rewriter.replaceOp(op, packVector(rewriter, loc,
                                      getTypeConverter()->convertType(op.getType()),
                                      rows));
    return success();
  }
};

/// fa.convert_layout (quad-partial rows to full rows): the quad's sum.
struct ConvertLayoutLowering : OpConversionPattern<ConvertLayoutOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(ConvertLayoutOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (!isDistributed(op))
      return rewriter.notifyMatchFailure(op, "tiles without a GPU layout");
    SmallVector<Value> rows = unpackVector(rewriter, op.getLoc(), adaptor.getInput());
    for (Value &row : rows)
      row = quadAllReduce(rewriter, op.getLoc(), row, /*isMax=*/false);
    rewriter.replaceOp(op, packVector(rewriter, op.getLoc(),
                                      adaptor.getInput().getType(), rows));
    return success();
  }
};

/// fa.exp_shifted: exp2(x - m[row]) with m = -inf read as 0, so that a
/// masked score (x = -inf) gives exactly 0 and no -inf - -inf appears.
struct ExpShiftedLowering : OpConversionPattern<ExpShiftedOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(ExpShiftedOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (!isDistributed(op))
      return rewriter.notifyMatchFailure(op, "tiles without a GPU layout");
    Location loc = op.getLoc();
    FailureOr<Value> deferred = deferredFactor(rewriter, loc, op.getInput());
    if (failed(deferred))
      return rewriter.notifyMatchFailure(op, "deferred descale without scores");
    auto f32 = [&](double v) {
      return arith::ConstantOp::create(rewriter, loc, rewriter.getF32FloatAttr(v));
    };
    SmallVector<Value> shifts = unpackVector(rewriter, loc, adaptor.getShift());
    Value minusInf = f32(-std::numeric_limits<double>::infinity());
    auto contract = arith::FastMathFlags::contract;
    for (Value &m : shifts) {
      Value empty = arith::CmpFOp::create(rewriter, loc,
                                          arith::CmpFPredicate::OEQ, m, minusInf);
      m = arith::SelectOp::create(rewriter, loc, empty, f32(0.0), m);
      // Natural units (the backward's P = exp(S - LSE)): the row's shift
      // in log2 units once, so that each element is x·log2(e) - m·log2(e),
      // one FFMA, rather than a subtract and a multiply.
      if (!op.getBase2())
        m = arith::MulFOp::create(rewriter, loc, m, f32(M_LOG2E));
    }
    auto inputType = cast<RankedTensorType>(op.getInput().getType());
    FragmentShape shape = FragmentShape::of(inputType);
    SmallVector<Value> values = unpackVector(rewriter, loc, adaptor.getInput());
    // An input held unscaled folds its scale into the exponent:
    // x·c - m is one FFMA (contracted multiply-subtract).
    Value scale = *deferred;
    if (!op.getBase2())
      scale = scale ? arith::MulFOp::create(rewriter, loc, scale, f32(M_LOG2E))
                          .getResult()
                    : f32(M_LOG2E);
    for (auto [i, x] : llvm::enumerate(values)) {
      Value shift = shifts[inputType.getRank() == 2 ? shape.rowSlot(i) : i];
      Value scaled =
          scale ? arith::MulFOp::create(rewriter, loc, x, scale, contract) : x;
      Value exponent =
          arith::SubFOp::create(rewriter, loc, scaled, shift, contract);
      x = fastExp2(rewriter, loc, exponent);
    }
    rewriter.replaceOp(op, packVector(rewriter, loc,
                                      adaptor.getInput().getType(), values));
    return success();
  }
};

/// fa.scale_rows: every element of a row times the row's factor.
struct ScaleRowsLowering : OpConversionPattern<ScaleRowsOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(ScaleRowsOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (!isDistributed(op))
      return rewriter.notifyMatchFailure(op, "tiles without a GPU layout");
    Location loc = op.getLoc();
    FragmentShape shape = FragmentShape::of(op.getInput().getType());
    SmallVector<Value> factors = unpackVector(rewriter, loc, adaptor.getFactor());
    SmallVector<Value> values = unpackVector(rewriter, loc, adaptor.getInput());
    bool rows = op.getInput().getType().getRank() == 1;
    for (auto [i, x] : llvm::enumerate(values))
      x = arith::MulFOp::create(rewriter, loc, x,
                                factors[rows ? i : shape.rowSlot(i)]);
    rewriter.replaceOp(op, packVector(rewriter, loc,
                                      adaptor.getInput().getType(), values));
    return success();
  }
};

} // namespace

void mlir::fa::populateRowPatterns(const TypeConverter &converter,
                                   RewritePatternSet &patterns) {
  patterns.add<RowMaxLowering, RowSumLowering, ConvertLayoutLowering,
               ExpShiftedLowering, ScaleRowsLowering>(converter,
                                                      patterns.getContext());
}
