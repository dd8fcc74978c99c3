//===- ExpandF8Casts.cpp - fa-expand-f8-casts -----------------------------===//
//
// Part of fa-mlir.
//
// e4m3fn (f8E4M3FN): 1 sign bit, 4 exponent bits (bias 7), 3 mantissa
// bits; exponent 0 is subnormal (m · 2^-9), S.1111.111 is NaN, there is no
// infinity, the largest finite is 448. The CPU has no such type and LLVM
// none either, so the casts the fp8 path needs become integer ops on the
// bit pattern (arith.bitcast to i8), as arith-expand does for bf16.
//
//===----------------------------------------------------------------------===//

#include "fa/Conversion/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/WalkPatternRewriteDriver.h"

namespace mlir {
namespace fa {
#define GEN_PASS_DEF_FAEXPANDF8CASTS
#include "fa/Conversion/Passes.h.inc"
} // namespace fa
} // namespace mlir

using namespace mlir;

namespace {

bool isE4M3(Type type) { return isa<Float8E4M3FNType>(type); }

struct Builder {
  OpBuilder &b;
  Location loc;
  Value i32(int64_t v) { return arith::ConstantIntOp::create(b, loc, v, 32); }
  Value f32(double v) {
    return arith::ConstantOp::create(b, loc, b.getF32FloatAttr(v));
  }
  Value andI(Value x, int64_t m) { return arith::AndIOp::create(b, loc, x, i32(m)); }
  Value orI(Value x, Value y) { return arith::OrIOp::create(b, loc, x, y); }
  Value shl(Value x, int64_t s) { return arith::ShLIOp::create(b, loc, x, i32(s)); }
  Value shr(Value x, int64_t s) { return arith::ShRUIOp::create(b, loc, x, i32(s)); }
  Value eq(Value x, int64_t v) {
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, x, i32(v));
  }
  Value select(Value c, Value t, Value f) {
    return arith::SelectOp::create(b, loc, c, t, f);
  }
  Value asF32(Value bits) {
    return arith::BitcastOp::create(b, loc, b.getF32Type(), bits);
  }
  Value asI32(Value f) {
    return arith::BitcastOp::create(b, loc, b.getI32Type(), f);
  }
};

/// f8E4M3FN -> f32, exact; then to the op's type (f64 exactly; f16 and
/// bf16 hold every e4m3 value too).
struct ExpandExtF : OpRewritePattern<arith::ExtFOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(arith::ExtFOp op,
                                PatternRewriter &rewriter) const override {
    if (!isE4M3(op.getIn().getType()))
      return rewriter.notifyMatchFailure(op, "not a scalar f8E4M3FN source");
    Builder e{rewriter, op.getLoc()};
    Value byte = arith::BitcastOp::create(rewriter, e.loc, rewriter.getI8Type(),
                                          op.getIn());
    Value w = arith::ExtUIOp::create(rewriter, e.loc, rewriter.getI32Type(), byte);
    Value sign = e.shl(e.andI(w, 0x80), 24);
    Value exponent = e.andI(e.shr(w, 3), 0xF);
    Value mantissa = e.andI(w, 0x7);
    // Normal: 2^(e - 7) · 1.m, rebiased to f32's 127.
    Value normal = e.orI(
        sign, e.orI(e.shl(arith::AddIOp::create(rewriter, e.loc, exponent, e.i32(120)), 23),
                    e.shl(mantissa, 20)));
    // Subnormal: m · 2^-9, exact in f32.
    Value magnitude = arith::MulFOp::create(
        rewriter, e.loc,
        arith::UIToFPOp::create(rewriter, e.loc, rewriter.getF32Type(), mantissa),
        e.f32(1.0 / 512.0));
    Value subnormal = e.orI(sign, e.asI32(magnitude));
    Value bits = e.select(e.eq(exponent, 0), subnormal, normal);
    bits = e.select(e.eq(e.andI(w, 0x7F), 0x7F), e.i32(0x7FC00000), bits);
    Value value = e.asF32(bits);
    Type result = op.getType();
    if (result.getIntOrFloatBitWidth() > 32)
      value = arith::ExtFOp::create(rewriter, e.loc, result, value);
    else if (!result.isF32())
      value = arith::TruncFOp::create(rewriter, e.loc, result, value);
    rewriter.replaceOp(op, value);
    return success();
  }
};

/// f32 (or another float, through f32) -> f8E4M3FN, round to nearest even,
/// saturating to ±448; NaN -> NaN.
struct ExpandTruncF : OpRewritePattern<arith::TruncFOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(arith::TruncFOp op,
                                PatternRewriter &rewriter) const override {
    if (!isE4M3(op.getType()))
      return rewriter.notifyMatchFailure(op, "not a scalar f8E4M3FN result");
    Builder e{rewriter, op.getLoc()};
    Value x = op.getIn();
    if (x.getType().getIntOrFloatBitWidth() > 32)
      x = arith::TruncFOp::create(rewriter, e.loc, rewriter.getF32Type(), x);
    else if (!x.getType().isF32())
      x = arith::ExtFOp::create(rewriter, e.loc, rewriter.getF32Type(), x);
    Value u = e.asI32(x);
    Value sign = e.andI(e.shr(u, 24), 0x80);
    Value isNaN = arith::CmpFOp::create(rewriter, e.loc, arith::CmpFPredicate::UNO, x, x);
    // |x| clamped to 448: saturation, and rounding can no longer overflow.
    Value magnitude = arith::MinimumFOp::create(
        rewriter, e.loc, math::AbsFOp::create(rewriter, e.loc, x), e.f32(448.0));
    Value a = e.asI32(magnitude);
    // Normal (|x| >= 2^-6): keep 3 of f32's 23 mantissa bits, rounding to
    // nearest even, then rebias the exponent (127 -> 7).
    Value lsb = e.andI(e.shr(a, 20), 1);
    Value rounded = e.shr(
        arith::AddIOp::create(rewriter, e.loc, a,
                              arith::AddIOp::create(rewriter, e.loc, lsb, e.i32(0x7FFFF))),
        20);
    Value normal = arith::SubIOp::create(rewriter, e.loc, rounded, e.i32(120 << 3));
    // Subnormal (|x| < 2^-6): m = roundeven(|x| · 2^9), 8 meaning 2^-6
    // (whose code, 0x08, is the smallest normal's).
    Value steps = math::RoundEvenOp::create(
        rewriter, e.loc,
        arith::MulFOp::create(rewriter, e.loc, magnitude, e.f32(512.0)));
    Value subnormal =
        arith::FPToUIOp::create(rewriter, e.loc, rewriter.getI32Type(), steps);
    Value isSubnormal = arith::CmpFOp::create(
        rewriter, e.loc, arith::CmpFPredicate::OLT, magnitude, e.f32(1.0 / 64.0));
    Value code = e.orI(sign, e.select(isSubnormal, subnormal, normal));
    code = e.select(isNaN, e.i32(0x7F), code);
    Value byte = arith::TruncIOp::create(rewriter, e.loc, rewriter.getI8Type(), code);
    rewriter.replaceOp(op, arith::BitcastOp::create(rewriter, e.loc, op.getType(), byte));
    return success();
  }
};

struct FAExpandF8CastsPass : fa::impl::FAExpandF8CastsBase<FAExpandF8CastsPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    fa::populateExpandF8CastPatterns(patterns);
    walkAndApplyPatterns(getOperation(), std::move(patterns));
  }
};

} // namespace

void mlir::fa::populateExpandF8CastPatterns(RewritePatternSet &patterns) {
  patterns.add<ExpandExtF, ExpandTruncF>(patterns.getContext());
}
