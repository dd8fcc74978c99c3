//===- RegionReference.cpp - a variant region evaluated in float64 --------===//
//
// Part of fa-mlir.
//
//===----------------------------------------------------------------------===//

#include "RegionReference.h"

#include "fa/Dialect/FA/IR/FAOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/TypeUtilities.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/TypeSwitch.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>

using namespace mlir;

namespace {

/// A scalar of the region: a float as a double, an integer as its bits.
struct Scalar {
  double f = 0.0;
  uint64_t bits = 0;
};

unsigned widthOf(Type type) {
  if (auto integer = dyn_cast<IntegerType>(type))
    return integer.getWidth();
  return 64; // index
}

uint64_t truncateBits(uint64_t bits, unsigned width) {
  return width >= 64 ? bits : bits & ((uint64_t(1) << width) - 1);
}

int64_t signedOf(uint64_t bits, unsigned width) {
  if (width >= 64)
    return static_cast<int64_t>(bits);
  uint64_t sign = uint64_t(1) << (width - 1);
  return static_cast<int64_t>((bits ^ sign) - sign);
}

Scalar fromDouble(double value) { return {value, 0}; }
Scalar fromBits(uint64_t bits, unsigned width) {
  return {0.0, truncateBits(bits, width)};
}
Scalar fromInt(int64_t value, unsigned width) {
  return {0.0, truncateBits(static_cast<uint64_t>(value), width)};
}

bool compareFloats(arith::CmpFPredicate predicate, double a, double b) {
  bool unordered = std::isnan(a) || std::isnan(b);
  using P = arith::CmpFPredicate;
  switch (predicate) {
  case P::AlwaysFalse: return false;
  case P::OEQ: return !unordered && a == b;
  case P::OGT: return !unordered && a > b;
  case P::OGE: return !unordered && a >= b;
  case P::OLT: return !unordered && a < b;
  case P::OLE: return !unordered && a <= b;
  case P::ONE: return !unordered && a != b;
  case P::ORD: return !unordered;
  case P::UEQ: return unordered || a == b;
  case P::UGT: return unordered || a > b;
  case P::UGE: return unordered || a >= b;
  case P::ULT: return unordered || a < b;
  case P::ULE: return unordered || a <= b;
  case P::UNE: return unordered || a != b;
  case P::UNO: return unordered;
  case P::AlwaysTrue: return true;
  }
  return false;
}

bool compareInts(arith::CmpIPredicate predicate, uint64_t a, uint64_t b,
                 unsigned width) {
  int64_t sa = signedOf(a, width), sb = signedOf(b, width);
  using P = arith::CmpIPredicate;
  switch (predicate) {
  case P::eq: return a == b;
  case P::ne: return a != b;
  case P::slt: return sa < sb;
  case P::sle: return sa <= sb;
  case P::sgt: return sa > sb;
  case P::sge: return sa >= sb;
  case P::ult: return a < b;
  case P::ule: return a <= b;
  case P::ugt: return a > b;
  case P::uge: return a >= b;
  }
  return false;
}

/// Floor division of signed integers (arith.floordivsi).
int64_t floorDiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}
int64_t ceilDiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  return (a % b != 0 && ((a < 0) == (b < 0))) ? q + 1 : q;
}

