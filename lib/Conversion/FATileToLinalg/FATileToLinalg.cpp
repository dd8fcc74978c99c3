//===- FATileToLinalg.cpp - fa tile ops to linalg.generic -----------------===//
//
// Part of fa-mlir.
//
// Every fa tile op says one line of the algorithm on one tile; here each
// becomes the linalg.generic that computes it, which the CPU path then
// bufferizes and lowers to loops.
//
//===----------------------------------------------------------------------===//

#include "fa/Conversion/Passes.h"
#include "fa/Dialect/FA/IR/FAOps.h"
#include "fa/Dialect/FA/IR/ModRegions.h"
#include "fa/Dialect/FA/Utils/MaskUtils.h"
#include "fa/Dialect/FA/Utils/PipelineInput.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/WalkPatternRewriteDriver.h"

#include <cmath>
#include <limits>

namespace mlir {
namespace fa {
#define GEN_PASS_DEF_CONVERTFATILETOLINALG
#include "fa/Conversion/Passes.h.inc"
} // namespace fa
} // namespace mlir

using namespace mlir;
using namespace mlir::fa;

namespace {

using utils::IteratorType;
constexpr IteratorType kPar = IteratorType::parallel;
constexpr IteratorType kRed = IteratorType::reduction;

Value f32Constant(OpBuilder &b, Location loc, double value) {
  return arith::ConstantOp::create(b, loc, b.getF32FloatAttr(value));
}

/// An f32 tensor of `shape` filled with `value` (the init of a reduction).
Value filledTensor(OpBuilder &b, Location loc, ArrayRef<int64_t> shape,
                   double value) {
  Value empty = tensor::EmptyOp::create(b, loc, shape, b.getF32Type());
  return linalg::FillOp::create(b, loc, f32Constant(b, loc, value), empty)
      .getResult(0);
}

/// Widens an f16/bf16/f8E4M3FN element to f32 inside a generic body.
Value toF32(OpBuilder &b, Location loc, Value element) {
  if (element.getType().isF32())
    return element;
  return arith::ExtFOp::create(b, loc, b.getF32Type(), element);
}

/// The affine map (d0, ..., dn-1) -> (dims...).
AffineMap dimsMap(MLIRContext *ctx, unsigned numDims,
                  ArrayRef<unsigned> dims) {
  SmallVector<AffineExpr> exprs;
  for (unsigned d : dims)
    exprs.push_back(getAffineDimExpr(d, ctx));
  return AffineMap::get(numDims, 0, exprs, ctx);
}

/// An elementwise generic over `out`'s shape. `rowOperands` are indexed by
/// the first dimension only (a per-row vector broadcast along the row).
Value elementwise(OpBuilder &b, Location loc, Value out,
                  ArrayRef<Value> fullOperands, ArrayRef<Value> rowOperands,
                  function_ref<Value(OpBuilder &, Location, ValueRange)> body) {
  auto type = cast<RankedTensorType>(out.getType());
  unsigned rank = type.getRank();
  MLIRContext *ctx = b.getContext();
  AffineMap identity = AffineMap::getMultiDimIdentityMap(rank, ctx);
  SmallVector<Value> inputs(fullOperands);
  inputs.append(rowOperands.begin(), rowOperands.end());
  SmallVector<AffineMap> maps(fullOperands.size(), identity);
  maps.append(rowOperands.size(), dimsMap(ctx, rank, {0}));
  maps.push_back(identity);
  SmallVector<IteratorType> iterators(rank, kPar);
  Value init = tensor::EmptyOp::create(b, loc, type.getShape(), b.getF32Type());
  auto generic = linalg::GenericOp::create(
      b, loc, TypeRange{type}, inputs, ValueRange{init}, maps, iterators,
      [&](OpBuilder &nb, Location nloc, ValueRange args) {
        linalg::YieldOp::create(nb, nloc, body(nb, nloc, args.drop_back()));
      });
  return generic.getResult(0);
}

/// Sum over k of A(i,k)·B(k,j) into `acc` (maps supplied by the caller).
Value contraction(OpBuilder &b, Location loc, Value lhs, Value rhs, Value acc,
                  AffineMap lhsMap, AffineMap rhsMap, std::optional<double> alpha) {
  MLIRContext *ctx = b.getContext();
  AffineMap accMap = dimsMap(ctx, 3, {0, 1});
  auto generic = linalg::GenericOp::create(
      b, loc, TypeRange{acc.getType()}, ValueRange{lhs, rhs}, ValueRange{acc},
      ArrayRef<AffineMap>{lhsMap, rhsMap, accMap},
      ArrayRef<IteratorType>{kPar, kPar, kRed},
      [&](OpBuilder &nb, Location nloc, ValueRange args) {
        Value product = arith::MulFOp::create(nb, nloc, toF32(nb, nloc, args[0]),
                                              toF32(nb, nloc, args[1]));
        if (alpha)
          product = arith::MulFOp::create(nb, nloc, product,
                                          f32Constant(nb, nloc, *alpha));
        linalg::YieldOp::create(
            nb, nloc, ValueRange{arith::AddFOp::create(nb, nloc, args[2], product)});
      });
  return generic.getResult(0);
}

/// Reduces the last dimension of `input` (rank 2) into a [rows] vector.
Value rowReduction(OpBuilder &b, Location loc, ValueRange inputs, double init,
                   function_ref<Value(OpBuilder &, Location, ValueRange)> body) {
  auto type = cast<RankedTensorType>(inputs.front().getType());
  MLIRContext *ctx = b.getContext();
  Value out = filledTensor(b, loc, {type.getDimSize(0)}, init);
  SmallVector<AffineMap> maps(inputs.size(), dimsMap(ctx, 2, {0, 1}));
  maps.push_back(dimsMap(ctx, 2, {0}));
  auto generic = linalg::GenericOp::create(
      b, loc, TypeRange{out.getType()}, inputs, ValueRange{out}, maps,
      ArrayRef<IteratorType>{kPar, kRed},
      [&](OpBuilder &nb, Location nloc, ValueRange args) {
        linalg::YieldOp::create(nb, nloc, ValueRange{body(nb, nloc, args)});
      });
  return generic.getResult(0);
}

struct QKScoresToLinalg : OpRewritePattern<QKScoresOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(QKScoresOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = rewriter.getContext();
    auto type = op.getScores().getType();
    // dot[i, j] = sum_d Q[i, d] K[j, d]
    Value dot = contraction(rewriter, loc, op.getQuery(), op.getKey(),
                            filledTensor(rewriter, loc, type.getShape(), 0.0),
                            dimsMap(ctx, 3, {0, 2}), dimsMap(ctx, 3, {1, 2}),
                            std::nullopt);
    double scale = op.getScale().convertToDouble();
    double unit = op.getLog2Domain() ? M_LOG2E : 1.0;
    FloatAttr softcapAttr = op.getSoftcapAttr();
    Value descale = op.getDescale();
    Value scores = elementwise(
        rewriter, loc, dot, {dot}, {},
        [&](OpBuilder &nb, Location nloc, ValueRange args) -> Value {
          Value raw = args[0];
          if (descale) // the e4m3 inputs' descales, a run-time factor
            raw = arith::MulFOp::create(nb, nloc, raw, descale);
          if (!softcapAttr) // log2(e) folds into the scale.
            return arith::MulFOp::create(nb, nloc, raw,
                                         f32Constant(nb, nloc, scale * unit));
          double softcap = softcapAttr.getValueAsDouble();
          Value inner = arith::MulFOp::create(
              nb, nloc, raw, f32Constant(nb, nloc, scale / softcap));
          Value capped = math::TanhOp::create(nb, nloc, inner);
          return arith::MulFOp::create(nb, nloc, capped,
                                       f32Constant(nb, nloc, softcap * unit));
        });
    rewriter.replaceOp(op, scores);
    return success();
  }
};

