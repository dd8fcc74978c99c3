//===- DifferentiateScoreMod.cpp - d(score_mod)/d(score) ------------------===//
//
// Part of fa-mlir.
//
// Each value v of the body gets a tangent dv = dv/d(score): the score's is
// 1, a value that does not depend on the score has none (zero, never
// materialised), and each op's rule builds its result's tangent from its
// operands' values and tangents. Comparisons, conversions to integers and
// rounding carry no tangent (their derivative is zero almost everywhere);
// any other op the score reaches without a rule is refused, never taken as
// constant.
//
//===----------------------------------------------------------------------===//

#include "DifferentiateScoreMod.h"

#include "fa/Dialect/FA/IR/FAOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"

#include "llvm/ADT/TypeSwitch.h"

#include <cmath>

using namespace mlir;
using namespace mlir::fa;

namespace {

class TangentBuilder {
public:
  TangentBuilder(OpBuilder &b, Location loc) : b(b), loc(loc) {}

  Value cst(Type type, double value) {
    return arith::ConstantOp::create(b, loc, b.getFloatAttr(type, value));
  }
  Value add(Value x, Value y) {
    if (!x)
      return y;
    if (!y)
      return x;
    return arith::AddFOp::create(b, loc, x, y);
  }
  Value mul(Value x, Value y) {
    if (!x || !y)
      return Value();
    return arith::MulFOp::create(b, loc, x, y);
  }
  Value neg(Value x) { return x ? arith::NegFOp::create(b, loc, x) : Value(); }
  Value div(Value x, Value y) {
    if (!x)
      return Value();
    return arith::DivFOp::create(b, loc, x, y);
  }
  /// cond ? x : y for tangents (null is zero).
  Value select(Value cond, Value x, Value y, Type type) {
    if (!x && !y)
      return Value();
    return arith::SelectOp::create(b, loc, cond, x ? x : cst(type, 0.0),
                                   y ? y : cst(type, 0.0));
  }
  Value cmp(arith::CmpFPredicate predicate, Value x, Value y) {
    return arith::CmpFOp::create(b, loc, predicate, x, y);
  }

  OpBuilder &b;
  Location loc;
};

} // namespace

/// The tangent of `op`'s single float result from its operands' primal
/// values `v` (in the derivative region), their tangents `t` (null: zero)
/// and the primal result `y`: null for zero, nullopt for an op without a
/// rule.
static std::optional<Value> tangentOf(Operation &op, ArrayRef<Value> v,
                                      ArrayRef<Value> t, Value y,
                                      TangentBuilder &tb) {
  OpBuilder &b = tb.b;
  Type type = y.getType();
  auto at = [&](unsigned i) { return i < t.size() ? t[i] : Value(); };
  return llvm::TypeSwitch<Operation *, std::optional<Value>>(&op)
      .Case([&](arith::AddFOp) { return tb.add(at(0), at(1)); })
      .Case([&](arith::SubFOp) { return tb.add(at(0), tb.neg(at(1))); })
      .Case([&](arith::MulFOp) {
        return tb.add(tb.mul(at(0), v[1]), tb.mul(v[0], at(1)));
      })
      .Case([&](arith::DivFOp) {
        // (da - y·db) / b
        return tb.div(tb.add(at(0), tb.neg(tb.mul(y, at(1)))), v[1]);
      })
      .Case([&](arith::NegFOp) { return tb.neg(at(0)); })
      .Case<arith::MaximumFOp, arith::MaxNumFOp>([&](Operation *) {
        Value first = tb.cmp(arith::CmpFPredicate::OGE, v[0], v[1]);
        return tb.select(first, at(0), at(1), type);
      })
      .Case<arith::MinimumFOp, arith::MinNumFOp>([&](Operation *) {
        Value first = tb.cmp(arith::CmpFPredicate::OLE, v[0], v[1]);
        return tb.select(first, at(0), at(1), type);
      })
      .Case([&](arith::SelectOp) {
        return tb.select(v[0], at(1), at(2), type);
      })
      .Case([&](arith::ExtFOp) -> Value {
        return at(0) ? Value(arith::ExtFOp::create(b, tb.loc, type, at(0)))
                     : Value();
      })
      .Case([&](arith::TruncFOp) -> Value {
        return at(0)
                   ? Value(arith::TruncFOp::create(b, tb.loc, type, at(0)))
                   : Value();
      })
      .Case([&](math::ExpOp) { return tb.mul(at(0), y); })
      .Case([&](math::Exp2Op) {
        return tb.mul(at(0), tb.mul(y, tb.cst(type, M_LN2)));
      })
      .Case([&](math::ExpM1Op) {
        return tb.mul(at(0), tb.add(y, tb.cst(type, 1.0)));
      })
      .Case([&](math::LogOp) { return tb.div(at(0), v[0]); })
      .Case([&](math::Log2Op) {
        return tb.div(at(0), tb.mul(v[0], tb.cst(type, M_LN2)));
      })
      .Case([&](math::Log1pOp) {
        return tb.div(at(0), tb.add(v[0], tb.cst(type, 1.0)));
      })
      .Case([&](math::TanhOp) {
        // 1 - y²
        return tb.mul(at(0), tb.add(tb.cst(type, 1.0),
                                    tb.neg(tb.mul(y, y))));
      })
      .Case([&](math::SqrtOp) {
        return tb.div(at(0), tb.mul(y, tb.cst(type, 2.0)));
      })
      .Case([&](math::RsqrtOp) {
        // -y³ / 2
        return tb.mul(at(0), tb.mul(tb.mul(y, tb.mul(y, y)),
                                    tb.cst(type, -0.5)));
      })
      .Case([&](math::AbsFOp) {
        Value negative = tb.cmp(arith::CmpFPredicate::OLT, v[0],
                                tb.cst(type, 0.0));
        return tb.select(negative, tb.neg(at(0)), at(0), type);
      })
      .Case([&](math::SinOp) {
        return tb.mul(at(0), math::CosOp::create(b, tb.loc, v[0]));
      })
      .Case([&](math::CosOp) {
        return tb.neg(tb.mul(at(0), math::SinOp::create(b, tb.loc, v[0])));
      })
      .Case([&](math::ErfOp) {
        // 2/√π · exp(-a²)
        Value gauss = math::ExpOp::create(
            b, tb.loc, tb.neg(tb.mul(v[0], v[0])));
        return tb.mul(at(0),
                      tb.mul(gauss, tb.cst(type, 2.0 / std::sqrt(M_PI))));
      })
      .Case([&](math::PowFOp) {
        // d(a^c) = y·(dc·ln a + c·da / a)
        Value fromBase = tb.div(tb.mul(v[1], at(0)), v[0]);
        Value fromExponent =
            at(1) ? tb.mul(at(1), math::LogOp::create(b, tb.loc, v[0]))
                  : Value();
        return tb.mul(y, tb.add(fromBase, fromExponent));
      })
      .Case([&](math::FmaOp) {
        return tb.add(tb.add(tb.mul(at(0), v[1]), tb.mul(v[0], at(1))),
                      at(2));
      })
      .Case<math::FloorOp, math::CeilOp, math::RoundOp, math::TruncOp>(
          [&](Operation *) { return Value(); })
      .Case([&](arith::ConstantOp) { return Value(); })
      .Default([](Operation *) { return std::nullopt; });
}