/// Evaluates one op on the scalars of its operands; nullopt for an op the
/// evaluator does not know.
std::optional<Scalar> evaluate(Operation &op, ArrayRef<Scalar> in) {
  Type resultType = op.getNumResults() ? op.getResult(0).getType() : Type();
  unsigned width = resultType ? widthOf(resultType) : 64;
  auto f = [&](unsigned i) { return in[i].f; };
  auto s = [&](unsigned i) {
    return signedOf(in[i].bits, widthOf(op.getOperand(i).getType()));
  };
  auto u = [&](unsigned i) { return in[i].bits; };
  auto intResult = [&](int64_t v) { return fromInt(v, width); };
  // Division by 0, and INT64_MIN / -1, yield 0: the hardware's result is
  // unspecified there, and the reference must not trap.
  auto safe = [&](int64_t b) {
    return b == 0 || (b == -1 && s(0) == std::numeric_limits<int64_t>::min());
  };
  return llvm::TypeSwitch<Operation *, std::optional<Scalar>>(&op)
      .Case([&](arith::ConstantOp c) -> std::optional<Scalar> {
        if (auto fl = dyn_cast<FloatAttr>(c.getValue()))
          return fromDouble(fl.getValueAsDouble());
        if (auto ia = dyn_cast<IntegerAttr>(c.getValue()))
          return fromInt(ia.getValue().getSExtValue(), width);
        return std::nullopt;
      })
      .Case([&](arith::AddFOp) { return fromDouble(f(0) + f(1)); })
      .Case([&](arith::SubFOp) { return fromDouble(f(0) - f(1)); })
      .Case([&](arith::MulFOp) { return fromDouble(f(0) * f(1)); })
      .Case([&](arith::DivFOp) { return fromDouble(f(0) / f(1)); })
      .Case([&](arith::RemFOp) { return fromDouble(std::fmod(f(0), f(1))); })
      .Case([&](arith::NegFOp) { return fromDouble(-f(0)); })
      .Case([&](arith::MaximumFOp) {
        return fromDouble(std::isnan(f(0)) || std::isnan(f(1))
                              ? NAN
                              : std::max(f(0), f(1)));
      })
      .Case([&](arith::MinimumFOp) {
        return fromDouble(std::isnan(f(0)) || std::isnan(f(1))
                              ? NAN
                              : std::min(f(0), f(1)));
      })
      .Case([&](arith::MaxNumFOp) { return fromDouble(std::fmax(f(0), f(1))); })
      .Case([&](arith::MinNumFOp) { return fromDouble(std::fmin(f(0), f(1))); })
      .Case([&](arith::CmpFOp c) {
        return fromInt(compareFloats(c.getPredicate(), f(0), f(1)), 1);
      })
      // Wrapping, as the hardware's: in uint64_t, where overflow is defined.
      .Case([&](arith::AddIOp) { return fromBits(u(0) + u(1), width); })
      .Case([&](arith::SubIOp) { return fromBits(u(0) - u(1), width); })
      .Case([&](arith::MulIOp) { return fromBits(u(0) * u(1), width); })
      .Case([&](arith::DivSIOp) {
        return intResult(safe(s(1)) ? 0 : s(0) / s(1));
      })
      .Case([&](arith::DivUIOp) {
        return intResult(u(1) == 0 ? 0 : static_cast<int64_t>(u(0) / u(1)));
      })
      .Case([&](arith::FloorDivSIOp) {
        return intResult(safe(s(1)) ? 0 : floorDiv(s(0), s(1)));
      })
      .Case([&](arith::CeilDivSIOp) {
        return intResult(safe(s(1)) ? 0 : ceilDiv(s(0), s(1)));
      })
      .Case([&](arith::RemSIOp) {
        return intResult(safe(s(1)) ? 0 : s(0) % s(1));
      })
      .Case([&](arith::RemUIOp) {
        return intResult(u(1) == 0 ? 0 : static_cast<int64_t>(u(0) % u(1)));
      })
      .Case([&](arith::AndIOp) { return intResult(u(0) & u(1)); })
      .Case([&](arith::OrIOp) { return intResult(u(0) | u(1)); })
      .Case([&](arith::XOrIOp) { return intResult(u(0) ^ u(1)); })
      .Case([&](arith::MaxSIOp) { return intResult(std::max(s(0), s(1))); })
      .Case([&](arith::MinSIOp) { return intResult(std::min(s(0), s(1))); })
      .Case([&](arith::MaxUIOp) {
        return intResult(static_cast<int64_t>(std::max(u(0), u(1))));
      })
      .Case([&](arith::MinUIOp) {
        return intResult(static_cast<int64_t>(std::min(u(0), u(1))));
      })
      .Case([&](arith::ShLIOp) {
        return intResult(u(1) >= width ? 0 : static_cast<int64_t>(u(0) << u(1)));
      })
      .Case([&](arith::ShRUIOp) {
        return intResult(u(1) >= width ? 0 : static_cast<int64_t>(u(0) >> u(1)));
      })
      .Case([&](arith::ShRSIOp) {
        return intResult(s(0) >> std::min<uint64_t>(u(1), 63));
      })
      .Case([&](arith::CmpIOp c) {
        return fromInt(compareInts(c.getPredicate(), u(0), u(1),
                                   widthOf(c.getLhs().getType())),
                       1);
      })
      .Case([&](arith::SelectOp) { return u(0) ? in[1] : in[2]; })
      .Case<arith::IndexCastOp, arith::ExtSIOp>(
          [&](Operation *) { return intResult(s(0)); })
      .Case<arith::IndexCastUIOp, arith::ExtUIOp, arith::TruncIOp>(
          [&](Operation *) { return intResult(static_cast<int64_t>(u(0))); })
      .Case([&](arith::SIToFPOp) {
        return fromDouble(static_cast<double>(s(0)));
      })
      .Case([&](arith::UIToFPOp) {
        return fromDouble(static_cast<double>(u(0)));
      })
      .Case([&](arith::FPToSIOp) {
        return intResult(static_cast<int64_t>(std::trunc(f(0))));
      })
      .Case<arith::ExtFOp, arith::TruncFOp>(
          [&](Operation *) { return fromDouble(f(0)); })
      .Case([&](math::ExpOp) { return fromDouble(std::exp(f(0))); })
      .Case([&](math::Exp2Op) { return fromDouble(std::exp2(f(0))); })
      .Case([&](math::ExpM1Op) { return fromDouble(std::expm1(f(0))); })
      .Case([&](math::LogOp) { return fromDouble(std::log(f(0))); })
      .Case([&](math::Log2Op) { return fromDouble(std::log2(f(0))); })
      .Case([&](math::Log10Op) { return fromDouble(std::log10(f(0))); })
      .Case([&](math::Log1pOp) { return fromDouble(std::log1p(f(0))); })
      .Case([&](math::TanhOp) { return fromDouble(std::tanh(f(0))); })
      .Case([&](math::SinOp) { return fromDouble(std::sin(f(0))); })
      .Case([&](math::CosOp) { return fromDouble(std::cos(f(0))); })
      .Case([&](math::AtanOp) { return fromDouble(std::atan(f(0))); })
      .Case([&](math::Atan2Op) { return fromDouble(std::atan2(f(0), f(1))); })
      .Case([&](math::SqrtOp) { return fromDouble(std::sqrt(f(0))); })
      .Case([&](math::RsqrtOp) { return fromDouble(1.0 / std::sqrt(f(0))); })
      .Case([&](math::AbsFOp) { return fromDouble(std::fabs(f(0))); })
      .Case([&](math::AbsIOp) { return intResult(std::llabs(s(0))); })
      .Case([&](math::PowFOp) { return fromDouble(std::pow(f(0), f(1))); })
      .Case([&](math::ErfOp) { return fromDouble(std::erf(f(0))); })
      .Case([&](math::FloorOp) { return fromDouble(std::floor(f(0))); })
      .Case([&](math::CeilOp) { return fromDouble(std::ceil(f(0))); })
      .Case([&](math::RoundOp) { return fromDouble(std::round(f(0))); })
      .Case([&](math::TruncOp) { return fromDouble(std::trunc(f(0))); })
      .Case([&](math::CopySignOp) {
        return fromDouble(std::copysign(f(0), f(1)));
      })
      .Case([&](math::FmaOp) { return fromDouble(f(0) * f(1) + f(2)); })
      .Default([](Operation *) { return std::nullopt; });
}

