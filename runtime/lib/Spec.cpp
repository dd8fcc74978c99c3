//===- Spec.cpp - attention specs and problem sizes -----------------------===//
//
// Part of fa-mlir.
//
//===----------------------------------------------------------------------===//

#include "fa/runtime/Spec.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <random>
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

static bool parseMask(const std::string &text, ref::Mask &mask) {
  if (text == "none") {
    mask = {};
    return true;
  }
  if (text == "causal") {
    mask = {ref::MaskKind::Causal};
    return true;
  }
  if (text == "causal_top_left") {
    mask = {ref::MaskKind::CausalTopLeft};
    return true;
  }
  std::string bounds;
  if (text.rfind("window(", 0) == 0 && text.back() == ')')
    bounds = text.substr(7, text.size() - 8);
  else if (text.rfind("window:", 0) == 0)
    bounds = text.substr(7);
  else
    return false;
  size_t sep = bounds.find_first_of(",:");
  if (sep == std::string::npos)
    return false;
  mask.kind = ref::MaskKind::Window;
  return parseInt(bounds.substr(0, sep), mask.left) &&
         parseInt(bounds.substr(sep + 1), mask.right) && mask.left >= -1 &&
         mask.right >= -1;
}

static bool parseAlibi(const std::string &text, AlibiKind &alibi) {
  for (AlibiKind kind :
       {AlibiKind::None, AlibiKind::Head, AlibiKind::BatchHead})
    if (text == alibiName(kind)) {
      alibi = kind;
      return true;
    }
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

bool fa::parseSpec(const std::string &text, AttentionSpec &spec,
                   std::string &error) {
  spec = AttentionSpec();
  bool sawValueDim = false;
  for (const std::string &field : splitFields(text)) {
    if (field.empty())
      continue;
    size_t eq = field.find('=');
    if (eq == std::string::npos) {
      error = "spec field '" + field + "' is not key=value";
      return false;
    }
    std::string key = field.substr(0, eq), value = field.substr(eq + 1);
    bool ok = true;
    if (key == "d")
      ok = parseInt(value, spec.headDim) && spec.headDim > 0;
    else if (key == "dv") {
      ok = parseInt(value, spec.valueDim) && spec.valueDim > 0;
      sawValueDim = true;
    } else if (key == "dtype")
      ok = parseElementType(value, spec.dtype) &&
           spec.dtype != ElementType::F32;
    else if (key == "mask")
      ok = parseMask(value, spec.mask);
    else if (key == "softcap")
      ok = parseDouble(value, spec.softcap) && spec.softcap >= 0 &&
           std::isfinite(spec.softcap);
    else if (key == "alibi")
      ok = parseAlibi(value, spec.alibi);
    else if (key == "scale") {
      double scale;
      ok = parseDouble(value, scale) && std::isfinite(scale);
      spec.scale = scale;
    } else if (key == "block_m")
      ok = parseInt(value, spec.blockM) && spec.blockM > 0 &&
           (spec.blockM & (spec.blockM - 1)) == 0;
    else if (key == "block_n")
      ok = parseInt(value, spec.blockN) && spec.blockN > 0 &&
           (spec.blockN & (spec.blockN - 1)) == 0;
    else {
      error = "unknown spec key '" + key +
              "' (expected d, dv, dtype, mask, softcap, alibi, scale, block_m, "
              "block_n)";
      return false;
    }
    if (!ok) {
      error = "bad value '" + value + "' for spec key '" + key + "'";
      if (key == "mask")
        error += " (expected none, causal, causal_top_left or window(L,R) with "
                 "L, R >= -1)";
      else if (key == "dtype")
        error += " (expected f16, bf16 or f8e4m3fn)";
      else if (key == "alibi")
        error += " (expected none, head or batch_head)";
      else if (key == "block_m" || key == "block_n")
        error += " (expected a power of two)";
      return false;
    }
  }
  if (spec.headDim <= 0) {
    error = "spec needs d=<head dimension>";
    return false;
  }
  if (!sawValueDim)
    spec.valueDim = spec.headDim;
  return true;
}

std::string fa::maskName(const ref::Mask &mask) {
  switch (mask.kind) {
  case ref::MaskKind::None:
    return "none";
  case ref::MaskKind::Causal:
    return "causal";
  case ref::MaskKind::CausalTopLeft:
    return "causal_top_left";
  case ref::MaskKind::Window: {
    std::ostringstream os;
    os << "window(" << mask.left << ", " << mask.right << ")";
    return os.str();
  }
  }
  return "none";
}

bool fa::validateProblem(const AttentionSpec &spec, const ProblemSize &size,
                         std::string &error) {
  std::ostringstream os;
  if (size.batch < 1 || size.queryHeads < 1 || size.kvHeads < 1 ||
      size.queryLen < 1 || size.keyLen < 1)
    os << "sizes must be >= 1 (got b=" << size.batch << " hq="
       << size.queryHeads << " hkv=" << size.kvHeads << " m=" << size.queryLen
       << " n=" << size.keyLen << ")";
  else if (size.queryHeads % size.kvHeads != 0)
    os << "hq (" << size.queryHeads << ") is not a multiple of hkv ("
       << size.kvHeads << ")";
  error = os.str();
  (void)spec;
  return error.empty();
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