/// The (query, key) position of the current element of a score tile placed
/// at [query_offset, key_offset] (fa.apply_mask, fa.alibi_bias).
template <typename TileOp>
static std::pair<Value, Value> queryAndKey(OpBuilder &b, Location loc,
                                           TileOp op) {
  Value query = arith::AddIOp::create(b, loc, op.getQueryOffset(),
                                      linalg::IndexOp::create(b, loc, 0));
  Value key = arith::AddIOp::create(b, loc, op.getKeyOffset(),
                                    linalg::IndexOp::create(b, loc, 1));
  return {query, key};
}

/// `scores` with -inf where `visible` (built per element, in the generic's
/// body) is false: fa.apply_mask and fa.mask_mod.
static Value hideScores(OpBuilder &b, Location loc, Value scores,
                        function_ref<Value(OpBuilder &, Location)> visible) {
  return elementwise(
      b, loc, scores, {scores}, {},
      [&](OpBuilder &nb, Location nloc, ValueRange args) -> Value {
        Value minusInf =
            f32Constant(nb, nloc, -std::numeric_limits<double>::infinity());
        return arith::SelectOp::create(nb, nloc, visible(nb, nloc), args[0],
                                       minusInf);
      });
}

struct ApplyMaskToLinalg : OpRewritePattern<ApplyMaskOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ApplyMaskOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MaskAttr mask = op.getMask();
    Value masked = hideScores(
        rewriter, loc, op.getScores(), [&](OpBuilder &nb, Location nloc) {
          auto [query, key] = queryAndKey(nb, nloc, op);
          return buildKeyVisible(nb, nloc, mask, query, key, op.getQueryLen(),
                                 op.getKeyLen());
        });
    rewriter.replaceOp(op, masked);
    return success();
  }
};