/// Runs the body of `region` with `leading` then the captures as its
/// arguments; returns the yielded scalar.
class Evaluator {
public:
  Evaluator(Region &region, const std::vector<::fa::CaptureValue> &captures)
      : body(region.front()), captures(captures) {}

  Scalar run(ArrayRef<Scalar> leading) {
    llvm::DenseMap<Value, Scalar> values;
    for (auto [i, scalar] : llvm::enumerate(leading))
      values[body.getArgument(i)] = scalar;
    unsigned firstCapture = leading.size();
    for (size_t c = 0; c < captures.size(); ++c) {
      BlockArgument arg = body.getArgument(firstCapture + c);
      if (captures[c].shape.empty())
        values[arg] = scalarOf(arg.getType(), captures[c].elements.front());
    }
    for (Operation &op : body.without_terminator()) {
      if (auto extract = dyn_cast<tensor::ExtractOp>(op)) {
        auto arg = cast<BlockArgument>(extract.getTensor());
        const ::fa::CaptureValue &capture =
            captures[arg.getArgNumber() - firstCapture];
        // The index is clamped to the extent, as the lowering defines it.
        int64_t flat = 0;
        for (auto [dim, index] : llvm::enumerate(extract.getIndices())) {
          int64_t at = signedOf(values[index].bits, 64);
          at = std::clamp<int64_t>(at, 0, capture.shape[dim] - 1);
          flat = flat * capture.shape[dim] + at;
        }
        values[extract.getResult()] =
            scalarOf(extract.getType(), capture.elements[flat]);
        continue;
      }
      llvm::SmallVector<Scalar> in;
      for (Value operand : op.getOperands())
        in.push_back(values[operand]);
      values[op.getResult(0)] = *evaluate(op, in);
    }
    return values[cast<::mlir::fa::YieldOp>(body.getTerminator()).getValue()];
  }

private:
  static Scalar scalarOf(Type type, double element) {
    if (isa<FloatType>(type))
      return fromDouble(element);
    return fromInt(static_cast<int64_t>(element), widthOf(type));
  }

