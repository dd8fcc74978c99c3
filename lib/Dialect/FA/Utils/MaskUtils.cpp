//===- MaskUtils.cpp - the mask's semantics, as IR ------------------------===//
//
// Part of fa-mlir.
//
//===----------------------------------------------------------------------===//

#include "fa/Dialect/FA/Utils/MaskUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Matchers.h"

#include <cstdlib>

using namespace mlir;
using namespace mlir::fa;

namespace {
/// Index arithmetic shorthands at one location.
struct IndexMath {
  OpBuilder &b;
  Location loc;
  Value constant(int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); }
  Value add(Value x, Value y) { return arith::AddIOp::create(b, loc, x, y); }
  Value sub(Value x, Value y) { return arith::SubIOp::create(b, loc, x, y); }
  Value cmp(arith::CmpIPredicate p, Value x, Value y) {
    return arith::CmpIOp::create(b, loc, p, x, y);
  }
  Value both(Value x, Value y) { return arith::AndIOp::create(b, loc, x, y); }
  Value min(Value x, Value y) { return arith::MinSIOp::create(b, loc, x, y); }
  Value max(Value x, Value y) { return arith::MaxSIOp::create(b, loc, x, y); }
};
} // namespace

Value mlir::fa::buildKeyVisible(OpBuilder &b, Location loc, MaskAttr mask,
                                Value query, Value key, Value queryLen,
                                Value keyLen) {
  using Pred = arith::CmpIPredicate;
  IndexMath m{b, loc};
  // Keys past N are padding of a partial last tile: never visible.
  Value visible = m.cmp(Pred::slt, key, keyLen);
  // Bottom-right alignment: query i sits on key i + N - M.
  Value diagonal = m.add(query, m.sub(keyLen, queryLen));
  switch (mask.getKind()) {
  case MaskKind::None:
    break;
  case MaskKind::Causal:
    visible = m.both(visible, m.cmp(Pred::sle, key, diagonal));
    break;
  case MaskKind::CausalTopLeft:
    visible = m.both(visible, m.cmp(Pred::sle, key, query));
    break;
  case MaskKind::Window:
    if (mask.getLeft() >= 0)
      visible = m.both(visible, m.cmp(Pred::sge, key,
                                      m.sub(diagonal, m.constant(mask.getLeft()))));
    if (mask.getRight() >= 0)
      visible = m.both(visible, m.cmp(Pred::sle, key,
                                      m.add(diagonal, m.constant(mask.getRight()))));
    break;
  }
  return visible;
}

std::pair<Value, Value>
mlir::fa::buildVisibleKeyInterval(OpBuilder &b, Location loc, MaskAttr mask,
                                  Value query, Value queryLen, Value keyLen) {
  IndexMath m{b, loc};
  Value last = m.sub(keyLen, m.constant(1)); // keys past N never exist
  Value first;
  // Bottom-right alignment: query i sits on key i + N - M.
  Value diagonal = m.add(query, m.sub(keyLen, queryLen));
  auto lastAtMost = [&](Value bound) {
    last = arith::MinSIOp::create(b, loc, last, bound);
  };
  switch (mask.getKind()) {
  case MaskKind::None:
    break;
  case MaskKind::Causal:
    lastAtMost(diagonal);
    break;
  case MaskKind::CausalTopLeft:
    lastAtMost(query);
    break;
  case MaskKind::Window:
    if (mask.getLeft() >= 0)
      first = m.sub(diagonal, m.constant(mask.getLeft()));
    if (mask.getRight() >= 0)
      lastAtMost(m.add(diagonal, m.constant(mask.getRight())));
    break;
  }
  return {first, last};
}

