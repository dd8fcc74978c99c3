//===- Tile.cpp - fa-tile: tiling with the 3-pass safe softmax ------------===//
//
// Part of fa-mlir.
//
// fa.attention becomes loops over (batch, query head, Q block). Inside each
// Q block the softmax is still the textbook safe softmax, so it takes three
// sweeps over the KV blocks, each recomputing its score tile:
//
//   1. m = max_j S_ij                       (row max)
//   2. l = sum_j exp(S_ij - m)              (sum of exp)
//   3. O = sum_j (exp(S_ij - m) / l) V_j    (normalised P·V)
//
// With ALiBi slopes, the head's slope is read once per (batch, head) and
// each score tile gets fa.alibi_bias between fa.qk_scores and the mask.
// score_mod and mask_mod regions are cloned into fa.score_mod / fa.mask_mod
// on each score tile, after the bias and before the mask attribute's
// fa.apply_mask; their captured operands stay the op's.
// With f8E4M3FN inputs, S carries Q's and K's descales (fa.qk_scores'
// descale), P is rounded to e4m3 for P·V, and O is scaled by V's descale.
//
// fa-fuse-online-softmax turns the three sweeps into one.
//
//===----------------------------------------------------------------------===//

#include "fa/Dialect/FA/Transforms/Passes.h"

#include "TileBuilder.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/WalkPatternRewriteDriver.h"

#include <cmath>
#include <limits>

namespace mlir {
namespace fa {
#define GEN_PASS_DEF_FATILE
#include "fa/Dialect/FA/Transforms/Passes.h.inc"
} // namespace fa
} // namespace mlir

using namespace mlir;
using namespace mlir::fa;

namespace {

/// Everything one Q block's KV sweeps need.
struct QBlock {
  Value batch, head, kvHead, q0, queryTile;
  Value kvBegin, kvEnd;
  Value alibiSlope; // null without ALiBi

};

/// Builds the per-block loops of one fa.attention.
class AttentionTiler {
public:
  AttentionTiler(AttentionOp op, const AttentionShape &shape, int64_t blockM,
                 int64_t blockN, TileBuilder &tb)
      : op(op), shape(shape), blockM(blockM), blockN(blockN), tb(tb),
        b(tb.builder()), loc(tb.location()) {}

  /// S for the KV block at `k0`, scaled, softcapped, ALiBi-biased, through
  /// the variant regions, and masked.
  Value maskedScores(const QBlock &blk, Value k0) {
    Value keyTile = tb.loadTile(op.getKey(), blk.batch, blk.kvHead, k0, blockN);
    auto scoresType =
        RankedTensorType::get({blockM, blockN}, b.getF32Type());
    auto scores = QKScoresOp::create(
        b, loc, scoresType, blk.queryTile, keyTile, scoreDescale,
        b.getF32FloatAttr(op.getScaleOrDefault()), softcapAttr(),
        /*log2_domain=*/nullptr);
    Value biased = tb.addAlibiBias(scores, blk.alibiSlope, blk.q0, k0,
                                   shape.queryLen, shape.keyLen);
    Value modified = tb.applyVariantRegions(
        biased, op.getScoreMod(), op.getMaskMod(), op.getCaptures(), blk.batch,
        blk.head, blk.q0, k0, shape.queryLen, shape.keyLen);
    return ApplyMaskOp::create(b, loc, scores.getType(), modified,
                               op.getMaskOrDefault(), blk.q0, k0,
                               tb.index(shape.queryLen),
                               tb.index(shape.keyLen));
  }

  /// A loop over the visible KV blocks carrying `init`; `body` returns the
  /// next value of the carried tile.
  Value kvSweep(const QBlock &blk, Value init,
                function_ref<Value(Value k0, Value carried)> body) {
    auto loop = scf::ForOp::create(
        b, loc, blk.kvBegin, blk.kvEnd, tb.index(blockN), ValueRange{init},
        [&](OpBuilder &nested, Location, Value k0, ValueRange carried) {
          OpBuilder::InsertionGuard guard(b);
          b.setInsertionPointToStart(nested.getInsertionBlock());
          Value next = body(k0, carried.front());
          scf::YieldOp::create(b, loc, next);
        });
    return loop.getResult(0);
  }

