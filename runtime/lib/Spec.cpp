//===- Spec.cpp - attention specs and problem sizes -----------------------===//
//
// Part of fa-mlir.
//
//===----------------------------------------------------------------------===//

#include "fa/runtime/Spec.h"

#include "fa/runtime/Limits.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <set>
#include <sstream>
#include <vector>

using namespace fa;

double AttentionSpec::scaleOrDefault() const {
  return scale ? *scale : 1.0 / std::sqrt(static_cast<double>(headDim));
}

static bool parseInt(const std::string &text, int64_t &value) {
  if (text.empty())
    return false;
  errno = 0;
  char *end = nullptr;
  long long parsed = std::strtoll(text.c_str(), &end, 10);
  if (errno || *end != '\0')
    return false;
  value = parsed;
  return true;
}

static bool parseDouble(const std::string &text, double &value) {
  if (text.empty())
    return false;
  errno = 0;
  char *end = nullptr;
  value = std::strtod(text.c_str(), &end);
  return !errno && *end == '\0';
}

/// Splits on commas that are not inside parentheses.
static std::vector<std::string> splitFields(const std::string &text) {
  std::vector<std::string> fields(1);
  int depth = 0;
  for (char c : text) {
    if (c == '(')
      ++depth;
    if (c == ')')
      --depth;
    if (c == ',' && depth == 0)
      fields.emplace_back();
    else if (c != ' ')
      fields.back() += c;
  }
  return fields;
}

static std::string badValue(const std::string &key, const std::string &value,
                            const std::string &expected) {
  std::string message = "bad value '" + printableText(value) +
                        "' for spec key '" + key + "'";
  return expected.empty() ? message : message + " (expected " + expected + ")";
}

static std::string formatBound(double bound) {
  char text[32];
  std::snprintf(text, sizeof(text), "%g", bound);
  return text;
}

bool fa::parseMask(const std::string &text, ref::Mask &mask,
                   std::string &error) {
  const char *expected = "none, causal, causal_top_left or window(L,R) with "
                         "L, R >= -1";
  std::optional<MaskKind> kind = faMaskKindOfKeyword(text);
  if (kind && *kind != MaskKind::Window) {
    mask = {*kind};
    return true;
  }
  std::string bounds;
  if (text.rfind("window(", 0) == 0 && text.back() == ')')
    bounds = text.substr(7, text.size() - 8);
  else if (text.rfind("window:", 0) == 0)
    bounds = text.substr(7);
  else {
    error = badValue("mask", text, expected);
    return false;
  }
  size_t sep = bounds.find_first_of(",:");
  ref::Mask window{MaskKind::Window};
  if (sep == std::string::npos || !parseInt(bounds.substr(0, sep), window.left) ||
      !parseInt(bounds.substr(sep + 1), window.right) || window.left < -1 ||
      window.right < -1) {
    error = badValue("mask", text, expected);
    return false;
  }
  mask = window;
  return checkSpec(AttentionSpec{1, 1, ElementType::BF16, mask}, error);
}

bool fa::parseAlibi(const std::string &text, AlibiKind &alibi,
                    std::string &error) {
  for (AlibiKind kind :
       {AlibiKind::None, AlibiKind::Head, AlibiKind::BatchHead})
    if (text == alibiName(kind)) {
      alibi = kind;
      return true;
    }
  error = badValue("alibi", text, "none, head or batch_head");
  return false;
}

bool fa::parseSpecDtype(const std::string &text, ElementType &dtype,
                        std::string &error) {
  if (parseElementType(text, dtype) && dtype != ElementType::F32)
    return true;
  error = badValue("dtype", text, "f16, bf16 or f8e4m3fn");
  return false;
}

const char *fa::alibiName(AlibiKind alibi) {
  switch (alibi) {
  case AlibiKind::None:
    return "none";
  case AlibiKind::Head:
    return "head";
  case AlibiKind::BatchHead:
    return "batch_head";
  }
  return "none";
}