std::pair<Value, Value>
mlir::fa::buildVisibleKeyRange(OpBuilder &b, Location loc, MaskAttr mask,
                               Value q0, Value rows, Value queryLen,
                               Value keyLen, int64_t blockN) {
  IndexMath m{b, loc};
  Value zero = m.constant(0);
  Value begin = zero, end = keyLen;
  Value shift = m.sub(keyLen, queryLen);
  Value lastQuery = m.sub(m.add(q0, rows), m.constant(1));
  // end = clamp(last visible key + 1, 0, N)
  auto clampEnd = [&](Value lastVisibleKey) {
    return m.min(keyLen, m.max(zero, m.add(lastVisibleKey, m.constant(1))));
  };
  switch (mask.getKind()) {
  case MaskKind::None:
    break;
  case MaskKind::Causal:
    end = clampEnd(m.add(lastQuery, shift));
    break;
  case MaskKind::CausalTopLeft:
    end = clampEnd(lastQuery);
    break;
  case MaskKind::Window:
    if (mask.getRight() >= 0)
      end = clampEnd(m.add(m.add(lastQuery, shift), m.constant(mask.getRight())));
    if (mask.getLeft() >= 0) {
      Value first =
          m.max(zero, m.sub(m.add(q0, shift), m.constant(mask.getLeft())));
      Value blocks = arith::DivUIOp::create(b, loc, first, m.constant(blockN));
      begin = arith::MulIOp::create(b, loc, blocks, m.constant(blockN));
    }
    break;
  }
  return {begin, end};
}

namespace {
/// a·kv_idx + b·q_idx + c, with `nonNegative` when every term is a
/// position or a constant >= 0 added up (so unsigned order is signed order).
struct PositionForm {
  int64_t kv = 0, q = 0, c = 0;
  bool nonNegative = true;
};

std::optional<PositionForm> positionFormOf(Value value, Block &body) {
  if (auto arg = dyn_cast<BlockArgument>(value)) {
    // mask_mod's arguments: (b, h, q_idx, kv_idx, captured...).
    if (arg.getOwner() != &body || (arg.getArgNumber() != 2 && arg.getArgNumber() != 3))
      return std::nullopt;
    PositionForm f;
    (arg.getArgNumber() == 2 ? f.q : f.kv) = 1;
    return f;
  }
  Operation *def = value.getDefiningOp();
  IntegerAttr constant;
  if (def && matchPattern(value, m_Constant(&constant))) {
    PositionForm f;
    f.c = constant.getValue().getSExtValue();
    f.nonNegative = f.c >= 0;
    return f;
  }
  if (!isa_and_nonnull<arith::AddIOp, arith::SubIOp>(def))
    return std::nullopt;
  auto lhs = positionFormOf(def->getOperand(0), body);
  auto rhs = positionFormOf(def->getOperand(1), body);
  if (!lhs || !rhs)
    return std::nullopt;
  int64_t sign = isa<arith::AddIOp>(def) ? 1 : -1;
  PositionForm f{lhs->kv + sign * rhs->kv, lhs->q + sign * rhs->q,
                 lhs->c + sign * rhs->c,
                 isa<arith::AddIOp>(def) && lhs->nonNegative && rhs->nonNegative};
  if (std::abs(f.kv) > 1 || std::abs(f.q) > 1 || std::abs(f.c) > (int64_t(1) << 40))
    return std::nullopt;
  return f;
}

/// Adds `e <= 0` (e = a·kv + b·q + c) to the band where it bounds kv;
/// false where it does not (the band then says less than the region).
bool addConstraint(MaskModKeyBand &band, PositionForm e) {
  auto tighten = [](std::optional<int64_t> &bound, int64_t value, bool upper) {
    bound = !bound ? value : upper ? std::min(*bound, value) : std::max(*bound, value);
  };
  if (e.kv == 1 && e.q == -1)
    tighten(band.fromQueryUpper, -e.c, true); // kv <= q - c
  else if (e.kv == -1 && e.q == 1)
    tighten(band.fromQueryLower, e.c, false); // kv >= q + c
  else if (e.kv == 1 && e.q == 0)
    tighten(band.upper, -e.c, true);
  else if (e.kv == -1 && e.q == 0)
    tighten(band.lower, e.c, false);
  else
    return false;
  return true;
}

/// Adds the conjuncts of `value` to the band; false where one of them was
/// left out.
bool collectConjuncts(Value value, Block &body, MaskModKeyBand &band) {
  Operation *def = value.getDefiningOp();
  if (auto both = dyn_cast_or_null<arith::AndIOp>(def)) {
    bool lhs = collectConjuncts(both.getLhs(), body, band);
    return collectConjuncts(both.getRhs(), body, band) && lhs;
  }
  auto cmp = dyn_cast_or_null<arith::CmpIOp>(def);
  if (!cmp)
    return false;
  auto lhs = positionFormOf(cmp.getLhs(), body);
  auto rhs = positionFormOf(cmp.getRhs(), body);
  if (!lhs || !rhs)
    return false;
  using P = arith::CmpIPredicate;
  P pred = cmp.getPredicate();
  bool isUnsigned = pred == P::ult || pred == P::ule || pred == P::ugt || pred == P::uge;
  if (isUnsigned && !(lhs->nonNegative && rhs->nonNegative))
    return false;
  PositionForm d{lhs->kv - rhs->kv, lhs->q - rhs->q, lhs->c - rhs->c, false};
  PositionForm negated{-d.kv, -d.q, -d.c, false};
  auto minusOne = [](PositionForm f) { return PositionForm{f.kv, f.q, f.c + 1, false}; };
  switch (pred) {
  case P::slt: case P::ult: return addConstraint(band, minusOne(d)); // d <= -1
  case P::sle: case P::ule: return addConstraint(band, d);
  case P::sgt: case P::ugt: return addConstraint(band, minusOne(negated)); // -d <= -1
  case P::sge: case P::uge: return addConstraint(band, negated);
  case P::eq: {
    bool upper = addConstraint(band, d);
    return addConstraint(band, negated) && upper;
  }
  case P::ne: break;
  }
  return false;
}
} // namespace

