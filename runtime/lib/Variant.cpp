//===- Variant.cpp - score_mod / mask_mod programs in float64 -------------===//
//
// Part of fa-mlir.
//
//===----------------------------------------------------------------------===//

#include "fa/runtime/Variant.h"

#include "fa/runtime/Numerics.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <map>
#include <memory>
#include <sstream>

using namespace fa;

bool CaptureType::isFloat() const {
  return element == "f32" || element == "f16" || element == "bf16";
}

size_t fa::captureElementBytes(const std::string &element) {
  static const std::map<std::string, size_t> bytes = {
      {"f32", 4}, {"f16", 2}, {"bf16", 2}, {"i1", 1},   {"i8", 1},
      {"i16", 2}, {"i32", 4}, {"i64", 8},  {"index", 8}};
  auto it = bytes.find(element);
  return it == bytes.end() ? 0 : it->second;
}

std::vector<CaptureValue>
fa::drawCaptures(const std::vector<CaptureType> &types, uint64_t seed,
                 std::vector<std::vector<uint8_t>> &bytes) {
  std::mt19937_64 gen(seed);
  std::vector<CaptureValue> values;
  bytes.clear();
  for (const CaptureType &type : types) {
    CaptureValue value;
    value.shape = type.shape;
    int64_t count = 1;
    for (int64_t dim : type.shape)
      count *= dim;
    std::vector<uint8_t> stored;
    auto append = [&](const void *data, size_t size) {
      auto *p = static_cast<const uint8_t *>(data);
      stored.insert(stored.end(), p, p + size);
    };
    for (int64_t e = 0; e < count; ++e) {
      if (type.isFloat()) {
        float drawn = std::uniform_real_distribution<float>(-1.0f, 1.0f)(gen);
        if (type.element == "f32") {
          append(&drawn, 4);
          value.elements.push_back(drawn);
          continue;
        }
        bool half = type.element == "f16";
        uint16_t bits = half ? toF16Bits(drawn) : toBF16Bits(drawn);
        append(&bits, 2);
        value.elements.push_back(half ? fromF16Bits(bits) : fromBF16Bits(bits));
        continue;
      }
      int64_t drawn = std::uniform_int_distribution<int64_t>(
          0, type.element == "i1" ? 1 : 3)(gen);
      append(&drawn, captureElementBytes(type.element)); // little-endian
      value.elements.push_back(static_cast<double>(drawn));
    }
    values.push_back(std::move(value));
    bytes.push_back(std::move(stored));
  }
  return values;
}

//===----------------------------------------------------------------------===//
// JSON
//===----------------------------------------------------------------------===//

static std::string programJson(const VariantProgram &p) {
  std::ostringstream os;
  os << "{\"arguments\": [";
  for (size_t i = 0; i < p.arguments.size(); ++i)
    os << (i ? ", " : "") << json::quote(p.arguments[i]);
  os << "], \"ops\": [";
  for (size_t i = 0; i < p.ops.size(); ++i) {
    const VariantOp &op = p.ops[i];
    os << (i ? ", " : "") << "{\"op\": " << json::quote(op.name)
       << ", \"operands\": [";
    for (size_t j = 0; j < op.operands.size(); ++j)
      os << (j ? ", " : "") << op.operands[j];
    os << "], \"type\": " << json::quote(op.type);
    if (!op.value.empty())
      os << ", \"value\": " << json::quote(op.value);
    if (!op.predicate.empty())
      os << ", \"predicate\": " << json::quote(op.predicate);
    os << "}";
  }
  os << "], \"result\": " << p.result << "}";
  return os.str();
}

std::string fa::variantJson(const Variant &v) {
  std::ostringstream os;
  os << "{\"captures\": [";
  for (size_t i = 0; i < v.captures.size(); ++i) {
    os << (i ? ", " : "") << "{\"type\": " << json::quote(v.captures[i].element)
       << ", \"shape\": [";
    for (size_t d = 0; d < v.captures[i].shape.size(); ++d)
      os << (d ? ", " : "") << v.captures[i].shape[d];
    os << "]}";
  }
  os << "]";
  if (!v.scoreMod.empty())
    os << ", \"score_mod\": " << programJson(v.scoreMod);
  if (!v.maskMod.empty())
    os << ", \"mask_mod\": " << programJson(v.maskMod);
  os << "}";
  return os.str();
}