bool fa::checkSpec(const AttentionSpec &spec, std::string &error) {
  using namespace fa::limits;
  std::ostringstream os;
  if (spec.headDim < 1 || spec.valueDim < 1)
    os << "head dimensions must be >= 1 (got d=" << spec.headDim
       << " dv=" << spec.valueDim << ")";
  else if (spec.scale && !scaleInRange(*spec.scale))
    os << "scale " << exactDouble(*spec.scale)
       << " is out of range (|scale| must be in [" << formatBound(kMinAbsScale)
       << ", " << formatBound(kMaxAbsScale)
       << "] for an f32 softmax, see docs/dialect.md)";
  else if (!softcapInRange(spec.softcap))
    os << "softcap " << exactDouble(spec.softcap)
       << " is out of range (0 for none, or in [" << formatBound(kMinSoftcap)
       << ", " << formatBound(kMaxSoftcap) << "], see docs/dialect.md)";
  else if (spec.mask.kind != MaskKind::Window &&
           (spec.mask.left != -1 || spec.mask.right != -1))
    os << "only a window mask takes bounds, but " << maskName(spec.mask)
       << " has (" << spec.mask.left << ", " << spec.mask.right << ")";
  else if (spec.mask.kind == MaskKind::Window &&
           (spec.mask.left < -1 || spec.mask.right < -1 ||
            spec.mask.left > kMaxSequence || spec.mask.right > kMaxSequence))
    os << "window bounds (" << spec.mask.left << ", " << spec.mask.right
       << ") are out of range (each in [-1, " << kMaxSequence
       << "]; -1 means unbounded)";
  else if (spec.descale == DescaleKind::Head &&
           spec.dtype != ElementType::F8E4M3FN)
    os << "descale=head is for dtype=f8e4m3fn (16-bit inputs have no "
          "descale)";
  else if (!blockSizeValid(spec.blockM))
    os << "block_m must be " << blockSizeRule() << " (got " << spec.blockM
       << ")";
  else if (!blockSizeValid(spec.blockN))
    os << "block_n must be " << blockSizeRule() << " (got " << spec.blockN
       << ")";
  error = os.str();
  return error.empty();
}

bool fa::checkBackwardSpec(const AttentionSpec &spec, std::string &error) {
  using namespace fa::limits;
  if (!checkSpec(spec, error))
    return false;
  std::ostringstream os;
  if (spec.dtype == ElementType::F8E4M3FN)
    os << "dtype f8e4m3fn has no backward (f16 or bf16)";
  else if (spec.scale && !backwardScaleInRange(*spec.scale))
    os << "scale " << exactDouble(*spec.scale)
       << " is out of range for the backward (|scale| <= "
       << formatBound(kMaxAbsBackwardScale)
       << ": P is recomputed from the f32 LSE, see docs/dialect.md)";
  error = os.str();
  return error.empty();
}

std::string fa::exactDouble(double value) {
  // The shortest of %.15g, %.16g, %.17g that reads back to the same double
  // (%.17g always does): 0.1 stays "0.1", 1/sqrt(128) keeps every bit.
  char text[40];
  for (int digits = 15; digits <= 17; ++digits) {
    std::snprintf(text, sizeof(text), "%.*g", digits, value);
    if (std::strtod(text, nullptr) == value || std::isnan(value))
      break;
  }
  return text;
}

std::string fa::printableText(const std::string &text, bool keepNewlines) {
  std::string printable;
  printable.reserve(text.size());
  for (unsigned char c : text) {
    if ((c >= 0x20 && c != 0x7F) || (keepNewlines && c == '\n')) {
      printable += static_cast<char>(c);
      continue;
    }
    char escaped[5];
    std::snprintf(escaped, sizeof(escaped), "\\x%02X", c);
    printable += escaped;
  }
  return printable;
}

std::string fa::specText(const AttentionSpec &spec, bool blockMStated,
                         bool blockNStated) {
  std::ostringstream os;
  os << "d=" << spec.headDim << ",dv=" << spec.valueDim
     << ",dtype=" << elementTypeName(spec.dtype)
     << ",mask=" << maskName(spec.mask);
  if (spec.softcap > 0)
    os << ",softcap=" << exactDouble(spec.softcap);
  if (spec.alibi != AlibiKind::None)
    os << ",alibi=" << alibiName(spec.alibi);
  if (spec.descale == DescaleKind::Head)
    os << ",descale=head";
  os << ",scale=" << exactDouble(spec.scaleOrDefault());
  if (blockMStated)
    os << ",block_m=" << spec.blockM;
  if (blockNStated)
    os << ",block_n=" << spec.blockN;
  std::string text = os.str();
  text.erase(std::remove(text.begin(), text.end(), ' '), text.end());
  return text;
}