/// The leading arguments of a variant region at the current element of the
/// tile: (b, h, q_idx, kv_idx), positions clamped to the last real query
/// and key (fa.score_mod's contract).
template <typename ModOp>
static SmallVector<Value> regionPosition(OpBuilder &b, Location loc, ModOp op) {
  auto [query, key] = queryAndKey(b, loc, op);
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  Value lastQuery = arith::SubIOp::create(b, loc, op.getQueryLen(), one);
  Value lastKey = arith::SubIOp::create(b, loc, op.getKeyLen(), one);
  return {op.getBatch(), op.getHead(),
          arith::MinSIOp::create(b, loc, query, lastQuery),
          arith::MinSIOp::create(b, loc, key, lastKey)};
}

struct ScoreModToLinalg : OpRewritePattern<ScoreModOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ScoreModOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    bool log2 = op.getLog2Domain();
    Value modified = elementwise(
        rewriter, loc, op.getScores(), {op.getScores()}, {},
        [&](OpBuilder &nb, Location nloc, ValueRange args) -> Value {
          Value score = args[0];
          if (log2) // the body works in natural units
            score = arith::MulFOp::create(nb, nloc, score,
                                          f32Constant(nb, nloc, M_LN2));
          SmallVector<Value> leading = {score};
          leading.append(regionPosition(nb, nloc, op));
          Value result = inlineModRegion(nb, op.getBody(), leading,
                                         op.getCaptures(), buildClampedExtract);
          if (log2)
            result = arith::MulFOp::create(nb, nloc, result,
                                           f32Constant(nb, nloc, M_LOG2E));
          return result;
        });
    rewriter.replaceOp(op, modified);
    return success();
  }
};

struct MaskModToLinalg : OpRewritePattern<MaskModOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(MaskModOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value masked = hideScores(
        rewriter, loc, op.getScores(), [&](OpBuilder &nb, Location nloc) {
          return inlineModRegion(nb, op.getBody(), regionPosition(nb, nloc, op),
                                 op.getCaptures(), buildClampedExtract);
        });
    rewriter.replaceOp(op, masked);
    return success();
  }
};

struct AlibiBiasToLinalg : OpRewritePattern<AlibiBiasOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(AlibiBiasOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    // c·slope once per tile; log2(e) when the scores are in log2 units.
    Value slope = op.getSlope();
    if (op.getLog2Domain())
      slope = arith::MulFOp::create(rewriter, loc, slope,
                                    f32Constant(rewriter, loc, M_LOG2E));
    // Bottom-right alignment: query i sits at key position i + N - M.
    Value alignment = arith::SubIOp::create(rewriter, loc, op.getKeyLen(),
                                            op.getQueryLen());
    Value biased = elementwise(
        rewriter, loc, op.getScores(), {op.getScores()}, {},
        [&](OpBuilder &nb, Location nloc, ValueRange args) -> Value {
          auto [query, key] = queryAndKey(nb, nloc, op);
          Value offset = arith::SubIOp::create(
              nb, nloc, arith::AddIOp::create(nb, nloc, query, alignment), key);
          Value distance = arith::MaxSIOp::create(
              nb, nloc, offset,
              arith::SubIOp::create(
                  nb, nloc, arith::ConstantIndexOp::create(nb, nloc, 0),
                  offset));
          Value distanceF32 = arith::SIToFPOp::create(
              nb, nloc, nb.getF32Type(),
              arith::IndexCastOp::create(nb, nloc, nb.getI64Type(), distance));
          Value bias = arith::MulFOp::create(nb, nloc, slope, distanceF32);
          return arith::SubFOp::create(nb, nloc, args[0], bias);
        });
    rewriter.replaceOp(op, biased);
    return success();
  }
};