MaskModKeyBand mlir::fa::analyzeMaskModKeyBand(Region &maskMod) {
  MaskModKeyBand band;
  if (maskMod.empty())
    return band;
  Block &body = maskMod.front();
  band.exact = collectConjuncts(body.getTerminator()->getOperand(0), body, band);
  return band;
}

Value mlir::fa::buildTileLeavesBand(OpBuilder &b, Location loc,
                                    const MaskModKeyBand &band, Value q0,
                                    Value k0, int64_t rows, int64_t cols) {
  using Pred = arith::CmpIPredicate;
  IndexMath m{b, loc};
  Value lastQuery = m.add(q0, m.constant(rows - 1));
  Value lastKey = m.add(k0, m.constant(cols - 1));
  Value leaves = arith::ConstantIntOp::create(b, loc, 0, 1);
  auto orLeaves = [&](Value cut) {
    leaves = arith::OrIOp::create(b, loc, leaves, cut);
  };
  if (band.fromQueryUpper) // some key past the first query's last one
    orLeaves(m.cmp(Pred::sgt, lastKey, m.add(q0, m.constant(*band.fromQueryUpper))));
  if (band.fromQueryLower) // some key before the last query's first one
    orLeaves(m.cmp(Pred::slt, k0, m.add(lastQuery, m.constant(*band.fromQueryLower))));
  if (band.upper)
    orLeaves(m.cmp(Pred::sgt, lastKey, m.constant(*band.upper)));
  if (band.lower)
    orLeaves(m.cmp(Pred::slt, k0, m.constant(*band.lower)));
  return leaves;
}

std::pair<Value, Value>
mlir::fa::buildBandKeyRange(OpBuilder &b, Location loc,
                            const MaskModKeyBand &band, Value q0, Value rows,
                            Value keyLen, int64_t blockN) {
  IndexMath m{b, loc};
  Value zero = m.constant(0);
  Value lastQuery = m.sub(m.add(q0, rows), m.constant(1));
  Value first = zero, end = keyLen;
  if (band.lower)
    first = m.max(first, m.constant(*band.lower));
  if (band.fromQueryLower)
    first = m.max(first, m.add(q0, m.constant(*band.fromQueryLower)));
  if (band.upper)
    end = m.min(end, m.constant(*band.upper + 1));
  if (band.fromQueryUpper)
    end = m.min(end, m.add(lastQuery, m.constant(*band.fromQueryUpper + 1)));
  first = m.min(first, keyLen);
  Value blocks = arith::DivUIOp::create(b, loc, first, m.constant(blockN));
  Value begin = arith::MulIOp::create(b, loc, blocks, m.constant(blockN));
  return {begin, m.max(end, zero)};
}

