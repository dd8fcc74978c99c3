//===- RaiseAttention.cpp - attention in linalg to fa.attention -----------===//
//
// Part of fa-mlir.
//
// fa-raise-attention: finds softmax(mask(scale · Q Kᵀ)) · V written in
// linalg on tensors, as frontends emit it, and rewrites it into one
// fa.attention, so that the whole pipeline (tiling, online softmax, the
// GPU kernels) applies. The match starts at the P·V contraction and walks
// up its operands:
//
//   P·V      a contraction (linalg.batch_matmul, linalg.matmul, or a
//            linalg.generic of a contraction body) of P [.., M, N] and
//            V [.., N, Dv], accumulating into zeros
//   P        linalg.softmax over the last dimension, or its decomposed form
//            (max-reduce, subtract, exp, sum-reduce, divide; the subtract
//            and exp fused or not), as MLIR's decomposition and the usual
//            torch-mlir / StableHLO lowerings write it
//   mask     optional: an additive causal mask, a constant upper-
//            triangular −inf or built from linalg.index comparisons (in
//            the same body or as a mask tensor of its own)
//   scale    optional: a multiply or divide by a constant
//   Q Kᵀ     a contraction of Q [.., M, D] with K [.., N, D] read
//            transposed (by its indexing map or a linalg.transpose)
//   GQA      K and V [B, Hkv, N, D] broadcast over the heads of a group
//            (linalg.broadcast, collapsed to [B, Hq, N, D]): fa.attention
//            takes the [B, Hkv, N, D] tensors
//
// with 2-D, 3-D ([B·H, S, D]) or 4-D ([B, H, S, D]) operands and f16 or
// bf16 elements. Anything else stays as it is: a near miss (a softmax
// over another dimension, a mask that is not causal, a scale that is not
// a constant, an accumulator that is not zero) is not attention. f32
// attention is left with a remark: no backend computes fa.attention in f32.
// The raised op computes the softmax in f32 (fa.attention's semantics),
// where the linalg form may have rounded it to the input type.
//
//===----------------------------------------------------------------------===//

#include "fa/Dialect/FA/IR/FADialect.h"
#include "fa/Dialect/FA/IR/FAOps.h"
#include "fa/Dialect/FA/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/IR/LinalgInterfaces.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include <cmath>
#include <optional>

namespace mlir {
namespace fa {
#define GEN_PASS_DEF_FARAISEATTENTION
#include "fa/Dialect/FA/Transforms/Passes.h.inc"
} // namespace fa
} // namespace mlir

using namespace mlir;
using namespace mlir::fa;

