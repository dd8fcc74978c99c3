//===- RecomputeBackward.cpp - fa-recompute-backward ----------------------===//
//
// Part of fa-mlir.
//
// fa.attention_grad becomes FlashAttention's backward (FA2, Algorithm 2):
//
//   D = rowsum(dO ∘ O)                                   (one O(M) vector)
//   for each KV block j (outer):      dK_j = dV_j = 0
//     for each query head of the group, for each Q block i (inner):
//       S = scale·Q_i K_jᵀ (+ ALiBi, masked);  P = exp(S - LSE_i)
//       dV_j += Pᵀ dO_i
//       dP    = dO_i V_jᵀ
//       dS    = P ∘ (dP - D_i)
//       dK_j += scale · dSᵀ Q_i
//       dQ_i += scale · dS K_j                            (f32 accumulator)
//
// Only LSE is saved from the forward pass; no M×N value is ever formed.
//
// A score_mod g and a mask_mod are applied to S as the forward applies
// them (fa.score_mod / fa.mask_mod), and the chain rule takes dS through
// g: dS_pre = dS ∘ g'(S_pre), with g' the compiler's derivative of the
// region (DifferentiateScoreMod.h) in a second fa.score_mod.
//
//===----------------------------------------------------------------------===//

#include "fa/Dialect/FA/Transforms/Passes.h"

#include "DifferentiateScoreMod.h"
#include "TileBuilder.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/WalkPatternRewriteDriver.h"

#include <limits>

namespace mlir {
namespace fa {
#define GEN_PASS_DEF_FARECOMPUTEBACKWARD
#include "fa/Dialect/FA/Transforms/Passes.h.inc"
} // namespace fa
} // namespace mlir

using namespace mlir;
using namespace mlir::fa;

namespace {

class BackwardTiler {
public:
  BackwardTiler(AttentionGradOp op, const AttentionShape &shape,
                int64_t blockM, int64_t blockN, bool omitRowDot,
                bool omitScoreModGrad, TileBuilder &tb)
      : op(op), shape(shape), blockM(blockM), blockN(blockN),
        omitRowDot(omitRowDot), omitScoreModGrad(omitScoreModGrad), tb(tb),
        b(tb.builder()), loc(tb.location()) {}

  /// Step 1: D[b, h, i] = sum_e dO[b, h, i, e] · O[b, h, i, e].
  Value rowDots() {
    Value init = tensor::EmptyOp::create(
        b, loc, op.getLse().getType().getShape(), b.getF32Type());
    return tb.forLoop(shape.batch, 1, init, [&](Value batch, ValueRange d) {
      return tb.forLoop(shape.queryHeads, 1, d, [&](Value head, ValueRange d) {
        return tb.forLoop(shape.queryLen, blockM, d,
                       [&](Value q0, ValueRange d) -> SmallVector<Value> {
          Value gradOut =
              tb.loadTile(op.getGradOutput(), batch, head, q0, blockM);
          Value out = tb.loadTile(op.getOutput(), batch, head, q0, blockM);
          Value rowDot = RowDotOp::create(
              b, loc, RankedTensorType::get({blockM}, b.getF32Type()), gradOut,
              out);
          return {tb.storeTile(rowDot, d[0], batch, head, q0, blockM)};
        });
      });
    })[0];
  }