namespace {
bool isElementName(const std::string &type) {
  return captureElementBytes(type) != 0;
}

bool readString(const json::Value *v, std::string &out) {
  if (!v || v->kind != json::Value::String)
    return false;
  out = v->string;
  return true;
}

bool readInt(const json::Value *v, int64_t min, int64_t max, int64_t &out) {
  if (!v || v->kind != json::Value::Number || v->number != std::floor(v->number) ||
      v->number < double(min) || v->number > double(max))
    return false;
  out = static_cast<int64_t>(v->number);
  return true;
}

bool parseProgram(const json::Value &value, const std::string &name,
                  const std::vector<CaptureType> &captures,
                  VariantProgram &program, std::string &error) {
  auto fail = [&](const std::string &message) {
    error = "variant " + name + ": " + message;
    return false;
  };
  const json::Value *args = value.get("arguments"), *ops = value.get("ops");
  if (!args || args->kind != json::Value::Array || !ops ||
      ops->kind != json::Value::Array)
    return fail("needs \"arguments\" and \"ops\" arrays");
  std::vector<std::string> expected;
  if (name == "score_mod")
    expected.push_back("f32");
  expected.insert(expected.end(), 4, "index");
  for (const CaptureType &c : captures)
    expected.push_back(c.isScalar() ? c.element : "tensor");
  std::vector<std::string> types; // of every value so far
  for (const json::Value &a : args->array) {
    std::string type;
    if (!readString(&a, type))
      return fail("an argument type is not a string");
    types.push_back(type);
  }
  if (types != expected)
    return fail("arguments do not match the captures (score_mod: f32, four "
                "index, then one per capture)");
  program.arguments = types;
  for (const json::Value &o : ops->array) {
    VariantOp op;
    const json::Value *operands = o.get("operands");
    if (!readString(o.get("op"), op.name) || !readString(o.get("type"), op.type) ||
        !operands || operands->kind != json::Value::Array)
      return fail("each op needs \"op\", \"operands\" and \"type\"");
    for (const json::Value &x : operands->array) {
      int64_t n;
      if (!readInt(&x, 0, int64_t(types.size()) - 1, n))
        return fail("op '" + op.name + "' names a value not defined before it");
      op.operands.push_back(static_cast<int32_t>(n));
    }
    if (!isElementName(op.type))
      return fail("op '" + op.name + "' has result type '" + op.type + "'");
    readString(o.get("value"), op.value);
    readString(o.get("predicate"), op.predicate);
    if (std::string reason = unsupportedVariantOp(op.name, op.operands.size());
        !reason.empty())
      return fail(reason);
    bool extract = op.name == "tensor.extract";
    for (size_t i = 0; i < op.operands.size(); ++i) {
      bool isTensor = types[op.operands[i]] == "tensor";
      if (isTensor != (extract && i == 0))
        return fail("op '" + op.name + "' reads a tensor where a scalar is "
                    "expected, or the reverse");
    }
    if (extract) {
      size_t capture = op.operands[0] - (expected.size() - captures.size());
      if (captures[capture].shape.size() + 1 != op.operands.size())
        return fail("tensor.extract's indices do not match the capture's rank");
    }
    types.push_back(op.type);
    program.ops.push_back(std::move(op));
  }
  int64_t result;
  if (!readInt(value.get("result"), 0, int64_t(types.size()) - 1, result))
    return fail("\"result\" names no value");
  program.result = static_cast<int32_t>(result);
  std::string want = name == "score_mod" ? "f32" : "i1";
  if (types[result] != want)
    return fail("yields " + types[result] + ", not " + want);
  return true;
}
} // namespace