  Block &body;
  const std::vector<::fa::CaptureValue> &captures;
};

Scalar indexScalar(int64_t value) { return fromInt(value, 64); }

} // namespace

namespace fa {

std::string checkEvaluable(Region &region) {
  if (region.empty())
    return "";
  // Integers are evaluated in 64 bits.
  auto tooWide = [](Type type) {
    auto integer = dyn_cast<IntegerType>(getElementTypeOrSelf(type));
    return integer && integer.getWidth() > 64;
  };
  for (BlockArgument arg : region.front().getArguments())
    if (tooWide(arg.getType()))
      return "the float64 reference evaluates integers of at most 64 bits";
  for (Operation &op : region.front().without_terminator()) {
    if (llvm::any_of(op.getResultTypes(), tooWide))
      return "the float64 reference evaluates integers of at most 64 bits, "
             "but '" + op.getName().getStringRef().str() + "' makes a wider one";
    if (isa<tensor::ExtractOp>(op))
      continue;
    llvm::SmallVector<Scalar> zeros(op.getNumOperands(), Scalar{1.0, 1});
    if (op.getNumResults() != 1 || !evaluate(op, zeros))
      return "the float64 reference does not evaluate '" +
             op.getName().getStringRef().str() + "'";
  }
  return "";
}

std::function<double(double, int64_t, int64_t, int64_t, int64_t)>
scoreModOf(Region &region, const std::vector<CaptureValue> &captures) {
  auto evaluator = std::make_shared<Evaluator>(region, captures);
  return [evaluator](double score, int64_t b, int64_t h, int64_t i,
                     int64_t j) {
    return evaluator
        ->run({fromDouble(score), indexScalar(b), indexScalar(h),
               indexScalar(i), indexScalar(j)})
        .f;
  };
}

std::function<bool(int64_t, int64_t, int64_t, int64_t)>
maskModOf(Region &region, const std::vector<CaptureValue> &captures) {
  auto evaluator = std::make_shared<Evaluator>(region, captures);
  return [evaluator](int64_t b, int64_t h, int64_t i, int64_t j) {
    return evaluator
               ->run({indexScalar(b), indexScalar(h), indexScalar(i),
                      indexScalar(j)})
               .bits != 0;
  };
}

} // namespace fa