  /// The three sweeps for one Q block; returns (O tile in f32, LSE tile).
  std::pair<Value, Value> safeSoftmaxBlock(const QBlock &blk) {
    double inf = std::numeric_limits<double>::infinity();
    // 1. Row max: m = max over all visible keys of S.
    Value rowMax = kvSweep(blk, tb.splat({blockM}, -inf),
                           [&](Value k0, Value runningMax) -> Value {
                             Value s = maskedScores(blk, k0);
                             Value blockMax = RowMaxOp::create(
                                 b, loc, runningMax.getType(), s);
                             return arith::MaxNumFOp::create(b, loc, runningMax,
                                                             blockMax);
                           });
    // 2. Sum of exp: l = sum_j exp(S - m).
    Value rowSum = kvSweep(blk, tb.splat({blockM}, 0.0),
                           [&](Value k0, Value runningSum) -> Value {
                             Value s = maskedScores(blk, k0);
                             Value p = ExpShiftedOp::create(b, loc, s.getType(), s, rowMax,
                                                            /*base2=*/nullptr);
                             Value blockSum = RowSumOp::create(
                                 b, loc, runningSum.getType(), p);
                             return arith::AddFOp::create(b, loc, runningSum,
                                                          blockSum);
                           });
    // A row with no visible key has l = 0: its weights are all 0, not 0/0.
    Value zero = tb.splat({blockM}, 0.0);
    Value noKey = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ,
                                        rowSum, zero);
    Value reciprocal =
        arith::DivFOp::create(b, loc, tb.splat({blockM}, 1.0), rowSum);
    Value invSum = arith::SelectOp::create(b, loc, noKey, zero, reciprocal);
    // 3. Normalised P·V: O = sum_j (exp(S - m) / l) V_j.
    Value output = kvSweep(
        blk, tb.zeros({blockM, shape.valueDim}),
        [&](Value k0, Value acc) -> Value {
          Value s = maskedScores(blk, k0);
          Value p =
              ExpShiftedOp::create(b, loc, s.getType(), s, rowMax, /*base2=*/nullptr);
          Value probs = ScaleRowsOp::create(b, loc, p.getType(), p, invSum);
          Value valueTile =
              tb.loadTile(op.getValue(), blk.batch, blk.kvHead, k0, blockN);
          // e4m3 P·V: P (in [0, 1]) rounded to V's type, as the e4m3 MMA
          // takes it.
          auto valueType = cast<RankedTensorType>(valueTile.getType());
          if (isa<Float8E4M3FNType>(valueType.getElementType()))
            probs = arith::TruncFOp::create(
                b, loc,
                cast<RankedTensorType>(probs.getType())
                    .clone(valueType.getElementType()),
                probs);
          return TileMatmulOp::create(b, loc, acc.getType(), probs, valueTile,
                                      acc, nullptr, nullptr, nullptr);
        });
    // V's descale: O = (P·V_stored)·descale_v.
    if (valueDescale)
      output = ScaleRowsOp::create(
          b, loc, output.getType(), output,
          tensor::SplatOp::create(b, loc,
                                  RankedTensorType::get({blockM}, b.getF32Type()),
                                  valueDescale));
    // LSE = m + log(l); -inf + log(0) = -inf for a row with no visible key.
    Value lse = arith::AddFOp::create(b, loc, rowMax,
                                      math::LogOp::create(b, loc, rowSum));
    return {output, lse};
  }

  /// Emits the whole loop nest and returns the replacement values.
  SmallVector<Value> build() {
    Type elementType = op.getOutput().getType().getElementType();
    // f8E4M3FN: the stored values times descales; Q's and K's scale S
    // (one product), V's the output. Per tensor: once, here; per (batch,
    // KV head): in the head loop (descalesOf).
    if (op.getDescale().size() == 3 &&
        !isa<RankedTensorType>(op.getDescale()[0].getType()))
      std::tie(scoreDescale, valueDescale) = descalesOf(ValueRange());
    SmallVector<Value> inits = {tensor::EmptyOp::create(
        b, loc, op.getOutput().getType().getShape(), elementType)};
    if (op.getLse())
      inits.push_back(tensor::EmptyOp::create(
          b, loc, op.getLse().getType().getShape(), b.getF32Type()));

    // for b, for h, for q0: every level threads O (and LSE) through.
    return tb.forLoop(shape.batch, 1, inits, [&](Value batch, ValueRange perBatch) {
      return tb.forLoop(shape.queryHeads, 1, perBatch,
                  [&](Value head, ValueRange perHead) {
        // GQA/MQA: query head h reads KV head h / (Hq / Hkv).
        Value kvHead = arith::DivUIOp::create(b, loc, head,
                                              tb.index(shape.groupSize()));
        Value alibiSlope = tb.alibiSlope(op.getAlibiSlopes(), batch, head);
        if (op.getDescale().size() == 3 &&
            isa<RankedTensorType>(op.getDescale()[0].getType()))
          std::tie(scoreDescale, valueDescale) = descalesOf({batch, kvHead});
        return tb.forLoop(shape.queryLen, blockM, perHead,
                    [&](Value q0, ValueRange perBlock) {
          QBlock blk;
          blk.batch = batch;
          blk.head = head;
          blk.kvHead = kvHead;
          blk.q0 = q0;
          blk.alibiSlope = alibiSlope;
          blk.queryTile = tb.loadTile(op.getQuery(), batch, head, q0, blockM);
          Value rows = tb.rowsInBlock(q0, blockM, shape.queryLen);
          std::tie(blk.kvBegin, blk.kvEnd) = tb.visibleKeyRange(
              op.getMaskOrDefault(), q0, rows, shape.queryLen, shape.keyLen,
              blockN);
          auto [outputTile, lseTile] = safeSoftmaxBlock(blk);
          SmallVector<Value> next = {
              tb.storeTile(tb.castTile(outputTile, elementType), perBlock[0],
                           batch, head, q0, blockM)};
          if (op.getLse())
            next.push_back(
                tb.storeTile(lseTile, perBlock[1], batch, head, q0, blockM));
          return next;
        });
      });
    });
  }

private:
  Value scoreDescale, valueDescale; ///< f8E4M3FN only
  /// (Q's · K's, V's) descale: the scalars, or the [B, Hkv] tensors' values
  /// at `at` (batch, KV head).
  std::pair<Value, Value> descalesOf(ValueRange at) {
    auto read = [&](Value descale) -> Value {
      if (at.empty())
        return descale;
      return tensor::ExtractOp::create(b, loc, descale, at);
    };
    ValueRange descales = op.getDescale();
    return {arith::MulFOp::create(b, loc, read(descales[0]), read(descales[1])),
            read(descales[2])};
  }
  FloatAttr softcapAttr() {
    double softcap = op.getSoftcapOrZero();
    return softcap > 0.0 ? b.getF32FloatAttr(softcap) : FloatAttr();
  }