/// The keys of spec text, in the order specText prints them.
static const char *const kSpecKeys[] = {"d",     "dv",    "dtype",   "mask",
                                        "softcap", "alibi", "descale", "scale",
                                        "block_m", "block_n"};

bool fa::setSpecValue(AttentionSpec &spec, const std::string &key,
                      const std::string &value, std::string &error) {
  if (std::find(std::begin(kSpecKeys), std::end(kSpecKeys), key) ==
      std::end(kSpecKeys)) {
    error = "unknown spec key '" + printableText(key) +
            "' (expected d, dv, dtype, mask, softcap, alibi, descale, scale, "
            "block_m, block_n)";
    return false;
  }
  if (key == "dtype")
    return parseSpecDtype(value, spec.dtype, error);
  if (key == "mask")
    return parseMask(value, spec.mask, error);
  if (key == "alibi")
    return parseAlibi(value, spec.alibi, error);
  bool ok = true;
  std::string expected;
  if (key == "descale") {
    ok = value == "tensor" || value == "head";
    spec.descale = value == "head" ? DescaleKind::Head : DescaleKind::Tensor;
    expected = "tensor or head";
  } else if (key == "d")
    ok = parseInt(value, spec.headDim) && spec.headDim > 0;
  else if (key == "dv")
    ok = parseInt(value, spec.valueDim) && spec.valueDim > 0;
  else if (key == "softcap")
    ok = parseDouble(value, spec.softcap);
  else if (key == "scale") {
    double scale = 0.0;
    ok = parseDouble(value, scale);
    spec.scale = scale;
  } else if (key == "block_m" || key == "block_n") {
    int64_t &block = key == "block_m" ? spec.blockM : spec.blockN;
    ok = parseInt(value, block) && limits::blockSizeValid(block);
    expected = limits::blockSizeRule();
  }
  if (!ok)
    error = badValue(key, value, expected);
  return ok;
}

bool fa::parseSpec(const std::string &text, AttentionSpec &spec,
                   std::string &error, std::vector<std::string> *keysGiven) {
  spec = AttentionSpec();
  std::set<std::string> seen;
  std::vector<std::string> fields = splitFields(text);
  for (const std::string &field : fields) {
    // ",d=64", "d=64,," and "," alike: an empty field is a malformed spec
    // (text that is empty, or only spaces, still means no field at all).
    if (field.empty() && fields.size() > 1) {
      error = "spec '" + printableText(text) +
              "' has an empty field (a comma too many)";
      return false;
    }
    if (field.empty())
      continue;
    size_t eq = field.find('=');
    if (eq == std::string::npos) {
      error = "spec field '" + printableText(field) + "' is not key=value";
      return false;
    }
    std::string key = field.substr(0, eq), value = field.substr(eq + 1);
    // A repeated key is a request that says two things: refuse it rather
    // than let the last one win silently.
    if (seen.count(key)) {
      error = "spec key '" + printableText(key) + "' is given twice";
      return false;
    }
    if (!setSpecValue(spec, key, value, error))
      return false;
    seen.insert(key);
    if (keysGiven)
      keysGiven->push_back(key);
  }
  if (spec.headDim <= 0) {
    error = "spec needs d=<head dimension>";
    return false;
  }
  if (!seen.count("dv"))
    spec.valueDim = spec.headDim;
  return checkSpec(spec, error);
}

std::string fa::maskName(const ref::Mask &mask) {
  std::string name = faMaskKindKeyword(mask.kind);
  if (mask.kind == MaskKind::Window)
    name += "(" + std::to_string(mask.left) + ", " +
            std::to_string(mask.right) + ")";
  return name;
}