  /// One (KV block, Q block) step; returns (dK_j, dV_j, dQ).
  /// `alibiSlope` is the head's slope, null without ALiBi.
  SmallVector<Value> blockStep(Value batch, Value head, Value alibiSlope,
                               Value k0, Value keyTile, Value valueTile,
                               Value rowDot, Value q0, Value gradKey,
                               Value gradValue, Value gradQuery) {
    double scale = op.getScaleOrDefault();
    double softcap = op.getSoftcapOrZero();
    Value queryTile = tb.loadTile(op.getQuery(), batch, head, q0, blockM);
    Value gradOutTile = tb.loadTile(op.getGradOutput(), batch, head, q0, blockM);
    // Rows past M get LSE = +inf, so their recomputed P is exactly 0.
    Value lseTile = tb.loadTile(op.getLse(), batch, head, q0, blockM,
                                std::numeric_limits<double>::infinity());
    Value rowDotTile = omitRowDot
                           ? tb.splat({blockM}, 0.0)
                           : tb.loadTile(rowDot, batch, head, q0, blockM);
    auto tileType = RankedTensorType::get({blockM, blockN}, b.getF32Type());

    // S = scale·Q Kᵀ (softcapped), ALiBi-biased, masked; P = exp(S - LSE),
    // recomputed. The bias is a constant of S: it shapes P but has no
    // derivative of its own, so dS flows back through the softcap only.
    Value scores = QKScoresOp::create(
        b, loc, tileType, queryTile, keyTile, /*descale=*/Value(),
        b.getF32FloatAttr(scale),
        softcap > 0 ? b.getF32FloatAttr(softcap) : FloatAttr(), nullptr);
    Value biased = tb.addAlibiBias(scores, alibiSlope, q0, k0, shape.queryLen,
                                   shape.keyLen);
    Value modified = tb.applyVariantRegions(
        biased, op.getScoreMod(), op.getMaskMod(), op.getCaptures(), batch,
        head, q0, k0, shape.queryLen, shape.keyLen);
    Value masked = ApplyMaskOp::create(
        b, loc, scores.getType(), modified, op.getMaskOrDefault(), q0, k0,
        tb.index(shape.queryLen), tb.index(shape.keyLen));
    Value probs = ExpShiftedOp::create(b, loc, masked.getType(), masked, lseTile, nullptr);
    // dV_j += Pᵀ dO_i
    Value newGradValue =
        TileMatmulOp::create(b, loc, gradValue.getType(), probs, gradOutTile,
                             gradValue, b.getUnitAttr(), nullptr, nullptr);
    // dP = dO_i V_jᵀ
    Value gradProbs =
        TileMatmulOp::create(b, loc, tileType, gradOutTile, valueTile,
                             tb.zeros({blockM, blockN}), nullptr,
                             b.getUnitAttr(), nullptr);
    // dS = P ∘ (dP - D_i), then back through the softcap's tanh, which
    // needs the softcapped S before the bias.
    Value gradScores =
        SoftmaxGradOp::create(b, loc, probs.getType(), probs, gradProbs, rowDotTile);
    if (!op.getScoreMod().empty() && !omitScoreModGrad)
      gradScores = throughScoreMod(gradScores, biased, batch, head, q0, k0);
    if (softcap > 0)
      gradScores = SoftcapGradOp::create(b, loc, gradScores.getType(), gradScores, scores,
                                         b.getF32FloatAttr(softcap));
    // dK_j += scale · dSᵀ Q_i
    Value newGradKey = TileMatmulOp::create(
        b, loc, gradKey.getType(), gradScores, queryTile, gradKey,
        b.getUnitAttr(), nullptr, b.getF32FloatAttr(scale));
    // dQ_i += scale · dS K_j
    Value gradQueryTile = tb.loadTile(gradQuery, batch, head, q0, blockM);
    Value newGradQueryTile = TileMatmulOp::create(
        b, loc, gradQueryTile.getType(), gradScores, keyTile, gradQueryTile,
        nullptr, nullptr, b.getF32FloatAttr(scale));
    Value newGradQuery =
        tb.storeTile(newGradQueryTile, gradQuery, batch, head, q0, blockM);
    return {newGradKey, newGradValue, newGradQuery};
  }

  /// dS ∘ g'(S_pre) for the op's score_mod g at the scores it read; where
  /// dS is 0 (masked or padded keys) it stays 0 whatever g' is there.
  Value throughScoreMod(Value gradScores, Value preScores, Value batch,
                        Value head, Value q0, Value k0) {
    auto slope = ScoreModOp::create(
        b, loc, preScores.getType(), preScores, q0, k0,
        tb.index(shape.queryLen), tb.index(shape.keyLen), batch, head,
        op.getCaptures(), /*log2_domain=*/nullptr);
    // The pass checked that the region differentiates.
    (void)differentiateScoreMod(op.getScoreMod(), slope.getBody(), op);
    Value chained = arith::MulFOp::create(b, loc, gradScores, slope);
    Value zero = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ,
                                       gradScores,
                                       tb.splat({blockM, blockN}, 0.0));
    return arith::SelectOp::create(b, loc, zero, gradScores, chained);
  }

  SmallVector<Value> build() {
    // 1. D = rowsum(dO ∘ O)
    Value rowDot = rowDots();
    // dQ accumulates over KV blocks in f32; it is the only O(M·D) buffer.
    auto queryType = op.getQuery().getType();
    Value zero = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(0.0));
    Value gradQueryAcc =
        linalg::FillOp::create(
            b, loc, zero,
            tensor::EmptyOp::create(b, loc, queryType.getShape(),
                                    b.getF32Type()).getResult())
            .getResult(0);
    Type elementType = queryType.getElementType();
    Value gradKeyInit = tensor::EmptyOp::create(
        b, loc, op.getKey().getType().getShape(), elementType);
    Value gradValueInit = tensor::EmptyOp::create(
        b, loc, op.getValue().getType().getShape(), elementType);