LogicalResult mlir::fa::differentiateScoreMod(Region &scoreMod,
                                              Region &derivative,
                                              Operation *diagnosticOp) {
  Block &source = scoreMod.front();
  Block *body = new Block();
  derivative.push_back(body);
  for (BlockArgument arg : source.getArguments())
    body->addArgument(arg.getType(), arg.getLoc());
  // The derivative region may have no parent op yet (a scratch check).
  OpBuilder b(diagnosticOp->getContext());
  b.setInsertionPointToEnd(body);
  IRMapping primal;
  for (auto [from, to] : llvm::zip(source.getArguments(), body->getArguments()))
    primal.map(from, to);
  llvm::DenseMap<Value, Value> tangent; // keyed by the source region's values
  TangentBuilder tb(b, diagnosticOp->getLoc());
  tangent[source.getArgument(0)] = tb.cst(b.getF32Type(), 1.0);

  for (Operation &op : source.without_terminator()) {
    Operation *clone = b.clone(op, primal);
    bool anyTangent = llvm::any_of(op.getOperands(), [&](Value operand) {
      return tangent.lookup(operand) != Value();
    });
    // Comparisons and float-to-integer conversions are piecewise constant:
    // the score's tangent stops there.
    if (!anyTangent || isa<arith::CmpFOp, arith::FPToSIOp, arith::FPToUIOp>(op))
      continue;
    std::optional<Value> d;
    if (op.getNumResults() == 1 && isa<FloatType>(op.getResult(0).getType())) {
      SmallVector<Value> v, t;
      for (Value operand : op.getOperands()) {
        v.push_back(primal.lookup(operand));
        t.push_back(tangent.lookup(operand));
      }
      tb.loc = op.getLoc();
      d = tangentOf(op, v, t, clone->getResult(0), tb);
    }
    if (!d)
      return diagnosticOp->emitOpError()
             << "score_mod: no derivative for '" << op.getName()
             << "' (the backward differentiates the score_mod)";
    if (*d)
      tangent[op.getResult(0)] = *d;
  }
  Value result = cast<YieldOp>(source.getTerminator()).getValue();
  Value d = tangent.lookup(result);
  if (!d)
    d = tb.cst(b.getF32Type(), 0.0);
  YieldOp::create(b, diagnosticOp->getLoc(), d);
  return success();
}
