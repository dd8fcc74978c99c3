//===- ScoreModPatterns.cpp - masks over fragments ------------------------===//
//
// Part of fa-mlir.
//
// Score modifications that depend on where an element is: its query row
// and key column, from the fragment layout. The mask semantics are
// MaskUtils' (the same functions the CPU lowering and fa-tile use).
//
//===----------------------------------------------------------------------===//

#include "FragmentLowering.h"

#include "fa/Dialect/FA/Utils/MaskUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

#include <cmath>

#include <limits>

using namespace mlir;
using namespace mlir::fa;

namespace {

/// fa.apply_mask: -inf where the key is invisible, only on tiles the mask
/// cuts (MaskUtils' classification); other tiles pass through untouched.
struct ApplyMaskLowering : OpConversionPattern<ApplyMaskOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(ApplyMaskOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (!isDistributed(op))
      return rewriter.notifyMatchFailure(op, "tiles without a GPU layout");
    Location loc = op.getLoc();
    auto type = op.getScores().getType();
    FragmentShape shape = FragmentShape::of(type);
    auto layout = cast<FragmentLayoutAttr>(type.getEncoding());
    Value needMask = buildTileNeedsMask(
        rewriter, loc, op.getMask(), adaptor.getQueryOffset(),
        adaptor.getKeyOffset(), type.getDimSize(0), type.getDimSize(1),
        adaptor.getQueryLen(), adaptor.getKeyLen());
    Value scores = adaptor.getScores();
    auto masked = scf::IfOp::create(
        rewriter, loc, needMask,
        [&](OpBuilder &b, Location loc) {
          ThreadFragment thread(b, loc, layout);
          Value minusInf = arith::ConstantOp::create(
              b, loc, b.getF32FloatAttr(-std::numeric_limits<float>::infinity()));
          SmallVector<Value> values = unpackVector(b, loc, scores);
          for (auto [i, s] : llvm::enumerate(values)) {
            Value row = arith::AddIOp::create(b, loc, adaptor.getQueryOffset(),
                                              thread.row(shape.rowSlot(i)));
            Value col = arith::AddIOp::create(b, loc, adaptor.getKeyOffset(),
                                              thread.column(shape, i));
            Value visible = buildKeyVisible(b, loc, op.getMask(), row, col,
                                            adaptor.getQueryLen(),
                                            adaptor.getKeyLen());
            s = arith::SelectOp::create(b, loc, visible, s, minusInf);
          }
          scf::YieldOp::create(b, loc,
                               packVector(b, loc, scores.getType(), values));
        },
        [&](OpBuilder &b, Location loc) { scf::YieldOp::create(b, loc, scores); });
    rewriter.replaceOp(op, masked.getResults());
    return success();
  }
};

/// fa.alibi_bias: S - c·slope·|i + N - M - j| per element, c = log2(e) in
/// log2 units (DESIGN.md's ALiBi, bottom-right aligned like the masks).
struct AlibiBiasLowering : OpConversionPattern<AlibiBiasOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(AlibiBiasOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (!isDistributed(op))
      return rewriter.notifyMatchFailure(op, "tiles without a GPU layout");
    Location loc = op.getLoc();
    auto type = op.getScores().getType();
    FragmentShape shape = FragmentShape::of(type);
    ThreadFragment thread(rewriter, loc,
                          cast<FragmentLayoutAttr>(type.getEncoding()));
    double c = op.getLog2Domain() ? M_LOG2E : 1.0;
    Value slope = arith::MulFOp::create(
        rewriter, loc, adaptor.getSlope(),
        arith::ConstantOp::create(rewriter, loc, rewriter.getF32FloatAttr(-c)));
    // distance = (q0 + row + N - M) - (k0 + column): the thread's part of
    // it once per row (as f32, exact below 2^24), then per element only the
    // column's constant offset, |.| and one FFMA.
    auto toFloat = [&](Value index) {
      Value asInt = arith::IndexCastOp::create(rewriter, loc,
                                               rewriter.getI32Type(), index);
      return arith::SIToFPOp::create(rewriter, loc, rewriter.getF32Type(), asInt);
    };
    Value firstKeyOfThread = arith::AddIOp::create(
        rewriter, loc, adaptor.getKeyOffset(), thread.column(shape, 0));
    Value shift = arith::SubIOp::create(
        rewriter, loc,
        arith::AddIOp::create(rewriter, loc, adaptor.getQueryOffset(),
                              arith::SubIOp::create(rewriter, loc,
                                                    adaptor.getKeyLen(),
                                                    adaptor.getQueryLen())),
        firstKeyOfThread);
    SmallVector<Value> rowDistance;
    for (int64_t slot = 0; slot < 2 * shape.mTiles; ++slot)
      rowDistance.push_back(toFloat(
          arith::AddIOp::create(rewriter, loc, shift, thread.row(slot))));
    SmallVector<Value> values = unpackVector(rewriter, loc, adaptor.getScores());
    for (auto [i, s] : llvm::enumerate(values)) {
      double columnOffset = 8 * shape.nTile(i) + shape.columnParity(i);
      Value distance = arith::SubFOp::create(
          rewriter, loc, rowDistance[shape.rowSlot(i)],
          arith::ConstantOp::create(rewriter, loc,
                                    rewriter.getF32FloatAttr(columnOffset)));
      // |d| as max(d, -d) and a contracted multiply-add (one FFMA): math.absf
      // and math.fma (and their LLVM intrinsics) become libdevice calls in
      // convert-gpu-to-nvvm, and the PTX must not need libdevice.
      Value magnitude = fastMax(
          rewriter, loc, distance, arith::NegFOp::create(rewriter, loc, distance));
      auto contract = arith::FastMathFlags::contract;
      s = arith::AddFOp::create(
          rewriter, loc,
          arith::MulFOp::create(rewriter, loc, magnitude, slope, contract), s,
          contract);
    }
    rewriter.replaceOp(op, packVector(rewriter, loc, adaptor.getScores().getType(),
                                      values));
    return success();
  }
};

} // namespace

void mlir::fa::populateScoreModPatterns(const TypeConverter &converter,
                                        RewritePatternSet &patterns) {
  patterns.add<ApplyMaskLowering, AlibiBiasLowering>(converter,
                                                     patterns.getContext());
}
