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
#include "mlir/Dialect/SCF/IR/SCF.h"

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

} // namespace

void mlir::fa::populateScoreModPatterns(const TypeConverter &converter,
                                        RewritePatternSet &patterns) {
  patterns.add<ApplyMaskLowering>(converter, patterns.getContext());
}