bool fa::validateProblem(const AttentionSpec &spec, const ProblemSize &size,
                         std::string &error) {
  // The reasons are formatted only once something is wrong: every launch
  // comes through here.
  auto refuse = [&](auto write) {
    std::ostringstream os;
    write(os);
    error = os.str();
    return false;
  };
  int64_t B = size.batch, Hq = size.queryHeads, Hkv = size.kvHeads,
          M = size.queryLen, N = size.keyLen, D = spec.headDim,
          Dv = spec.valueDim;
  if (B < 1 || Hq < 1 || Hkv < 1 || M < 1 || N < 1)
    return refuse([&](std::ostream &os) {
      os << "sizes must be >= 1 (got b=" << B << " hq=" << Hq << " hkv=" << Hkv
         << " m=" << M << " n=" << N << ")";
    });
  if (D < 1 || Dv < 1)
    return refuse([&](std::ostream &os) {
      os << "head dimensions must be >= 1 (got d=" << D << " dv=" << Dv << ")";
    });
  if (Hq % Hkv != 0)
    return refuse([&](std::ostream &os) {
      os << "query heads (" << Hq << ") must be a multiple of key/value heads ("
         << Hkv << ")";
    });
  if (M > limits::kMaxSequence || N > limits::kMaxSequence)
    return refuse([&](std::ostream &os) {
      os << "m and n must be at most " << limits::kMaxSequence << " (got m="
         << M << " n=" << N << ")";
    });
  // Every tensor of the run, forward and backward: the product of its
  // dimensions is checked before anything multiplies them unchecked.
  struct Tensor {
    const char *name;
    int64_t dims[4]; // (an initializer_list member would dangle here)
    size_t rank;
  };
  const Tensor tensors[] = {{"Q, dQ", {B, Hq, M, D}, 4},
                            {"K, dK", {B, Hkv, N, D}, 4},
                            {"V, dV", {B, Hkv, N, Dv}, 4},
                            {"O, dO", {B, Hq, M, Dv}, 4},
                            {"LSE", {B, Hq, M}, 3},
                            {"ALiBi slopes", {B, Hq}, 2}};
  for (const Tensor &t : tensors)
    if (limits::checkedElements(t.dims, t.rank) < 0)
      return refuse([&](std::ostream &os) {
        os << "the problem is too large: " << t.name << " [";
        for (size_t i = 0; i < t.rank; ++i)
          os << (i ? ", " : "") << t.dims[i];
        os << "] would have more than " << limits::kMaxTensorElements
           << " elements";
      });
  error.clear();
  return true;
}

std::vector<int64_t> fa::alibiShape(const AttentionSpec &spec,
                                    const ProblemSize &size) {
  switch (spec.alibi) {
  case AlibiKind::None:
    return {};
  case AlibiKind::Head:
    return {size.queryHeads};
  case AlibiKind::BatchHead:
    return {size.batch, size.queryHeads};
  }
  return {};
}

std::vector<double> fa::randomAlibiSlopes(const AttentionSpec &spec,
                                          const ProblemSize &size,
                                          uint64_t seed) {
  std::vector<double> slopes;
  if (spec.alibi == AlibiKind::None)
    return slopes;
  std::mt19937_64 gen(seed);
  std::uniform_real_distribution<double> jitter(0.1, 1.0);
  int64_t batches = spec.alibi == AlibiKind::BatchHead ? size.batch : 1;
  for (int64_t b = 0; b < batches; ++b)
    for (int64_t h = 0; h < size.queryHeads; ++h) {
      // The geometric ALiBi schedule, jittered so that no two slopes (and no
      // two batches) are alike.
      double geometric = std::exp2(-8.0 * static_cast<double>(h) /
                                   static_cast<double>(size.queryHeads));
      slopes.push_back(static_cast<float>(jitter(gen) * geometric));
    }
  return slopes;
}

ref::Problem fa::makeProblem(const AttentionSpec &spec,
                             const ProblemSize &size,
                             std::vector<double> alibiSlopes) {
  ref::Problem p;
  p.batch = size.batch;
  p.queryHeads = size.queryHeads;
  p.kvHeads = size.kvHeads;
  p.queryLen = size.queryLen;
  p.keyLen = size.keyLen;
  p.headDim = spec.headDim;
  p.valueDim = spec.valueDim;
  p.scale = spec.scaleOrDefault();
  p.softcap = spec.softcap;
  p.mask = spec.mask;
  p.alibiSlopes = std::move(alibiSlopes);
  return p;
}