struct RowMaxToLinalg : OpRewritePattern<RowMaxOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(RowMaxOp op,
                                PatternRewriter &rewriter) const override {
    // maxnumf ignores NaN operands, but there are none: masked scores are
    // -inf, and max(-inf, -inf) = -inf marks a row with no visible key.
    rewriter.replaceOp(
        op, rowReduction(rewriter, op.getLoc(), op.getInput(),
                         -std::numeric_limits<double>::infinity(),
                         [](OpBuilder &nb, Location nloc, ValueRange args) {
                           return arith::MaxNumFOp::create(nb, nloc, args[0],
                                                           args[1]).getResult();
                         }));
    return success();
  }
};

struct RowSumToLinalg : OpRewritePattern<RowSumOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(RowSumOp op,
                                PatternRewriter &rewriter) const override {
    rewriter.replaceOp(
        op, rowReduction(rewriter, op.getLoc(), op.getInput(), 0.0,
                         [](OpBuilder &nb, Location nloc, ValueRange args) {
                           return arith::AddFOp::create(nb, nloc, args[0],
                                                        args[1]).getResult();
                         }));
    return success();
  }
};

struct RowDotToLinalg : OpRewritePattern<RowDotOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(RowDotOp op,
                                PatternRewriter &rewriter) const override {
    rewriter.replaceOp(
        op, rowReduction(rewriter, op.getLoc(), {op.getLhs(), op.getRhs()}, 0.0,
                         [](OpBuilder &nb, Location nloc, ValueRange args) {
                           Value product = arith::MulFOp::create(
                               nb, nloc, toF32(nb, nloc, args[0]),
                               toF32(nb, nloc, args[1]));
                           return arith::AddFOp::create(nb, nloc, args[2],
                                                        product).getResult();
                         }));
    return success();
  }
};

struct ExpShiftedToLinalg : OpRewritePattern<ExpShiftedOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ExpShiftedOp op,
                                PatternRewriter &rewriter) const override {
    bool base2 = op.getBase2();
    bool rowBroadcast = op.getInput().getType().getRank() == 2;
    SmallVector<Value> full = {op.getInput()}, rows;
    (rowBroadcast ? rows : full).push_back(op.getShift());
    Value result = elementwise(
        rewriter, op.getLoc(), op.getInput(), full, rows,
        [&](OpBuilder &nb, Location nloc, ValueRange args) -> Value {
          Value diff = arith::SubFOp::create(nb, nloc, args[0], args[1]);
          Value exp = base2 ? math::Exp2Op::create(nb, nloc, diff).getResult()
                            : math::ExpOp::create(nb, nloc, diff).getResult();
          // exp(-inf - (-inf)) would be NaN; a -inf input means "nothing".
          Value minusInf = f32Constant(nb, nloc,
                                       -std::numeric_limits<double>::infinity());
          Value isMasked = arith::CmpFOp::create(
              nb, nloc, arith::CmpFPredicate::OEQ, args[0], minusInf);
          return arith::SelectOp::create(nb, nloc, isMasked,
                                         f32Constant(nb, nloc, 0.0), exp);
        });
    rewriter.replaceOp(op, result);
    return success();
  }
};

struct ScaleRowsToLinalg : OpRewritePattern<ScaleRowsOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ScaleRowsOp op,
                                PatternRewriter &rewriter) const override {
    rewriter.replaceOp(
        op, elementwise(rewriter, op.getLoc(), op.getInput(), {op.getInput()},
                        {op.getFactor()},
                        [](OpBuilder &nb, Location nloc, ValueRange args) {
                          return arith::MulFOp::create(nb, nloc, args[0],
                                                       args[1]).getResult();
                        }));
    return success();
  }
};