  AttentionOp op;
  AttentionShape shape;
  int64_t blockM, blockN;
  TileBuilder &tb;
  OpBuilder &b;
  Location loc;
};

struct TileAttention : OpRewritePattern<AttentionOp> {
  TileAttention(MLIRContext *context, const TilingOptions &options)
      : OpRewritePattern(context), options(options) {}

  LogicalResult matchAndRewrite(AttentionOp op,
                                PatternRewriter &rewriter) const override {
    FailureOr<AttentionShape> shape =
        AttentionShape::get(op, op.getQuery(), op.getKey(), op.getValue());
    if (failed(shape))
      return failure();
    TileAttr tile = op.getTileAttr();
    int64_t blockM = tile ? tile.getBlockM() : options.blockM;
    int64_t blockN = tile ? tile.getBlockN() : options.blockN;
    // A block never exceeds the sequence rounded up to a power of two (M = 1
    // gets one 1-row block, M = 3 one padded 4-row block): the recorded
    // #fa.tile must stay a valid one, and its sizes are powers of two.
    blockM = clampBlockToSequence(blockM, shape->queryLen);
    blockN = clampBlockToSequence(blockN, shape->keyLen);
    // A block mask's block holds whole tiles (both are powers of two).
    BlockSparseAttr blockSparse = op.getBlockSparseAttr();
    if (blockSparse) {
      blockM = std::min(blockM, blockSparse.getQBlock());
      blockN = std::min(blockN, blockSparse.getKvBlock());
      assert(blockSparse.getQBlock() % blockM == 0 &&
             blockSparse.getKvBlock() % blockN == 0 &&
             "the op verifier checks that the tile divides the blocks");
    }

    TileBuilder tb(rewriter, op.getLoc());
    AttentionTiler tiler(op, *shape, blockM, blockN, tb);
    SmallVector<Value> results = tiler.build();
    // The loop nest remembers its tiling (the GPU conversion reads stages
    // and warps from it; they have no meaning on the CPU).
    auto *dialect = rewriter.getContext()->getLoadedDialect<FADialect>();
    dialect->getTileAttrHelper().setAttr(
        results.front().getDefiningOp(),
        TileAttr::get(rewriter.getContext(), blockM, blockN,
                      tile ? tile.getStages() : 2, tile ? tile.getWarps() : 4,
                      tile ? tile.getSchedule() : DictionaryAttr()));
    if (blockSparse)
      dialect->getBlockSparseAttrHelper().setAttr(results.front().getDefiningOp(),
                                                  blockSparse);
    rewriter.replaceOp(op, results);
    return success();
  }

  TilingOptions options;
};

struct FATilePass : fa::impl::FATileBase<FATilePass> {
  using FATileBase::FATileBase;

  void runOnOperation() override {
    if (failed(verifyBlockOptions(getOperation(), "fa-tile", blockM, blockN)))
      return signalPassFailure();
    RewritePatternSet patterns(&getContext());
    populateTileAttentionPatterns(patterns, {blockM, blockN});
    walkAndApplyPatterns(getOperation(), std::move(patterns));
    // Whatever is left could not be tiled; say so rather than pass it on.
    getOperation().walk([&](AttentionOp op) {
      op.emitOpError("cannot be tiled");
      signalPassFailure();
    });
  }
};

} // namespace

void mlir::fa::populateTileAttentionPatterns(RewritePatternSet &patterns,
                                             const TilingOptions &options) {
  patterns.add<TileAttention>(patterns.getContext(), options);
}
