//===- GradientPatterns.cpp - the backward's elementwise math -------------===//
//
// Part of fa-mlir.
//
// The backward's per-element tile ops over the accumulator layout, as the
// forward's row ops are: dS = P ∘ (dP − D) reads one row value per
// element (the thread's row slots), the softcap's chain rule only its own
// elements. No shuffles: every value a thread needs is its own.
//
//===----------------------------------------------------------------------===//

#include "FragmentLowering.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

using namespace mlir;
using namespace mlir::fa;

namespace {

/// fa.softmax_grad: dS[i] = P[i] · (dP[i] − D[row(i)]).
struct SoftmaxGradLowering : OpConversionPattern<SoftmaxGradOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(SoftmaxGradOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (!isDistributed(op))
      return rewriter.notifyMatchFailure(op, "tiles without a GPU layout");
    Location loc = op.getLoc();
    FragmentShape shape = FragmentShape::of(op.getProbs().getType());
    SmallVector<Value> probs = unpackVector(rewriter, loc, adaptor.getProbs());
    SmallVector<Value> gradProbs =
        unpackVector(rewriter, loc, adaptor.getGradProbs());
    SmallVector<Value> rowDots = unpackVector(rewriter, loc, adaptor.getRowDot());
    for (auto [i, p] : llvm::enumerate(probs)) {
      Value centered = arith::SubFOp::create(rewriter, loc, gradProbs[i],
                                             rowDots[shape.rowSlot(i)]);
      p = arith::MulFOp::create(rewriter, loc, p, centered);
    }
    rewriter.replaceOp(op, packVector(rewriter, loc,
                                      adaptor.getProbs().getType(), probs));
    return success();
  }
};

/// fa.softcap_grad: dS[i] · (1 − (S[i] / cap)²), S the capped scores.
struct SoftcapGradLowering : OpConversionPattern<SoftcapGradOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(SoftcapGradOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (!isDistributed(op))
      return rewriter.notifyMatchFailure(op, "tiles without a GPU layout");
    Location loc = op.getLoc();
    auto f32 = [&](double v) {
      return arith::ConstantOp::create(rewriter, loc, rewriter.getF32FloatAttr(v));
    };
    Value inverseCap = f32(1.0 / op.getSoftcap().convertToDouble());
    Value one = f32(1.0);
    SmallVector<Value> grads = unpackVector(rewriter, loc, adaptor.getGrad());
    SmallVector<Value> scores = unpackVector(rewriter, loc, adaptor.getScores());
    for (auto [i, g] : llvm::enumerate(grads)) {
      Value t = arith::MulFOp::create(rewriter, loc, scores[i], inverseCap);
      Value slope = arith::SubFOp::create(
          rewriter, loc, one, arith::MulFOp::create(rewriter, loc, t, t));
      g = arith::MulFOp::create(rewriter, loc, g, slope);
    }
    rewriter.replaceOp(op, packVector(rewriter, loc,
                                      adaptor.getGrad().getType(), grads));
    return success();
  }
};

/// fa.row_dot: D[r] = Σ_e dO[r, e]·O[r, e] in f32, the thread's columns
/// then the quad's (two xor shuffles), as fa.row_sum.
struct RowDotLowering : OpConversionPattern<RowDotOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(RowDotOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (!isDistributed(op))
      return rewriter.notifyMatchFailure(op, "tiles without a GPU layout");
    Location loc = op.getLoc();
    FragmentShape shape = FragmentShape::of(op.getLhs().getType());
    if (shape.columnGroups > 1)
      return rewriter.notifyMatchFailure(op, "rows split over warp groups");
    Type f32 = rewriter.getF32Type();
    auto widen = [&](Value v) -> Value {
      return v.getType() == f32 ? v : arith::ExtFOp::create(rewriter, loc, f32, v);
    };
    SmallVector<Value> lhs = unpackVector(rewriter, loc, adaptor.getLhs());
    SmallVector<Value> rhs = unpackVector(rewriter, loc, adaptor.getRhs());
    SmallVector<Value> rows(2 * shape.mTiles);
    for (size_t i = 0; i < lhs.size(); ++i) {
      Value &row = rows[shape.rowSlot(i)];
      Value a = widen(lhs[i]), b = widen(rhs[i]);
      row = row ? arith::AddFOp::create(
                      rewriter, loc, row,
                      arith::MulFOp::create(rewriter, loc, a, b))
                      .getResult()
                : arith::MulFOp::create(rewriter, loc, a, b).getResult();
    }
    for (Value &row : rows)
      row = quadAllReduce(rewriter, loc, row, /*isMax=*/false);
    rewriter.replaceOp(op, packVector(rewriter, loc,
                                      getTypeConverter()->convertType(op.getType()),
                                      rows));
    return success();
  }
};

} // namespace

void mlir::fa::populateGradientPatterns(const TypeConverter &converter,
                                        RewritePatternSet &patterns) {
  patterns.add<RowDotLowering, SoftmaxGradLowering, SoftcapGradLowering>(
      converter, patterns.getContext());
}
