//===- FuseOnlineSoftmax.cpp - fa-fuse-online-softmax ---------------------===//
//
// Part of fa-mlir.
//
// Three KV sweeps of the safe softmax (row max; sum of exp; normalised P·V)
// become one sweep with the online normaliser recurrence fused with P·V
// (Milakov & Gimelshein 2018; FlashAttention, Algorithm 1, lines 9-12):
//
//   m_new = max(m, rowmax(S))
//   alpha = exp2(m - m_new)                 (0 while no key was seen)
//   P     = exp2(S - m_new)
//   l     = alpha·l + rowsum(P)
//   acc   = alpha·acc + P·V
//
// and after the sweep O = acc / l, LSE = m·ln2 + log(l). Scores are made in
// log2 units (log2(e) folded into the scale, and into the ALiBi bias when
// there is one) so every exponential is exp2.
//
//===----------------------------------------------------------------------===//

#include "fa/Dialect/FA/Transforms/Passes.h"

#include "TileBuilder.h"

#include "mlir/Analysis/SliceAnalysis.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include <cmath>

namespace mlir {
namespace fa {
#define GEN_PASS_DEF_FAFUSEONLINESOFTMAX
#include "fa/Dialect/FA/Transforms/Passes.h.inc"
} // namespace fa
} // namespace mlir

using namespace mlir;
using namespace mlir::fa;

namespace {

/// The yielded value of a single-result loop.
static Value yieldedValue(scf::ForOp loop) {
  return cast<scf::YieldOp>(loop.getBody()->getTerminator()).getOperand(0);
}

/// The three sweeps of one Q block, as fa-tile writes them.
struct SafeSoftmaxSweeps {
  scf::ForOp rowMaxLoop, rowSumLoop, outputLoop;
  RowMaxOp rowMax;         // in rowMaxLoop: max of the masked scores
  TileMatmulOp probsTimesV; // in outputLoop: acc + P·V
};

/// Matches `yield maxnumf(m, row_max(S))` — a row-max sweep.
static RowMaxOp matchRowMaxSweep(scf::ForOp loop) {
  if (loop.getNumResults() != 1)
    return {};
  auto max = yieldedValue(loop).getDefiningOp<arith::MaxNumFOp>();
  if (!max || max.getLhs() != loop.getRegionIterArgs()[0])
    return {};
  return max.getRhs().getDefiningOp<RowMaxOp>();
}

/// Matches `yield addf(l, row_sum(exp_shifted(S, m)))` with m = rowMax.
static bool isRowSumSweep(scf::ForOp loop, Value rowMax) {
  if (loop.getNumResults() != 1)
    return false;
  auto add = yieldedValue(loop).getDefiningOp<arith::AddFOp>();
  if (!add || add.getLhs() != loop.getRegionIterArgs()[0])
    return false;
  auto sum = add.getRhs().getDefiningOp<RowSumOp>();
  if (!sum)
    return false;
  auto exp = sum.getInput().getDefiningOp<ExpShiftedOp>();
  return exp && exp.getShift() == rowMax && !exp.getBase2();
}

/// The normalised P of an output sweep's P·V: its left operand, or the
/// operand of the arith.truncf that rounds it to an MMA type (f8E4M3FN).
static ScaleRowsOp normalisedProbs(TileMatmulOp matmul) {
  Value lhs = matmul.getLhs();
  if (auto round = lhs.getDefiningOp<arith::TruncFOp>())
    lhs = round.getIn();
  return lhs.getDefiningOp<ScaleRowsOp>();
}

/// Matches `yield matmul([truncf](scale_rows(exp_shifted(S, m), invSum)),
/// V, acc)`.
static TileMatmulOp matchOutputSweep(scf::ForOp loop, Value rowMax) {
  if (loop.getNumResults() != 1)
    return {};
  auto matmul = yieldedValue(loop).getDefiningOp<TileMatmulOp>();
  if (!matmul || matmul.getAcc() != loop.getRegionIterArgs()[0] ||
      matmul.getTransposeA() || matmul.getTransposeB() || matmul.getAlpha())
    return {};
  ScaleRowsOp probs = normalisedProbs(matmul);
  if (!probs)
    return {};
  auto exp = probs.getInput().getDefiningOp<ExpShiftedOp>();
  if (!exp || exp.getShift() != rowMax)
    return {};
  return matmul;
}

/// The sweeps must visit the same KV blocks (equal SSA values or constants).
static bool sameBounds(scf::ForOp a, scf::ForOp b) {
  return isEqualConstantIntOrValue(a.getLowerBound(), b.getLowerBound()) &&
         isEqualConstantIntOrValue(a.getUpperBound(), b.getUpperBound()) &&
         isEqualConstantIntOrValue(a.getStep(), b.getStep());
}

/// Finds the sweeps that consume a row-max loop's result.
static FailureOr<SafeSoftmaxSweeps> matchSweeps(scf::ForOp rowMaxLoop) {
  SafeSoftmaxSweeps sweeps;
  sweeps.rowMaxLoop = rowMaxLoop;
  sweeps.rowMax = matchRowMaxSweep(rowMaxLoop);
  if (!sweeps.rowMax)
    return failure();
  Value m = rowMaxLoop.getResult(0);
  for (Operation *user : m.getUsers()) {
    auto loop = user->getParentOfType<scf::ForOp>();
    while (loop && loop->getBlock() != rowMaxLoop->getBlock())
      loop = loop->getParentOfType<scf::ForOp>();
    if (!loop || !sameBounds(loop, rowMaxLoop))
      continue;
    if (isRowSumSweep(loop, m))
      sweeps.rowSumLoop = loop;
    else if (TileMatmulOp matmul = matchOutputSweep(loop, m)) {
      sweeps.outputLoop = loop;
      sweeps.probsTimesV = matmul;
    }
  }
  if (!sweeps.rowSumLoop || !sweeps.outputLoop)
    return failure();
  return sweeps;
}

/// Clones into the builder's block the ops of `loop` that `root` depends on,
/// with the loop's induction variable mapped to `iv`; returns root's clone.
static Value cloneSliceOf(OpBuilder &b, scf::ForOp loop, Value root, Value iv,
                          IRMapping &mapping) {
  mapping.map(loop.getInductionVar(), iv);
  BackwardSliceOptions options;
  options.inclusive = true;
  // tensor.pad yields a padding value defined outside its region.
  options.omitUsesFromAbove = false;
  options.filter = [&](Operation *op) {
    return loop->isProperAncestor(op);
  };
  SetVector<Operation *> slice;
  (void)getBackwardSlice(root, &slice, options);
  for (Operation *op : slice)
    b.clone(*op, mapping);
  return mapping.lookup(root);
}

/// Moves the (side-effect free) ops computing `value` above `point` when they
/// sit after it in the same block: the fused loop replaces the first sweep,
/// but the sum and output sweeps' inits are built after that sweep.
static void hoistAbove(RewriterBase &rewriter, Value value, Operation *point) {
  Operation *def = value.getDefiningOp();
  if (!def || def->getBlock() != point->getBlock() ||
      def->isBeforeInBlock(point))
    return;
  for (Value operand : def->getOperands())
    hoistAbove(rewriter, operand, point);
  rewriter.moveOpBefore(def, point);
}

struct FuseOnlineSoftmax : OpRewritePattern<scf::ForOp> {
  FuseOnlineSoftmax(MLIRContext *context, bool omitRescale)
      : OpRewritePattern(context), omitRescale(omitRescale) {}