bool fa::parseVariant(const json::Value &value, Variant &variant,
                      std::string &error) {
  if (value.kind != json::Value::Object) {
    error = "\"variant\" must be an object";
    return false;
  }
  const json::Value *captures = value.get("captures");
  if (!captures || captures->kind != json::Value::Array) {
    error = "variant: missing \"captures\"";
    return false;
  }
  for (const json::Value &c : captures->array) {
    CaptureType type;
    const json::Value *shape = c.get("shape");
    if (!readString(c.get("type"), type.element) || !isElementName(type.element) ||
        !shape || shape->kind != json::Value::Array) {
      error = "variant: each capture needs an element \"type\" and a \"shape\"";
      return false;
    }
    for (const json::Value &d : shape->array) {
      int64_t extent;
      if (!readInt(&d, CaptureType::kDynamicExtent, INT32_MAX, extent) ||
          extent == 0) {
        error = "variant: a capture's extent must be positive or -1 (dynamic)";
        return false;
      }
      type.shape.push_back(extent);
    }
    variant.captures.push_back(type);
  }
  for (const char *name : {"score_mod", "mask_mod"})
    if (const json::Value *program = value.get(name))
      if (!parseProgram(*program, name, variant.captures,
                        name[0] == 's' ? variant.scoreMod : variant.maskMod,
                        error))
        return false;
  return true;
}

//===----------------------------------------------------------------------===//
// Evaluation
//===----------------------------------------------------------------------===//

namespace {

/// A scalar of a program: a float as a double, an integer as its bits.
struct Scalar {
  double f = 0.0;
  uint64_t bits = 0;
};

unsigned widthOf(const std::string &type) {
  if (type == "index" || type.empty() || type[0] != 'i')
    return 64;
  return static_cast<unsigned>(std::atoi(type.c_str() + 1));
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
Scalar fromInt(int64_t value, unsigned width) {
  return {0.0, truncateBits(static_cast<uint64_t>(value), width)};
}

bool compareFloats(const std::string &p, double a, double b) {
  bool unordered = std::isnan(a) || std::isnan(b);
  if (p == "false") return false;
  if (p == "true") return true;
  if (p == "ord") return !unordered;
  if (p == "uno") return unordered;
  bool orderedResult = p == "oeq" || p == "ueq"   ? a == b
                       : p == "ogt" || p == "ugt" ? a > b
                       : p == "oge" || p == "uge" ? a >= b
                       : p == "olt" || p == "ult" ? a < b
                       : p == "ole" || p == "ule" ? a <= b
                                                  : a != b; // one, une
  return p[0] == 'u' ? unordered || orderedResult : !unordered && orderedResult;
}

bool compareInts(const std::string &p, uint64_t a, uint64_t b, unsigned width) {
  int64_t sa = signedOf(a, width), sb = signedOf(b, width);
  if (p == "eq") return a == b;
  if (p == "ne") return a != b;
  if (p == "slt") return sa < sb;
  if (p == "sle") return sa <= sb;
  if (p == "sgt") return sa > sb;
  if (p == "sge") return sa >= sb;
  if (p == "ult") return a < b;
  if (p == "ule") return a <= b;
  if (p == "ugt") return a > b;
  return a >= b; // uge
}

int64_t floorDiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}
int64_t ceilDiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  return (a % b != 0 && ((a < 0) == (b < 0))) ? q + 1 : q;
}

/// What one op computes from its operands (`width` the result's integer
/// width, `operandWidth` the first operand's).
struct OpContext {
  const VariantOp &op;
  const Scalar *in;
  unsigned width, operandWidth;
  double f(unsigned i) const { return in[i].f; }
  uint64_t u(unsigned i) const { return in[i].bits; }
  int64_t s(unsigned i) const { return signedOf(in[i].bits, operandWidth); }
  Scalar integer(int64_t v) const { return fromInt(v, width); }
  /// Division by 0, and INT64_MIN / -1, yield 0: the hardware's result is
  /// unspecified there, and the reference must not trap.
  bool unsafeDivisor() const {
    return s(1) == 0 ||
           (s(1) == -1 && s(0) == std::numeric_limits<int64_t>::min());
  }
};

using OpRule = Scalar (*)(const OpContext &);
struct OpEntry {
  OpRule rule;
  unsigned operands;
};