std::pair<Value, Value>
mlir::fa::buildBandQueryRange(OpBuilder &b, Location loc,
                              const MaskModKeyBand &band, Value k0, Value cols,
                              Value queryLen, int64_t blockM) {
  IndexMath m{b, loc};
  Value zero = m.constant(0);
  Value lastKey = m.sub(m.add(k0, cols), m.constant(1));
  Value first = zero, end = queryLen;
  // kv <= q + c: q >= k0 - c; kv >= q + c: q <= lastKey - c.
  if (band.fromQueryUpper)
    first = m.max(first, m.sub(k0, m.constant(*band.fromQueryUpper)));
  if (band.fromQueryLower)
    end = m.min(end, m.add(m.sub(lastKey, m.constant(*band.fromQueryLower)),
                           m.constant(1)));
  // kv <= c or kv >= c: the block is seen by every query or by none.
  Value none = arith::ConstantIntOp::create(b, loc, b.getI1Type(), 0);
  if (band.upper)
    none = arith::OrIOp::create(
        b, loc, none, m.cmp(arith::CmpIPredicate::sgt, k0, m.constant(*band.upper)));
  if (band.lower)
    none = arith::OrIOp::create(
        b, loc, none, m.cmp(arith::CmpIPredicate::slt, lastKey, m.constant(*band.lower)));
  first = m.min(first, queryLen);
  Value blocks = arith::DivUIOp::create(b, loc, first, m.constant(blockM));
  Value begin = arith::MulIOp::create(b, loc, blocks, m.constant(blockM));
  end = arith::SelectOp::create(b, loc, none, begin, m.max(end, zero));
  return {begin, end};
}

std::pair<Value, Value>
mlir::fa::buildVisibleQueryRange(OpBuilder &b, Location loc, MaskAttr mask,
                                 Value k0, Value cols, Value queryLen,
                                 Value keyLen, int64_t blockM) {
  IndexMath m{b, loc};
  Value zero = m.constant(0);
  Value begin = zero, end = queryLen;
  // Query i sits on key i + shift (bottom-right alignment), so key j is on
  // query j - shift.
  Value shift = m.sub(keyLen, queryLen);
  Value lastKey = m.sub(m.add(k0, cols), m.constant(1));
  auto clamp = [&](Value row) { return m.min(queryLen, m.max(zero, row)); };
  switch (mask.getKind()) {
  case MaskKind::None:
    break;
  case MaskKind::Causal: // j <= i + shift: i >= k0 - shift
    begin = clamp(m.sub(k0, shift));
    break;
  case MaskKind::CausalTopLeft: // j <= i
    begin = clamp(k0);
    break;
  case MaskKind::Window: // i + shift - left <= j <= i + shift + right
    if (mask.getRight() >= 0)
      begin = clamp(m.sub(m.sub(k0, shift), m.constant(mask.getRight())));
    if (mask.getLeft() >= 0)
      end = clamp(m.add(m.sub(lastKey, shift), m.constant(mask.getLeft() + 1)));
    break;
  }
  // Keys no query sees (past the last query's reach: `begin` clamped to
  // M) visit no Q block; rounded down, `begin` would make them visit the
  // last one, which the Q blocks' own count of the KV blocks they see
  // (buildVisibleKeyRange) leaves out: the deterministic mode's turns in
  // decreasing KV-block order would then never come.
  Value none = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, begin, end);
  Value blocks = arith::DivUIOp::create(b, loc, begin, m.constant(blockM));
  begin = arith::MulIOp::create(b, loc, blocks, m.constant(blockM));
  end = arith::SelectOp::create(b, loc, none, begin, end);
  return {begin, end};
}