  LogicalResult matchAndRewrite(scf::ForOp rowMaxLoop,
                                PatternRewriter &rewriter) const override {
    FailureOr<SafeSoftmaxSweeps> sweeps = matchSweeps(rowMaxLoop);
    if (failed(sweeps))
      return rewriter.notifyMatchFailure(rowMaxLoop, "not a row-max sweep");
    Location loc = rowMaxLoop.getLoc();
    scf::ForOp outputLoop = sweeps->outputLoop;
    Value initMax = rowMaxLoop.getInitArgs()[0];
    Value initSum = sweeps->rowSumLoop.getInitArgs()[0];
    Value initAcc = outputLoop.getInitArgs()[0];

    for (Value init : {initSum, initAcc})
      hoistAbove(rewriter, init, rowMaxLoop);
    rewriter.setInsertionPoint(rowMaxLoop);
    auto fused = scf::ForOp::create(
        rewriter, loc, rowMaxLoop.getLowerBound(), rowMaxLoop.getUpperBound(),
        rowMaxLoop.getStep(), ValueRange{initMax, initSum, initAcc},
        [&](OpBuilder &b, Location, Value k0, ValueRange state) {
          Value runningMax = state[0], runningSum = state[1], acc = state[2];
          // S in log2 units: the row-max sweep's score tile, with log2(e)
          // folded into its scale.
          IRMapping scoreMapping;
          Value scores = cloneSliceOf(b, rowMaxLoop,
                                      sweeps->rowMax.getInput(), k0,
                                      scoreMapping);
          // The ALiBi bias and a score_mod must work in the units of the
          // scores they get.
          for (Operation &op : *b.getInsertionBlock()) {
            if (auto qk = dyn_cast<QKScoresOp>(op))
              qk.setLog2Domain(true);
            else if (auto alibi = dyn_cast<AlibiBiasOp>(op))
              alibi.setLog2Domain(true);
            else if (auto mod = dyn_cast<ScoreModOp>(op))
              mod.setLog2Domain(true);
          }
          IRMapping valueMapping;
          Value valueTile = cloneSliceOf(
              b, outputLoop, sweeps->probsTimesV.getRhs(), k0, valueMapping);

          // m_new = max(m, rowmax(S))
          Value blockMax =
              RowMaxOp::create(b, loc, runningMax.getType(), scores);
          Value newMax = arith::MaxNumFOp::create(b, loc, runningMax, blockMax);
          // alpha = exp2(m - m_new): how much the old terms shrink.
          Value rescale = ExpShiftedOp::create(b, loc, runningMax.getType(), runningMax, newMax,
                                               b.getUnitAttr());
          // P = exp2(S - m_new)
          Value probs =
              ExpShiftedOp::create(b, loc, scores.getType(), scores, newMax, b.getUnitAttr());
          // l = alpha·l + rowsum(P);  acc = alpha·acc + P·V
          Value sumBefore = runningSum, accBefore = acc;
          if (!omitRescale) {
            sumBefore = arith::MulFOp::create(b, loc, runningSum, rescale);
            accBefore = ScaleRowsOp::create(b, loc, acc.getType(), acc, rescale);
          }
          Value newSum = arith::AddFOp::create(
              b, loc, sumBefore,
              RowSumOp::create(b, loc, runningSum.getType(), probs));
          // P rounded as the output sweep rounded it (e4m3 for an e4m3
          // MMA); unnormalised, still in [0, 1].
          Value mmaProbs = probs;
          Type mmaType = sweeps->probsTimesV.getLhs().getType();
          if (mmaType != probs.getType())
            mmaProbs = arith::TruncFOp::create(b, loc, mmaType, probs);
          Value newAcc = TileMatmulOp::create(b, loc, acc.getType(), mmaProbs,
                                              valueTile, accBefore, nullptr,
                                              nullptr, nullptr);
          scf::YieldOp::create(b, loc, ValueRange{newMax, newSum, newAcc});
        });

    // m back to natural-log units for LSE = m + log(l).
    Value maxLog2 = fused.getResult(0);
    TileBuilder tb(rewriter, loc);
    auto maxType = cast<RankedTensorType>(maxLog2.getType());
    Value rowMax = arith::MulFOp::create(
        rewriter, loc, maxLog2, tb.splat(maxType.getShape(), M_LN2));
    rewriter.replaceAllUsesWith(rowMaxLoop.getResult(0), rowMax);
    rewriter.replaceAllUsesWith(sweeps->rowSumLoop.getResult(0),
                                fused.getResult(1));

    // O = acc / l, with the 1/l (0 for a row with no key) the 3-pass form
    // already computes for its normalised P.
    ScaleRowsOp normalise = normalisedProbs(sweeps->probsTimesV);
    Value invSum = normalise.getFactor();
    rewriter.setInsertionPoint(outputLoop);
    Value output = ScaleRowsOp::create(rewriter, loc, fused.getResult(2).getType(), fused.getResult(2), invSum);
    rewriter.replaceAllUsesWith(outputLoop.getResult(0), output);

    rewriter.eraseOp(outputLoop);
    rewriter.eraseOp(sweeps->rowSumLoop);
    rewriter.eraseOp(rowMaxLoop);
    return success();
  }

  bool omitRescale;
};

struct FAFuseOnlineSoftmaxPass
    : fa::impl::FAFuseOnlineSoftmaxBase<FAFuseOnlineSoftmaxPass> {
  using FAFuseOnlineSoftmaxBase::FAFuseOnlineSoftmaxBase;

  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populateFuseOnlineSoftmaxPatterns(patterns, testOmitRescale);
    // Only the loops present now are candidates; the driver may erase the
    // sibling sweeps a match consumes, which a plain walk could not allow.
    SmallVector<Operation *> loops;
    getOperation().walk([&](scf::ForOp loop) { loops.push_back(loop); });
    GreedyRewriteConfig config;
    config.setStrictness(GreedyRewriteStrictness::ExistingOps)
        .enableFolding(false)
        .enableConstantCSE(false);
    (void)applyOpPatternsGreedily(loops, std::move(patterns), config);
  }
};

} // namespace

void mlir::fa::populateFuseOnlineSoftmaxPatterns(RewritePatternSet &patterns,
                                                 bool omitRescale) {
  patterns.add<FuseOnlineSoftmax>(patterns.getContext(), omitRescale);
}
