//===- ElementwisePatterns.cpp - arith/math and constants on fragments ----===//
//
// Part of fa-mlir.
//
// An elementwise op on distributed tiles is the same op on the per-thread
// vectors: the layouts of all operands agree (fa-gpu-distribute gives them
// one), so element i of every vector is the same (row, column). Only the
// transcendental ops are rewritten, to the NVVM approximations the kernel
// uses everywhere (math.log would become a libdevice call).
//
//===----------------------------------------------------------------------===//

#include "FragmentLowering.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

#include <cmath>

using namespace mlir;
using namespace mlir::fa;

static bool touchesFragments(Operation *op) {
  return llvm::any_of(op->getOperandTypes(), hasFragmentLayout) ||
         llvm::any_of(op->getResultTypes(), hasFragmentLayout);
}

namespace {

/// Splat constants with a layout become vector splats.
struct ConstantLowering : OpConversionPattern<arith::ConstantOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(arith::ConstantOp op, OpAdaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto dense = dyn_cast<DenseElementsAttr>(op.getValue());
    if (!dense || !dense.isSplat() || !hasFragmentLayout(op.getType()))
      return failure();
    auto type = cast<ShapedType>(getTypeConverter()->convertType(op.getType()));
    rewriter.replaceOpWithNewOp<arith::ConstantOp>(
        op, DenseElementsAttr::get(type, dense.getSplatValue<Attribute>()));
    return success();
  }
};

/// tensor.splat of a scalar (the e4m3 epilogue's V descale) to a
/// fragment: the same scalar in every element a thread holds.
struct SplatLowering : OpConversionPattern<tensor::SplatOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(tensor::SplatOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (!hasFragmentLayout(op.getType()))
      return failure();
    auto type = cast<VectorType>(getTypeConverter()->convertType(op.getType()));
    rewriter.replaceOpWithNewOp<vector::BroadcastOp>(op, type,
                                                     adaptor.getInput());
    return success();
  }
};

/// math.log: ln x = lg2.approx(x) · ln 2, per element.
struct LogLowering : OpConversionPattern<math::LogOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(math::LogOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value ln2 = arith::ConstantOp::create(rewriter, loc,
                                          rewriter.getF32FloatAttr(M_LN2));
    SmallVector<Value> values = unpackVector(rewriter, loc, adaptor.getOperand());
    for (Value &x : values)
      x = arith::MulFOp::create(rewriter, loc, fastLog2(rewriter, loc, x), ln2);
    rewriter.replaceOp(op, packVector(rewriter, loc,
                                      adaptor.getOperand().getType(), values));
    return success();
  }
};

/// arith.maxnumf (the running max): max.f32 per element through its NVVM
/// intrinsic; convert-gpu-to-nvvm would make the arith op (and
/// llvm.intr.maxnum) a libdevice call, and the PTX must not need libdevice.
struct MaxNumLowering : OpConversionPattern<arith::MaxNumFOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(arith::MaxNumFOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (!hasFragmentLayout(op.getType()))
      return failure();
    Location loc = op.getLoc();
    SmallVector<Value> lhs = unpackVector(rewriter, loc, adaptor.getLhs());
    SmallVector<Value> rhs = unpackVector(rewriter, loc, adaptor.getRhs());
    for (auto [x, y] : llvm::zip(lhs, rhs))
      x = fastMax(rewriter, loc, x, y);
    rewriter.replaceOp(op, packVector(rewriter, loc, adaptor.getLhs().getType(),
                                      lhs));
    return success();
  }
};

/// Any other arith/math op: the same op on the converted types.
struct ElementwiseLowering : ConversionPattern {
  ElementwiseLowering(const TypeConverter &converter, MLIRContext *ctx)
      : ConversionPattern(converter, MatchAnyOpTypeTag(), /*benefit=*/1, ctx) {}
  LogicalResult
  matchAndRewrite(Operation *op, ArrayRef<Value> operands,
                  ConversionPatternRewriter &rewriter) const override {
    StringRef dialect = op->getDialect()->getNamespace();
    if ((dialect != "arith" && dialect != "math") || op->getNumRegions() ||
        isa<arith::ConstantOp>(op) || !touchesFragments(op))
      return failure();
    SmallVector<Type> resultTypes;
    if (failed(getTypeConverter()->convertTypes(op->getResultTypes(),
                                                resultTypes)))
      return failure();
    OperationState state(op->getLoc(), op->getName(), operands, resultTypes,
                         op->getAttrs());
    rewriter.replaceOp(op, rewriter.create(state)->getResults());
    return success();
  }
};

} // namespace

void mlir::fa::populateElementwisePatterns(const TypeConverter &converter,
                                           RewritePatternSet &patterns) {
  MLIRContext *ctx = patterns.getContext();
  patterns.add<ConstantLowering, ElementwiseLowering, SplatLowering>(converter,
                                                                     ctx);
  patterns.add<LogLowering, MaxNumLowering>(converter, ctx, /*benefit=*/2);
}