const std::map<std::string, OpEntry> &opTable() {
  using C = const OpContext &;
  static const std::map<std::string, OpEntry> table = {
      {"arith.constant", {[](C c) {
         if (c.op.type == "f32" || c.op.type == "f16" || c.op.type == "bf16")
           return fromDouble(std::strtod(c.op.value.c_str(), nullptr));
         return c.integer(std::strtoll(c.op.value.c_str(), nullptr, 10));
       }, 0}},
      {"arith.addf", {[](C c) { return fromDouble(c.f(0) + c.f(1)); }, 2}},
      {"arith.subf", {[](C c) { return fromDouble(c.f(0) - c.f(1)); }, 2}},
      {"arith.mulf", {[](C c) { return fromDouble(c.f(0) * c.f(1)); }, 2}},
      {"arith.divf", {[](C c) { return fromDouble(c.f(0) / c.f(1)); }, 2}},
      {"arith.remf", {[](C c) { return fromDouble(std::fmod(c.f(0), c.f(1))); }, 2}},
      {"arith.negf", {[](C c) { return fromDouble(-c.f(0)); }, 1}},
      {"arith.maximumf", {[](C c) {
         return fromDouble(std::isnan(c.f(0)) || std::isnan(c.f(1))
                               ? NAN : std::max(c.f(0), c.f(1)));
       }, 2}},
      {"arith.minimumf", {[](C c) {
         return fromDouble(std::isnan(c.f(0)) || std::isnan(c.f(1))
                               ? NAN : std::min(c.f(0), c.f(1)));
       }, 2}},
      {"arith.maxnumf", {[](C c) { return fromDouble(std::fmax(c.f(0), c.f(1))); }, 2}},
      {"arith.minnumf", {[](C c) { return fromDouble(std::fmin(c.f(0), c.f(1))); }, 2}},
      {"arith.cmpf", {[](C c) {
         return fromInt(compareFloats(c.op.predicate, c.f(0), c.f(1)), 1);
       }, 2}},
      // Wrapping, as the hardware's: in uint64_t, where overflow is defined.
      {"arith.addi", {[](C c) { return c.integer(int64_t(c.u(0) + c.u(1))); }, 2}},
      {"arith.subi", {[](C c) { return c.integer(int64_t(c.u(0) - c.u(1))); }, 2}},
      {"arith.muli", {[](C c) { return c.integer(int64_t(c.u(0) * c.u(1))); }, 2}},
      {"arith.divsi", {[](C c) {
         return c.integer(c.unsafeDivisor() ? 0 : c.s(0) / c.s(1));
       }, 2}},
      {"arith.divui", {[](C c) {
         return c.integer(c.u(1) == 0 ? 0 : int64_t(c.u(0) / c.u(1)));
       }, 2}},
      {"arith.floordivsi", {[](C c) {
         return c.integer(c.unsafeDivisor() ? 0 : floorDiv(c.s(0), c.s(1)));
       }, 2}},
      {"arith.ceildivsi", {[](C c) {
         return c.integer(c.unsafeDivisor() ? 0 : ceilDiv(c.s(0), c.s(1)));
       }, 2}},
      {"arith.remsi", {[](C c) {
         return c.integer(c.unsafeDivisor() ? 0 : c.s(0) % c.s(1));
       }, 2}},
      {"arith.remui", {[](C c) {
         return c.integer(c.u(1) == 0 ? 0 : int64_t(c.u(0) % c.u(1)));
       }, 2}},
      {"arith.andi", {[](C c) { return c.integer(int64_t(c.u(0) & c.u(1))); }, 2}},
      {"arith.ori", {[](C c) { return c.integer(int64_t(c.u(0) | c.u(1))); }, 2}},
      {"arith.xori", {[](C c) { return c.integer(int64_t(c.u(0) ^ c.u(1))); }, 2}},
      {"arith.maxsi", {[](C c) { return c.integer(std::max(c.s(0), c.s(1))); }, 2}},
      {"arith.minsi", {[](C c) { return c.integer(std::min(c.s(0), c.s(1))); }, 2}},
      {"arith.maxui", {[](C c) { return c.integer(int64_t(std::max(c.u(0), c.u(1)))); }, 2}},
      {"arith.minui", {[](C c) { return c.integer(int64_t(std::min(c.u(0), c.u(1)))); }, 2}},
      {"arith.shli", {[](C c) {
         return c.integer(c.u(1) >= c.width ? 0 : int64_t(c.u(0) << c.u(1)));
       }, 2}},
      {"arith.shrui", {[](C c) {
         return c.integer(c.u(1) >= c.width ? 0 : int64_t(c.u(0) >> c.u(1)));
       }, 2}},
      {"arith.shrsi", {[](C c) {
         return c.integer(c.s(0) >> std::min<uint64_t>(c.u(1), 63));
       }, 2}},
      {"arith.cmpi", {[](C c) {
         return fromInt(compareInts(c.op.predicate, c.u(0), c.u(1), c.operandWidth), 1);
       }, 2}},
      {"arith.select", {[](C c) { return c.u(0) ? c.in[1] : c.in[2]; }, 3}},
      {"arith.index_cast", {[](C c) { return c.integer(c.s(0)); }, 1}},
      {"arith.extsi", {[](C c) { return c.integer(c.s(0)); }, 1}},
      {"arith.index_castui", {[](C c) { return c.integer(int64_t(c.u(0))); }, 1}},
      {"arith.extui", {[](C c) { return c.integer(int64_t(c.u(0))); }, 1}},
      {"arith.trunci", {[](C c) { return c.integer(int64_t(c.u(0))); }, 1}},
      {"arith.sitofp", {[](C c) { return fromDouble(double(c.s(0))); }, 1}},
      {"arith.uitofp", {[](C c) { return fromDouble(double(c.u(0))); }, 1}},
      {"arith.fptosi", {[](C c) { return c.integer(int64_t(std::trunc(c.f(0)))); }, 1}},
      {"arith.extf", {[](C c) { return fromDouble(c.f(0)); }, 1}},
      {"arith.truncf", {[](C c) { return fromDouble(c.f(0)); }, 1}},
      {"math.exp", {[](C c) { return fromDouble(std::exp(c.f(0))); }, 1}},
      {"math.exp2", {[](C c) { return fromDouble(std::exp2(c.f(0))); }, 1}},
      {"math.expm1", {[](C c) { return fromDouble(std::expm1(c.f(0))); }, 1}},
      {"math.log", {[](C c) { return fromDouble(std::log(c.f(0))); }, 1}},
      {"math.log2", {[](C c) { return fromDouble(std::log2(c.f(0))); }, 1}},
      {"math.log10", {[](C c) { return fromDouble(std::log10(c.f(0))); }, 1}},
      {"math.log1p", {[](C c) { return fromDouble(std::log1p(c.f(0))); }, 1}},
      {"math.tanh", {[](C c) { return fromDouble(std::tanh(c.f(0))); }, 1}},
      {"math.sin", {[](C c) { return fromDouble(std::sin(c.f(0))); }, 1}},
      {"math.cos", {[](C c) { return fromDouble(std::cos(c.f(0))); }, 1}},
      {"math.atan", {[](C c) { return fromDouble(std::atan(c.f(0))); }, 1}},
      {"math.atan2", {[](C c) { return fromDouble(std::atan2(c.f(0), c.f(1))); }, 2}},
      {"math.sqrt", {[](C c) { return fromDouble(std::sqrt(c.f(0))); }, 1}},
      {"math.rsqrt", {[](C c) { return fromDouble(1.0 / std::sqrt(c.f(0))); }, 1}},
      {"math.absf", {[](C c) { return fromDouble(std::fabs(c.f(0))); }, 1}},
      {"math.absi", {[](C c) { return c.integer(std::llabs(c.s(0))); }, 1}},
      {"math.powf", {[](C c) { return fromDouble(std::pow(c.f(0), c.f(1))); }, 2}},
      {"math.erf", {[](C c) { return fromDouble(std::erf(c.f(0))); }, 1}},
      {"math.floor", {[](C c) { return fromDouble(std::floor(c.f(0))); }, 1}},
      {"math.ceil", {[](C c) { return fromDouble(std::ceil(c.f(0))); }, 1}},
      {"math.round", {[](C c) { return fromDouble(std::round(c.f(0))); }, 1}},
      {"math.trunc", {[](C c) { return fromDouble(std::trunc(c.f(0))); }, 1}},
      {"math.copysign", {[](C c) { return fromDouble(std::copysign(c.f(0), c.f(1))); }, 2}},
      {"math.fma", {[](C c) { return fromDouble(c.f(0) * c.f(1) + c.f(2)); }, 3}},
  };
  return table;
}