Value mlir::fa::buildTileNeedsMask(OpBuilder &b, Location loc, MaskAttr mask,
                                   Value q0, Value k0, int64_t blockM,
                                   int64_t blockN, Value queryLen,
                                   Value keyLen) {
  using Pred = arith::CmpIPredicate;
  IndexMath m{b, loc};
  Value lastKey = m.add(k0, m.constant(blockN - 1));
  Value need = m.cmp(Pred::sge, lastKey, keyLen); // a partial last tile
  auto orNeed = [&](Value cut) { need = arith::OrIOp::create(b, loc, need, cut); };
  // Bottom-right alignment: query i sits on key i + N - M.
  Value firstDiagonal = m.add(q0, m.sub(keyLen, queryLen));
  Value lastDiagonal = m.add(firstDiagonal, m.constant(blockM - 1));
  switch (mask.getKind()) {
  case MaskKind::None:
    break;
  case MaskKind::Causal: // some key right of the first row's diagonal
    orNeed(m.cmp(Pred::sgt, lastKey, firstDiagonal));
    break;
  case MaskKind::CausalTopLeft:
    orNeed(m.cmp(Pred::sgt, lastKey, q0));
    break;
  case MaskKind::Window: // some key outside the window of some row
    if (mask.getRight() >= 0)
      orNeed(m.cmp(Pred::sgt, lastKey,
                   m.add(firstDiagonal, m.constant(mask.getRight()))));
    if (mask.getLeft() >= 0)
      orNeed(m.cmp(Pred::slt, k0,
                   m.sub(lastDiagonal, m.constant(mask.getLeft()))));
    break;
  }
  return need;
}

std::pair<Value, Value>
mlir::fa::buildUnmaskedKeyRange(OpBuilder &b, Location loc, MaskAttr mask,
                                Value q0, int64_t blockM, Value queryLen,
                                Value keyLen) {
  IndexMath m{b, loc};
  // Every row's visible keys are one interval whose ends never move left
  // as the row grows (buildVisibleKeyInterval): the keys every row of the
  // Q tile sees run from the last row's first to the first row's last.
  Value lastRow = m.add(q0, m.constant(blockM - 1));
  Value first = buildVisibleKeyInterval(b, loc, mask, lastRow, queryLen, keyLen).first;
  Value last = buildVisibleKeyInterval(b, loc, mask, q0, queryLen, keyLen).second;
  return {first ? first : m.constant(0), m.add(last, m.constant(1))};
}

std::pair<Value, Value>
mlir::fa::buildUnmaskedQueryRange(OpBuilder &b, Location loc, MaskAttr mask,
                                  Value k0, int64_t blockN, Value queryLen,
                                  Value keyLen) {
  using Pred = arith::CmpIPredicate;
  IndexMath m{b, loc};
  // buildTileNeedsMask's conditions solved for q0: with diagonal(i) =
  // i + N - M, every key of the tile is visible to row i iff lastKey <=
  // diagonal(i) (+ right) and k0 >= diagonal(i) - left.
  Value lastKey = m.add(k0, m.constant(blockN - 1));
  Value shift = m.sub(keyLen, queryLen); // diagonal(i) - i
  Value begin = m.constant(0), end;
  switch (mask.getKind()) {
  case MaskKind::None:
    break;
  case MaskKind::Causal:
    begin = m.sub(lastKey, shift);
    break;
  case MaskKind::CausalTopLeft:
    begin = lastKey;
    break;
  case MaskKind::Window:
    if (mask.getRight() >= 0)
      begin = m.sub(m.sub(lastKey, shift), m.constant(mask.getRight()));
    if (mask.getLeft() >= 0) // rows <= k0 - shift + left
      end = m.add(m.sub(k0, shift), m.constant(mask.getLeft() + 1));
    break;
  }
  // A partial last KV tile: no row sees all of it.
  Value past = m.add(keyLen, queryLen);
  Value partial = m.cmp(Pred::sge, lastKey, keyLen);
  begin = arith::SelectOp::create(b, loc, partial, past, begin);
  return {begin, end};
}