    // 2. KV blocks outer, Q blocks inner.
    SmallVector<Value> grads = tb.forLoop(
        shape.batch, 1, {gradKeyInit, gradValueInit, gradQueryAcc},
        [&](Value batch, ValueRange g) {
      return tb.forLoop(shape.kvHeads, 1, g, [&](Value kvHead, ValueRange g) {
        return tb.forLoop(shape.keyLen, blockN, g,
                       [&](Value k0, ValueRange g) -> SmallVector<Value> {
          Value keyTile = tb.loadTile(op.getKey(), batch, kvHead, k0, blockN);
          Value valueTile =
              tb.loadTile(op.getValue(), batch, kvHead, k0, blockN);
          Value gradKeyTile = tb.zeros({blockN, shape.headDim});
          Value gradValueTile = tb.zeros({blockN, shape.valueDim});
          // GQA: every query head of the group adds into dK_j, dV_j.
          SmallVector<Value> acc = tb.forLoop(
              shape.groupSize(), 1, {gradKeyTile, gradValueTile, g[2]},
              [&](Value member, ValueRange a) {
            Value head = arith::AddIOp::create(
                b, loc,
                arith::MulIOp::create(b, loc, kvHead,
                                      tb.index(shape.groupSize())),
                member);
            Value alibiSlope =
                tb.alibiSlope(op.getAlibiSlopes(), batch, head);
            return tb.forLoop(shape.queryLen, blockM, a,
                           [&](Value q0, ValueRange a) {
              return blockStep(batch, head, alibiSlope, k0, keyTile, valueTile,
                               rowDot, q0, a[0], a[1], a[2]);
            });
          });
          Value gradKey = tb.storeTile(tb.castTile(acc[0], elementType), g[0],
                                       batch, kvHead, k0, blockN);
          Value gradValue = tb.storeTile(tb.castTile(acc[1], elementType),
                                         g[1], batch, kvHead, k0, blockN);
          return {gradKey, gradValue, acc[2]};
        });
      });
    });
    Value gradQuery = tb.castTile(grads[2], elementType);
    return {gradQuery, grads[0], grads[1]};
  }

private:
  AttentionGradOp op;
  AttentionShape shape;
  int64_t blockM, blockN;
  bool omitRowDot, omitScoreModGrad;
  TileBuilder &tb;
  OpBuilder &b;
  Location loc;
};

struct RecomputeBackward : OpRewritePattern<AttentionGradOp> {
  RecomputeBackward(MLIRContext *context, const TilingOptions &options,
                    bool omitRowDot, bool omitScoreModGrad)
      : OpRewritePattern(context), options(options), omitRowDot(omitRowDot),
        omitScoreModGrad(omitScoreModGrad) {}

  LogicalResult matchAndRewrite(AttentionGradOp op,
                                PatternRewriter &rewriter) const override {
    FailureOr<AttentionShape> shape =
        AttentionShape::get(op, op.getQuery(), op.getKey(), op.getValue());
    if (failed(shape))
      return failure();
    TileAttr tile = op.getTileAttr();
    // fa-tile's rule (clampBlockToSequence): a block past the sequence
    // shrinks to it rounded up to a power of two, so the recorded #fa.tile
    // stays one the parser takes back.
    int64_t blockM = clampBlockToSequence(
        tile ? tile.getBlockM() : options.blockM, shape->queryLen);
    int64_t blockN = clampBlockToSequence(
        tile ? tile.getBlockN() : options.blockN, shape->keyLen);
    TileBuilder tb(rewriter, op.getLoc());
    BackwardTiler tiler(op, *shape, blockM, blockN, omitRowDot,
                        omitScoreModGrad, tb);
    SmallVector<Value> results = tiler.build();
    // The nest remembers its tiling, as fa-tile's: the GPU conversion
    // reads stages and warps from the outer loop (dK's result).
    auto *dialect = rewriter.getContext()->getLoadedDialect<FADialect>();
    dialect->getTileAttrHelper().setAttr(
        results[1].getDefiningOp(),
        TileAttr::get(rewriter.getContext(), blockM, blockN,
                      tile ? tile.getStages() : 2, tile ? tile.getWarps() : 4,
                      tile ? tile.getSchedule() : DictionaryAttr()));
    rewriter.replaceOp(op, results);
    return success();
  }

  TilingOptions options;
  bool omitRowDot, omitScoreModGrad;
};

struct FARecomputeBackwardPass
    : fa::impl::FARecomputeBackwardBase<FARecomputeBackwardPass> {
  using FARecomputeBackwardBase::FARecomputeBackwardBase;

  void runOnOperation() override {
    if (failed(verifyBlockOptions(getOperation(), "fa-recompute-backward",
                                  blockM, blockN)))
      return signalPassFailure();
    // A score_mod without a derivative is refused before anything is built.
    WalkResult underivable = getOperation().walk([&](AttentionGradOp op) {
      Region scratch;
      if (!op.getScoreMod().empty() &&
          failed(differentiateScoreMod(op.getScoreMod(), scratch, op)))
        return WalkResult::interrupt();
      return WalkResult::advance();
    });
    if (underivable.wasInterrupted())
      return signalPassFailure();
    RewritePatternSet patterns(&getContext());
    populateRecomputeBackwardPatterns(patterns, {blockM, blockN},
                                      testOmitRowDot, testOmitScoreModGrad);
    walkAndApplyPatterns(getOperation(), std::move(patterns));
    getOperation().walk([&](AttentionGradOp op) {
      op.emitOpError("cannot be rewritten by fa-recompute-backward");
      signalPassFailure();
    });
  }
};

} // namespace

void mlir::fa::populateRecomputeBackwardPatterns(RewritePatternSet &patterns,
                                                 const TilingOptions &options,
                                                 bool omitRowDot,
                                                 bool omitScoreModGrad) {
  patterns.add<RecomputeBackward>(patterns.getContext(), options, omitRowDot,
                                  omitScoreModGrad);
}