/// Runs a program; `leading` are its first arguments, the captures follow.
class Evaluator {
public:
  Evaluator(const VariantProgram &program,
            const std::vector<CaptureValue> &captures)
      : program(program), captures(captures) {
    firstCapture = program.arguments.size() - captures.size();
    for (const VariantOp &op : program.ops)
      rules.push_back(op.name == "tensor.extract" ? nullptr
                                                  : opTable().at(op.name).rule);
  }

  Scalar run(std::initializer_list<Scalar> leading) const {
    std::vector<Scalar> values(leading);
    for (size_t c = 0; c < captures.size(); ++c) {
      const std::string &type = program.arguments[firstCapture + c];
      values.push_back(type == "tensor"
                           ? Scalar()
                           : scalarOf(type, captures[c].elements.front()));
    }
    Scalar operands[3];
    for (size_t i = 0; i < program.ops.size(); ++i) {
      const VariantOp &op = program.ops[i];
      if (!rules[i]) { // tensor.extract, the index clamped to the extent
        const CaptureValue &capture = captures[op.operands[0] - firstCapture];
        int64_t flat = 0;
        for (size_t dim = 0; dim + 1 < op.operands.size(); ++dim) {
          int64_t at = signedOf(values[op.operands[dim + 1]].bits, 64);
          at = std::clamp<int64_t>(at, 0, capture.shape[dim] - 1);
          flat = flat * capture.shape[dim] + at;
        }
        values.push_back(scalarOf(op.type, capture.elements[flat]));
        continue;
      }
      for (size_t j = 0; j < op.operands.size(); ++j)
        operands[j] = values[op.operands[j]];
      const std::string &firstType =
          op.operands.empty() ? op.type : typeOf(op.operands[0]);
      OpContext context{op, operands, widthOf(op.type), widthOf(firstType)};
      values.push_back(rules[i](context));
    }
    return values[program.result];
  }

private:
  const std::string &typeOf(int32_t value) const {
    return value < int32_t(program.arguments.size())
               ? program.arguments[value]
               : program.ops[value - program.arguments.size()].type;
  }
  static Scalar scalarOf(const std::string &type, double element) {
    if (type == "f32" || type == "f16" || type == "bf16")
      return fromDouble(element);
    return fromInt(static_cast<int64_t>(element), widthOf(type));
  }