namespace {

/// Whether `map` reads exactly `dims`, in that order.
bool readsDims(AffineMap map, ArrayRef<unsigned> dims) {
  if (map.getNumResults() != dims.size())
    return false;
  for (auto [result, dim] : llvm::zip(map.getResults(), dims)) {
    auto d = dyn_cast<AffineDimExpr>(result);
    if (!d || d.getPosition() != dim)
      return false;
  }
  return true;
}

/// Whether `v` is a tensor of a constant that `accept` takes (a splat
/// constant or a linalg.fill of one).
bool isFilledWith(Value v, function_ref<bool(const APFloat &)> accept) {
  auto equals = [&](Attribute attr) {
    auto f = dyn_cast_or_null<FloatAttr>(attr);
    return f && accept(f.getValue());
  };
  if (auto fill = v.getDefiningOp<linalg::FillOp>()) {
    Attribute scalar;
    return matchPattern(fill.getInputs()[0], m_Constant(&scalar)) && equals(scalar);
  }
  DenseElementsAttr dense;
  return matchPattern(v, m_Constant(&dense)) && dense.isSplat() &&
         equals(dense.getSplatValue<Attribute>());
}

bool isZero(const APFloat &x) { return x.isZero(); }
/// A max-reduction's identity: −inf, or the lowest finite value of the type
/// (as some lowerings write it).
bool isLowest(const APFloat &x) {
  return (x.isInfinity() && x.isNegative()) ||
         x == APFloat::getLargest(x.getSemantics(), /*Negative=*/true);
}

/// out[batch.., m, n] = Σ_k lhs[batch.., m, k] · rhs, rhs read as
/// [batch.., k, n] or (`rhsTransposed`) [batch.., n, k], into zeros.
struct Contraction {
  Value lhs, rhs;
  bool rhsTransposed = false;
};

std::optional<Contraction> matchContraction(Value v) {
  auto op = v.getDefiningOp<linalg::LinalgOp>();
  if (!op || op->getNumResults() != 1 || op.getNumDpsInputs() != 2 ||
      !linalg::isaContractionOpInterface(op))
    return std::nullopt;
  FailureOr<linalg::ContractionDimensions> dims = linalg::inferContractionDims(op);
  if (failed(dims) || dims->m.size() != 1 || dims->n.size() != 1 ||
      dims->k.size() != 1 || dims->batch.size() > 2)
    return std::nullopt;
  SmallVector<unsigned> batch(dims->batch.begin(), dims->batch.end());
  auto with = [&](std::initializer_list<unsigned> tail) {
    SmallVector<unsigned> order = batch;
    order.append(tail);
    return order;
  };
  unsigned m = dims->m[0], n = dims->n[0], k = dims->k[0];
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  if (!readsDims(maps[0], with({m, k})) || !readsDims(maps[2], with({m, n})) ||
      !isFilledWith(op.getDpsInits()[0], isZero))
    return std::nullopt;
  Contraction c{op.getDpsInputs()[0], op.getDpsInputs()[1]};
  if (readsDims(maps[1], with({n, k})))
    c.rhsTransposed = true;
  else if (!readsDims(maps[1], with({k, n})))
    return std::nullopt;
  return c;
}

/// The one scalar op of an elementwise linalg op's body (all loops
/// parallel, the result written by the identity map), and how its inputs
/// are read.
struct Elementwise {
  mutable linalg::LinalgOp op; // (its accessors are not const)
  Operation *scalar = nullptr;
};

std::optional<Elementwise> matchElementwise(Value v) {
  auto op = v.getDefiningOp<linalg::LinalgOp>();
  if (!op || op->getNumResults() != 1 || op.getNumDpsInits() != 1 ||
      op.getNumLoops() != op.getNumParallelLoops() ||
      !op.getMatchingIndexingMap(op.getDpsInitOperand(0)).isIdentity())
    return std::nullopt;
  Block *body = op.getBlock();
  auto yield = cast<linalg::YieldOp>(body->getTerminator());
  Operation *scalar = yield.getValues()[0].getDefiningOp();
  if (!scalar || scalar->getBlock() != body)
    return std::nullopt;
  return Elementwise{op, scalar};
}

/// The tensor input behind block argument `arg` of `e`, and its map.
std::pair<Value, AffineMap> inputOf(const Elementwise &e, Value arg) {
  auto blockArg = dyn_cast<BlockArgument>(arg);
  if (!blockArg || blockArg.getOwner() != e.op.getBlock() ||
      blockArg.getArgNumber() >= e.op.getNumDpsInputs())
    return {};
  OpOperand *operand = e.op.getDpsInputOperand(blockArg.getArgNumber());
  return {operand->get(), e.op.getMatchingIndexingMap(operand)};
}

/// The tensor `arg` reads at every point (its map the identity), or null.
Value fullInput(const Elementwise &e, Value arg) {
  auto [tensor, map] = inputOf(e, arg);
  return tensor && map.isIdentity() ? tensor : Value();
}

/// A float constant: a constant scalar in or outside the body, or an input
/// that is a splat constant tensor.
std::optional<double> constantOf(const Elementwise &e, Value arg) {
  FloatAttr f;
  if (matchPattern(arg, m_Constant(&f)))
    return f.getValueAsDouble();
  auto [tensor, map] = inputOf(e, arg);
  DenseElementsAttr dense;
  if (tensor && matchPattern(tensor, m_Constant(&dense)) && dense.isSplat())
    if (auto splat = dyn_cast<FloatAttr>(dense.getSplatValue<Attribute>()))
      return splat.getValueAsDouble();
  return std::nullopt;
}

/// A reduction over the last dimension with `Combiner` (arith.maxnumf /
/// maximumf for max, arith.addf for sum) from `identity`: its input.
template <typename... Combiner>
Value matchLastDimReduction(Value v, function_ref<bool(const APFloat &)> identity) {
  auto op = v ? v.getDefiningOp<linalg::LinalgOp>() : linalg::LinalgOp();
  if (!op || op->getNumResults() != 1 || op.getNumDpsInputs() != 1 ||
      op.getNumReductionLoops() != 1 || !isFilledWith(op.getDpsInits()[0], identity))
    return Value();
  unsigned rank = op.getNumLoops();
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  SmallVector<unsigned> outer = llvm::to_vector(llvm::seq<unsigned>(0, rank - 1));
  if (iterators.back() != utils::IteratorType::reduction ||
      !op.getMatchingIndexingMap(op.getDpsInputOperand(0)).isIdentity() ||
      !readsDims(op.getMatchingIndexingMap(op.getDpsInitOperand(0)), outer))
    return Value();
  auto yield = cast<linalg::YieldOp>(op.getBlock()->getTerminator());
  Operation *combiner = yield.getValues()[0].getDefiningOp();
  if (!combiner || !isa<Combiner...>(combiner))
    return Value();
  return op.getDpsInputs()[0];
}

/// The tensor [.., rows] that `arg` (a body argument of `e`) reads
/// broadcast along the last dimension (by its map, or through a
/// linalg.broadcast of that dimension), or null.
Value rowBroadcastSource(const Elementwise &e, Value arg) {
  auto [tensor, map] = inputOf(e, arg);
  if (!tensor)
    return Value();
  unsigned rank = map.getNumDims();
  if (auto broadcast = tensor.getDefiningOp<linalg::BroadcastOp>()) {
    ArrayRef<int64_t> dims = broadcast.getDimensions();
    return map.isIdentity() && dims.size() == 1 && dims[0] == int64_t(rank) - 1
               ? broadcast.getInput()
               : Value();
  }
  return readsDims(map, llvm::to_vector(llvm::seq<unsigned>(0, rank - 1))) ? tensor
                                                                           : Value();
}

/// softmax(x) over the last dimension: x.
Value matchSoftmax(Value v) {
  if (auto softmax = v.getDefiningOp<linalg::SoftmaxOp>()) {
    auto type = cast<RankedTensorType>(softmax.getInput().getType());
    return softmax.getDimension() == uint64_t(type.getRank() - 1) ? softmax.getInput()
                                                                  : Value();
  }
  // div(E, broadcast(sum(E))), E = exp(x - broadcast(max(x))).
  std::optional<Elementwise> div = matchElementwise(v);
  if (!div || !isa<arith::DivFOp>(div->scalar))
    return Value();
  Value exps = fullInput(*div, div->scalar->getOperand(0));
  Value summed = matchLastDimReduction<arith::AddFOp>(
      rowBroadcastSource(*div, div->scalar->getOperand(1)), isZero);
  if (!exps || summed != exps)
    return Value();
  std::optional<Elementwise> exp = matchElementwise(exps);
  if (!exp || !isa<math::ExpOp>(exp->scalar))
    return Value();
  // The subtraction in the exp's body (MLIR's decomposition fuses them),
  // or an elementwise op of its own.
  Operation *sub = exp->scalar->getOperand(0).getDefiningOp();
  Elementwise subOwner = *exp;
  if (!sub || sub->getBlock() != exp->op.getBlock()) {
    Value shifted = fullInput(*exp, exp->scalar->getOperand(0));
    std::optional<Elementwise> own = shifted ? matchElementwise(shifted) : std::nullopt;
    if (!own)
      return Value();
    subOwner = *own;
    sub = own->scalar;
  }
  if (!isa<arith::SubFOp>(sub))
    return Value();
  Value x = fullInput(subOwner, sub->getOperand(0));
  Value maxed = matchLastDimReduction<arith::MaxNumFOp, arith::MaximumFOp>(
      rowBroadcastSource(subOwner, sub->getOperand(1)), isLowest);
  return x && maxed == x ? x : Value();
}

/// Whether the constant mask `mask` ([.., M, N], every leading slice alike)
/// is −inf exactly where key j is after query i (j > i, `topLeft`) or after
/// i + N − M (bottom-right), and 0 elsewhere.
bool isCausalConstant(DenseElementsAttr mask, bool topLeft) {
  ArrayRef<int64_t> shape = mask.getType().getShape();
  if (shape.size() < 2)
    return false;
  int64_t rows = shape[shape.size() - 2], cols = shape.back();
  int64_t shift = topLeft ? 0 : cols - rows;
  auto values = mask.getValues<APFloat>();
  int64_t slices = mask.getNumElements() / (rows * cols);
  for (int64_t s = 0; s < slices; ++s)
    for (int64_t i = 0; i < rows; ++i)
      for (int64_t j = 0; j < cols; ++j) {
        APFloat value = values[(s * rows + i) * cols + j];
        bool hidden = j > i + shift;
        if (hidden ? !(value.isInfinity() && value.isNegative()) : !value.isZero())
          return false;
      }
  return true;
}

/// select(j > i, −inf, 0) on the last two loops' linalg.index values, the
/// iota form of the top-left causal mask (j > i also as i < j).
bool isIotaCausal(Operation *select, unsigned rank) {
  auto sel = dyn_cast_or_null<arith::SelectOp>(select);
  if (!sel)
    return false;
  FloatAttr hidden, shown;
  auto cmp = sel.getCondition().getDefiningOp<arith::CmpIOp>();
  if (!cmp || !matchPattern(sel.getTrueValue(), m_Constant(&hidden)) ||
      !matchPattern(sel.getFalseValue(), m_Constant(&shown)) ||
      !hidden.getValue().isInfinity() || !hidden.getValue().isNegative() ||
      !shown.getValue().isZero())
    return false;
  auto dimOf = [](Value v) -> std::optional<uint64_t> {
    if (auto index = v.getDefiningOp<linalg::IndexOp>())
      return index.getDim();
    return std::nullopt;
  };
  std::optional<uint64_t> lhs = dimOf(cmp.getLhs()), rhs = dimOf(cmp.getRhs());
  if (!lhs || !rhs)
    return false;
  uint64_t row = rank - 2, col = rank - 1;
  switch (cmp.getPredicate()) {
  case arith::CmpIPredicate::sgt:
  case arith::CmpIPredicate::ugt:
    return *lhs == col && *rhs == row;
  case arith::CmpIPredicate::slt:
  case arith::CmpIPredicate::ult:
    return *lhs == row && *rhs == col;
  default:
    return false;
  }
}

/// Whether a mask read by `map` (in a `rank`-loop op) is [.., M, N] read at
/// the last two loops (query, key), each leading dimension either a loop's
/// own (every slice is then checked) or a unit one read at 0 (broadcast).
bool readsMaskLayout(AffineMap map, unsigned rank) {
  unsigned results = map.getNumResults();
  if (results < 2 || results > rank)
    return false;
  unsigned offset = rank - results;
  for (unsigned r = 0; r < results; ++r) {
    AffineExpr e = map.getResult(r);
    auto dim = dyn_cast<AffineDimExpr>(e);
    if (dim && dim.getPosition() == offset + r)
      continue;
    auto zero = dyn_cast<AffineConstantExpr>(e);
    if (r + 2 < results && zero && zero.getValue() == 0)
      continue;
    return false;
  }
  return true;
}

/// The causal mask `other` adds in `e`'s body, if it is one: built there
/// from linalg.index, or a constant input read at the last two loops.
std::optional<MaskKind> causalMaskOf(const Elementwise &e, Value other) {
  unsigned rank = e.op.getNumLoops();
  if (Operation *def = other.getDefiningOp();
      def && def->getBlock() == e.op.getBlock() && isIotaCausal(def, rank))
    return MaskKind::CausalTopLeft;
  auto [mask, map] = inputOf(e, other);
  if (!mask || !readsMaskLayout(map, rank))
    return std::nullopt;
  // A mask tensor of its own, built from linalg.index (as StableHLO's iota
  // and compare lower): its body yields the select.
  if (std::optional<Elementwise> built = matchElementwise(mask)) {
    Value yielded =
        cast<linalg::YieldOp>(built->op.getBlock()->getTerminator()).getValues()[0];
    if (isIotaCausal(yielded.getDefiningOp(), built->op.getNumLoops()) &&
        built->op.getNumDpsInputs() == 0)
      return MaskKind::CausalTopLeft;
    return std::nullopt;
  }
  DenseElementsAttr dense;
  if (!matchPattern(mask, m_Constant(&dense)))
    return std::nullopt;
  if (isCausalConstant(dense, /*topLeft=*/true))
    return MaskKind::CausalTopLeft;
  if (isCausalConstant(dense, /*topLeft=*/false))
    return MaskKind::Causal;
  return std::nullopt;
}

/// What the scores go through between Q·Kᵀ and the softmax.
struct ScoreModifiers {
  Value product;             ///< the Q·Kᵀ tensor
  MaskKind mask = MaskKind::None;
  double scale = 1.0;
};

/// Walks from the softmax's input back to the Q·Kᵀ tensor through
/// elementwise ops, each one's body read as a scalar expression (fused
/// bodies and one op per step alike): at most one multiply or divide by a
/// constant (the scale) and one addition of a causal mask. Fails on
/// anything else: a scale that is not a constant, a mask that is not
/// causal, any other arithmetic.
FailureOr<ScoreModifiers> matchScoreModifiers(Value logits) {
  ScoreModifiers m;
  bool scaled = false, masked = false;
  Value tensor = logits;
  while (std::optional<Elementwise> e = matchElementwise(tensor)) {
    Value x = cast<linalg::YieldOp>(e->op.getBlock()->getTerminator()).getValues()[0];
    Value next;
    while (!next) {
      if (Value full = fullInput(*e, x)) {
        next = full;
        break;
      }
      Operation *def = x.getDefiningOp();
      if (!def || def->getBlock() != e->op.getBlock())
        return failure();
      if (isa<arith::AddFOp>(def) && !masked) {
        std::optional<MaskKind> kind;
        int side = 0;
        for (; side < 2 && !kind; ++side)
          kind = causalMaskOf(*e, def->getOperand(1 - side));
        if (!kind)
          return failure(); // an addition, but not of a causal mask
        m.mask = *kind;
        masked = true;
        x = def->getOperand(side - 1);
        continue;
      }
      if (isa<arith::MulFOp, arith::DivFOp>(def) && !scaled) {
        bool divide = isa<arith::DivFOp>(def);
        std::optional<double> c;
        int side = 0;
        for (; side < (divide ? 1 : 2) && !c; ++side)
          c = constantOf(*e, def->getOperand(1 - side));
        if (!c || *c == 0.0)
          return failure(); // scaled, but not by a constant
        m.scale = divide ? 1.0 / *c : *c;
        scaled = true;
        x = def->getOperand(side - 1);
        continue;
      }
      return failure();
    }
    if (next == tensor)
      return failure();
    tensor = next;
  }
  m.product = tensor;
  return m;
}

/// K from the QKᵀ contraction's right operand: read transposed by the map,
/// or a linalg.transpose of the last two dimensions of K.
Value keyOf(const Contraction &scores) {
  if (scores.rhsTransposed)
    return scores.rhs;
  auto transpose = scores.rhs.getDefiningOp<linalg::TransposeOp>();
  if (!transpose)
    return Value();
  ArrayRef<int64_t> perm = transpose.getPermutation();
  int64_t rank = perm.size();
  for (int64_t d = 0; d < rank - 2; ++d)
    if (perm[d] != d)
      return Value();
  return perm[rank - 2] == rank - 1 && perm[rank - 1] == rank - 2 ? transpose.getInput()
                                                                  : Value();
}

/// GQA as frontends write it: K or V [B, Hkv, N, D] broadcast to
/// [B, Hkv, G, N, D] (linalg.broadcast of dimension 2, from the 4-D tensor
/// or from its [B, Hkv, 1, N, D] expansion) and collapsed to
/// [B, Hkv·G, N, D]: the [B, Hkv, N, D] tensor, which fa.attention reads
/// per group itself; `v` itself otherwise.
Value headBroadcastSource(Value v) {
  auto collapse = v.getDefiningOp<tensor::CollapseShapeOp>();
  SmallVector<ReassociationIndices> headsMerged = {{0}, {1, 2}, {3}, {4}};
  if (!collapse || collapse.getReassociationIndices() != headsMerged)
    return v;
  auto broadcast = collapse.getSrc().getDefiningOp<linalg::BroadcastOp>();
  if (!broadcast || broadcast.getDimensions() != ArrayRef<int64_t>{2})
    return v;
  Value source = broadcast.getInput();
  if (auto expand = source.getDefiningOp<tensor::ExpandShapeOp>();
      expand && expand.getReassociationIndices() == headsMerged &&
      expand.getResultType().getDimSize(2) == 1)
    source = expand.getSrc();
  return cast<RankedTensorType>(source.getType()).getRank() == 4 ? source : v;
}

/// How a rank-3 [B·H, S, D] or rank-2 [S, D] tensor maps onto
/// [B, H, S, D]: the reassociation of the expand and of the collapse back.
SmallVector<ReassociationIndices> fourDimGroups(int64_t rank) {
  return rank == 3 ? SmallVector<ReassociationIndices>{{0, 1}, {2}, {3}}
                   : SmallVector<ReassociationIndices>{{0, 1, 2}, {3}};
}

/// `v` as [B, H, S, D]: 4-D as it is, 3-D [B·H, S, D] as [B·H, 1, S, D],
/// 2-D [S, D] as [1, 1, S, D].
Value toFourDims(PatternRewriter &rewriter, Location loc, Value v) {
  auto type = cast<RankedTensorType>(v.getType());
  if (type.getRank() == 4)
    return v;
  SmallVector<int64_t> shape = {1, 1};
  if (type.getRank() == 3)
    shape = {type.getDimSize(0), 1};
  shape.append({type.getDimSize(type.getRank() - 2), type.getDimSize(type.getRank() - 1)});
  return tensor::ExpandShapeOp::create(rewriter, loc, type.clone(shape), v,
                                       fourDimGroups(type.getRank()));
}

struct RaiseAttentionPattern : OpInterfaceRewritePattern<linalg::LinalgOp> {
  using OpInterfaceRewritePattern::OpInterfaceRewritePattern;