struct SoftmaxGradToLinalg : OpRewritePattern<SoftmaxGradOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(SoftmaxGradOp op,
                                PatternRewriter &rewriter) const override {
    rewriter.replaceOp(
        op, elementwise(rewriter, op.getLoc(), op.getProbs(),
                        {op.getProbs(), op.getGradProbs()}, {op.getRowDot()},
                        [](OpBuilder &nb, Location nloc, ValueRange args) {
                          Value centred =
                              arith::SubFOp::create(nb, nloc, args[1], args[2]);
                          return arith::MulFOp::create(nb, nloc, args[0],
                                                       centred).getResult();
                        }));
    return success();
  }
};

struct SoftcapGradToLinalg : OpRewritePattern<SoftcapGradOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(SoftcapGradOp op,
                                PatternRewriter &rewriter) const override {
    double softcap = op.getSoftcap().convertToDouble();
    rewriter.replaceOp(
        op, elementwise(rewriter, op.getLoc(), op.getGrad(),
                        {op.getGrad(), op.getScores()}, {},
                        [&](OpBuilder &nb, Location nloc, ValueRange args) {
                          // d/dx softcap·tanh(x/softcap) = 1 - (S/softcap)^2
                          Value t = arith::MulFOp::create(
                              nb, nloc, args[1],
                              f32Constant(nb, nloc, 1.0 / softcap));
                          Value tt = arith::MulFOp::create(nb, nloc, t, t);
                          Value slope = arith::SubFOp::create(
                              nb, nloc, f32Constant(nb, nloc, 1.0), tt);
                          return arith::MulFOp::create(nb, nloc, args[0], slope)
                              .getResult();
                        }));
    return success();
  }
};

struct TileMatmulToLinalg : OpRewritePattern<TileMatmulOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(TileMatmulOp op,
                                PatternRewriter &rewriter) const override {
    MLIRContext *ctx = rewriter.getContext();
    // Iteration space (i, j, k): C[i, j] += op(A)[i, k] · op(B)[k, j].
    AffineMap lhsMap = op.getTransposeA() ? dimsMap(ctx, 3, {2, 0})
                                          : dimsMap(ctx, 3, {0, 2});
    AffineMap rhsMap = op.getTransposeB() ? dimsMap(ctx, 3, {1, 2})
                                          : dimsMap(ctx, 3, {2, 1});
    std::optional<double> alpha;
    if (auto attr = op.getAlphaAttr())
      alpha = attr.getValueAsDouble();
    rewriter.replaceOp(op, contraction(rewriter, op.getLoc(), op.getLhs(),
                                       op.getRhs(), op.getAcc(), lhsMap, rhsMap,
                                       alpha));
    return success();
  }
};

struct ConvertFATileToLinalgPass
    : fa::impl::ConvertFATileToLinalgBase<ConvertFATileToLinalgPass> {
  void runOnOperation() override {
    // Tiles with a GPU layout are one thread's share of a tile, which a
    // linalg op on the whole tile cannot type: fa-gpu-lower-fragments'.
    if (Operation *placed = findGPULayout(getOperation())) {
      placed->emitError()
          << "convert-fa-tile-to-linalg: '" << placed->getName()
          << "' has tiles with a GPU layout (fa-gpu-distribute's output), "
             "which only fa-gpu-lower-fragments lowers";
      return signalPassFailure();
    }
    RewritePatternSet patterns(&getContext());
    populateFATileToLinalgPatterns(patterns);
    walkAndApplyPatterns(getOperation(), std::move(patterns));
  }
};

} // namespace

void mlir::fa::populateFATileToLinalgPatterns(RewritePatternSet &patterns) {
  patterns.add<QKScoresToLinalg, AlibiBiasToLinalg, ApplyMaskToLinalg,
               ScoreModToLinalg, MaskModToLinalg,
               RowMaxToLinalg, RowSumToLinalg, RowDotToLinalg,
               ExpShiftedToLinalg, ScaleRowsToLinalg, SoftmaxGradToLinalg, SoftcapGradToLinalg,
               TileMatmulToLinalg>(patterns.getContext());
}