  const VariantProgram &program;
  const std::vector<CaptureValue> &captures;
  size_t firstCapture = 0;
  std::vector<OpRule> rules;
};

Scalar indexScalar(int64_t value) { return fromInt(value, 64); }

} // namespace

std::string fa::unsupportedVariantOp(const std::string &name, size_t operands) {
  if (name == "tensor.extract")
    return operands >= 1 ? "" : "tensor.extract without a tensor";
  auto it = opTable().find(name);
  if (it == opTable().end())
    return "the float64 reference does not evaluate '" + name + "'";
  if (it->second.operands != operands)
    return "'" + name + "' takes " + std::to_string(it->second.operands) +
           " operands, got " + std::to_string(operands);
  return "";
}

std::function<double(double, int64_t, int64_t, int64_t, int64_t)>
fa::scoreModOf(const VariantProgram &program,
               const std::vector<CaptureValue> &captures) {
  auto evaluator = std::make_shared<Evaluator>(program, captures);
  return [evaluator](double score, int64_t b, int64_t h, int64_t i, int64_t j) {
    return evaluator
        ->run({fromDouble(score), indexScalar(b), indexScalar(h),
               indexScalar(i), indexScalar(j)})
        .f;
  };
}

std::function<bool(int64_t, int64_t, int64_t, int64_t)>
fa::maskModOf(const VariantProgram &program,
              const std::vector<CaptureValue> &captures) {
  auto evaluator = std::make_shared<Evaluator>(program, captures);
  return [evaluator](int64_t b, int64_t h, int64_t i, int64_t j) {
    return evaluator
               ->run({indexScalar(b), indexScalar(h), indexScalar(i),
                      indexScalar(j)})
               .bits != 0;
  };
}

bool fa::programReads(const VariantProgram &program, int32_t value) {
  if (program.result == value)
    return true;
  for (const VariantOp &op : program.ops)
    for (int32_t operand : op.operands)
      if (operand == value)
        return true;
  return false;
}
