//===- PackCarriedPatterns.cpp - sub-word vectors carried as i32 words ----===//
//
// Part of fa-mlir.
//
// A fragment of 16-bit (or 8-bit) elements that crosses a block boundary,
// as P does in the sm_90a pipelined loop (computed in iteration j, consumed
// by P·V in j + 1), is an LLVM phi of <N x bfloat>. Where N is not a power
// of two, LLVM's type legalization (getVectorTypeBreakdown) splits it into
// N scalars, and ptxas gives each 16-bit scalar a 32-bit register: at
// block_n 176 P took 88 registers instead of 44, enough to make the
// consumer warpgroup spill at 240. Carrying the same bits as <N/2 x i32>
// (one register per pair, as the MMA's A operand reads them) keeps the
// footprint; the bitcasts at the ends fold into the pairs' packing.
//
//===----------------------------------------------------------------------===//

#include "fa/Conversion/FAToGPU/FragmentPatterns.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include "llvm/ADT/bit.h"

using namespace mlir;
using namespace mlir::fa;

bool mlir::fa::isScalarizedSubwordVector(Type type) {
  auto vector = dyn_cast<VectorType>(type);
  if (!vector || vector.getRank() != 1 || vector.isScalable())
    return false;
  unsigned bits = vector.getElementTypeBitWidth();
  int64_t count = vector.getDimSize(0);
  return bits < 32 && (count * bits) % 32 == 0 &&
         !llvm::has_single_bit(static_cast<uint64_t>(count));
}

/// The i32 vector of the same bits.
static VectorType wordsOf(Type type) {
  auto vector = cast<VectorType>(type);
  int64_t words = vector.getDimSize(0) * vector.getElementTypeBitWidth() / 32;
  return VectorType::get({words}, IntegerType::get(type.getContext(), 32));
}

static Value bitcastTo(OpBuilder &b, Location loc, Type type, Value value) {
  return vector::BitCastOp::create(b, loc, type, value);
}

/// `value` (such a vector) as words, built word by word: a bitcast of the
/// whole vector would not do, since LLVM's InstCombine turns a phi of
/// bitcasts back into a phi of the sub-word vector. A 16-bit vector
/// truncated from f32 is truncated pair by pair (cvt.rn.bf16x2.f32).
static Value packWords(OpBuilder &b, Location loc, Value value) {
  auto type = cast<VectorType>(value.getType());
  int64_t perWord = 32 / type.getElementTypeBitWidth();
  Value source = value;
  auto trunc = value.getDefiningOp<arith::TruncFOp>();
  bool pairwiseTrunc = trunc && perWord == 2;
  if (pairwiseTrunc)
    source = trunc.getIn();
  Type sourceElement = cast<VectorType>(source.getType()).getElementType();
  VectorType wordsType = wordsOf(type);
  auto oneWord = VectorType::get({1}, wordsType.getElementType());
  SmallVector<Value> words;
  for (int64_t w = 0; w < wordsType.getDimSize(0); ++w) {
    SmallVector<Value> elements;
    for (int64_t i = 0; i < perWord; ++i)
      elements.push_back(vector::ExtractOp::create(
          b, loc, source, ArrayRef<int64_t>{w * perWord + i}));
    Value group = vector::FromElementsOp::create(
        b, loc, VectorType::get({perWord}, sourceElement), elements);
    if (pairwiseTrunc)
      group = arith::TruncFOp::create(
          b, loc, VectorType::get({perWord}, type.getElementType()), group);
    words.push_back(vector::ExtractOp::create(
        b, loc, bitcastTo(b, loc, oneWord, group), ArrayRef<int64_t>{0}));
  }
  return vector::FromElementsOp::create(b, loc, wordsType, words);
}

namespace {
/// scf.for: each such iter_arg carried as words (SCF's own helper moves the
/// body and casts at the block argument, the yield and the results).
struct PackForIterArgs : OpRewritePattern<scf::ForOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(scf::ForOp loop,
                                PatternRewriter &rewriter) const override {
    for (OpOperand &init : loop.getInitArgsMutable()) {
      Type type = init.get().getType();
      if (!isScalarizedSubwordVector(type))
        continue;
      rewriter.setInsertionPoint(loop);
      Value words = bitcastTo(rewriter, loop.getLoc(), wordsOf(type), init.get());
      // Into the loop (the yielded value) word by word; out of it (the
      // block argument, the results) by a bitcast.
      auto cast = [](OpBuilder &b, Location loc, Type to, Value value) {
        return isScalarizedSubwordVector(value.getType()) ? packWords(b, loc, value)
                                                          : bitcastTo(b, loc, to, value);
      };
      SmallVector<Value> results =
          scf::replaceAndCastForOpIterArg(rewriter, loop, init, words, cast);
      rewriter.replaceOp(loop, results);
      return success(); // the new loop comes back for its other iter_args
    }
    return failure();
  }
};

/// scf.if: each such result yielded as words by both branches.
struct PackIfResults : OpRewritePattern<scf::IfOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(scf::IfOp branch,
                                PatternRewriter &rewriter) const override {
    if (!llvm::any_of(branch.getResultTypes(), isScalarizedSubwordVector) ||
        branch.getElseRegion().empty())
      return failure();
    SmallVector<Type> types;
    for (Type type : branch.getResultTypes())
      types.push_back(isScalarizedSubwordVector(type) ? wordsOf(type) : type);
    Location loc = branch.getLoc();
    rewriter.setInsertionPoint(branch);
    auto packed = scf::IfOp::create(rewriter, loc, types, branch.getCondition(),
                                    /*addThenBlock=*/false, /*addElseBlock=*/false);
    for (auto [from, to] : {std::pair{&branch.getThenRegion(), &packed.getThenRegion()},
                            std::pair{&branch.getElseRegion(), &packed.getElseRegion()}}) {
      rewriter.inlineRegionBefore(*from, *to, to->end());
      auto yield = cast<scf::YieldOp>(to->front().getTerminator());
      rewriter.setInsertionPoint(yield);
      SmallVector<Value> values;
      for (auto [value, type] : llvm::zip(yield.getOperands(), types))
        values.push_back(value.getType() == type ? value
                                                 : packWords(rewriter, loc, value));
      rewriter.modifyOpInPlace(yield, [&] { yield->setOperands(values); });
    }
    rewriter.setInsertionPointAfter(packed);
    SmallVector<Value> results;
    for (auto [old, now] : llvm::zip(branch.getResults(), packed.getResults()))
      results.push_back(old.getType() == now.getType()
                            ? now
                            : bitcastTo(rewriter, loc, old.getType(), now));
    rewriter.replaceOp(branch, results);
    return success();
  }
};
} // namespace

LogicalResult mlir::fa::packCarriedSubwordVectors(MLIRContext *context,
                                                  ArrayRef<Operation *> ops) {
  if (ops.empty())
    return success();
  RewritePatternSet patterns(context);
  patterns.add<PackForIterArgs, PackIfResults>(context);
  GreedyRewriteConfig config;
  // Only these ops and what the patterns make (vector.bitcast's folder
  // cancels the casts back to back): the rest of the kernel, and so every
  // kernel without such a vector, is left byte for byte.
  config.setStrictness(GreedyRewriteStrictness::ExistingAndNewOps);
  return applyOpPatternsGreedily(ops, std::move(patterns), config);
}