  LogicalResult matchAndRewrite(linalg::LinalgOp op,
                                PatternRewriter &rewriter) const override {
    if (op->getNumResults() != 1)
      return failure();
    Value result = op->getResult(0);
    std::optional<Contraction> pv = matchContraction(result);
    if (!pv || pv->rhsTransposed)
      return rewriter.notifyMatchFailure(op, "not P·V");
    Value logits = matchSoftmax(pv->lhs);
    if (!logits)
      return rewriter.notifyMatchFailure(op, "P is not a softmax over keys");
    FailureOr<ScoreModifiers> modifiers = matchScoreModifiers(logits);
    if (failed(modifiers))
      return rewriter.notifyMatchFailure(
          op, "the scores go through more than a constant scale and a causal mask");
    MaskKind mask = modifiers->mask;
    std::optional<Contraction> qk = matchContraction(modifiers->product);
    Value key = qk ? keyOf(*qk) : Value();
    if (!key)
      return rewriter.notifyMatchFailure(op, "the scores are not Q·Kᵀ");
    Value query = qk->lhs, value = pv->rhs;
    // GQA: both K and V broadcast from the same KV heads; otherwise the
    // broadcast tensors are the (MHA) operands.
    Value keyHeads = headBroadcastSource(key), valueHeads = headBroadcastSource(value);
    if (keyHeads != key && valueHeads != value &&
        cast<RankedTensorType>(keyHeads.getType()).getDimSize(1) ==
            cast<RankedTensorType>(valueHeads.getType()).getDimSize(1)) {
      key = keyHeads;
      value = valueHeads;
    }
    auto queryType = cast<RankedTensorType>(query.getType());
    auto resultType = cast<RankedTensorType>(result.getType());
    Type element = queryType.getElementType();
    if (cast<RankedTensorType>(key.getType()).getElementType() != element ||
        cast<RankedTensorType>(value.getType()).getElementType() != element ||
        resultType.getElementType() != element)
      return rewriter.notifyMatchFailure(op, "mixed element types");
    if (element.isF32()) {
      op->emitRemark("fa-raise-attention: attention in f32 left as it is "
                     "(fa.attention takes f16, bf16 or f8E4M3FN; no backend "
                     "computes it in f32)");
      return failure();
    }
    if (!element.isF16() && !element.isBF16())
      return rewriter.notifyMatchFailure(op, "not f16 or bf16");
    Location loc = op.getLoc();
    Value q = toFourDims(rewriter, loc, query), k = toFourDims(rewriter, loc, key),
          v = toFourDims(rewriter, loc, value);
    auto qType = cast<RankedTensorType>(q.getType());
    auto vType = cast<RankedTensorType>(v.getType());
    auto outType = qType.clone({qType.getDimSize(0), qType.getDimSize(1),
                                qType.getDimSize(2), vType.getDimSize(3)});
    auto attention = AttentionOp::create(
        rewriter, loc, outType, /*lse=*/Type(), q, k, v, ValueRange{},
        /*alibi_slopes=*/Value(), /*captures=*/ValueRange{},
        mask == MaskKind::None ? MaskAttr() : MaskAttr::get(getContext(), mask),
        rewriter.getF32FloatAttr(static_cast<float>(modifiers->scale)),
        /*softcap=*/FloatAttr(), /*tile=*/TileAttr(),
        /*block_sparse=*/BlockSparseAttr());
    Value out = attention.getOutput();
    if (resultType.getRank() != 4)
      out = tensor::CollapseShapeOp::create(rewriter, loc, resultType, out,
                                            fourDimGroups(resultType.getRank()));
    rewriter.replaceOp(op, out);
    return success();
  }
};

struct FARaiseAttentionPass
    : public fa::impl::FARaiseAttentionBase<FARaiseAttentionPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populateRaiseAttentionPatterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace

void mlir::fa::populateRaiseAttentionPatterns(RewritePatternSet &patterns) {
  patterns.add<RaiseAttentionPattern>(patterns.getContext());
}
