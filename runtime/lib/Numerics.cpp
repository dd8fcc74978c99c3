//===- Numerics.cpp - element types and the tolerance policy --------------===//
//
// Part of fa-mlir.
//
//===----------------------------------------------------------------------===//

#include "fa/runtime/Numerics.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

using namespace fa;

bool fa::parseElementType(const std::string &name, ElementType &type) {
  std::string lower = name;
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return std::tolower(c); });
  if (lower == "f16" || lower == "fp16")
    type = ElementType::F16;
  else if (lower == "bf16")
    type = ElementType::BF16;
  else if (lower == "f8e4m3fn" || lower == "fp8" || lower == "e4m3")
    type = ElementType::F8E4M3FN;
  else if (lower == "f32")
    type = ElementType::F32;
  else
    return false;
  return true;
}

const char *fa::elementTypeName(ElementType type) {
  switch (type) {
  case ElementType::F16:
    return "f16";
  case ElementType::BF16:
    return "bf16";
  case ElementType::F8E4M3FN:
    return "f8E4M3FN";
  case ElementType::F32:
    return "f32";
  }
  return "?";
}

size_t fa::elementTypeSize(ElementType type) {
  switch (type) {
  case ElementType::F16:
  case ElementType::BF16:
    return 2;
  case ElementType::F8E4M3FN:
    return 1;
  case ElementType::F32:
    return 4;
  }
  return 0;
}

ElementType fa::outputElementType(ElementType type) {
  return type == ElementType::F8E4M3FN ? ElementType::BF16 : type;
}

static uint32_t bitsOf(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  return bits;
}

static float floatOf(uint32_t bits) {
  float value;
  std::memcpy(&value, &bits, sizeof(value));
  return value;
}

uint16_t fa::toBF16Bits(float value) {
  uint32_t bits = bitsOf(value);
  if (std::isnan(value))
    return static_cast<uint16_t>((bits >> 16) | 0x40); // Keep it a quiet NaN.
  // Round to nearest even on the 16 dropped bits.
  uint32_t roundingBias = 0x7FFF + ((bits >> 16) & 1);
  return static_cast<uint16_t>((bits + roundingBias) >> 16);
}

float fa::fromBF16Bits(uint16_t bits) {
  return floatOf(static_cast<uint32_t>(bits) << 16);
}

/// Rounds a finite or infinite float to a binary format with `mantissaBits`
/// explicit mantissa bits and exponent range [minExp, maxExp] (unbiased, of
/// the normal numbers), returning the rounded value as a float. Subnormals
/// are handled by rounding to the fixed quantum 2^(minExp - mantissaBits).
static double roundToFormat(double value, int mantissaBits, int minExp) {
  if (value == 0.0 || !std::isfinite(value))
    return value;
  int exponent;
  std::frexp(value, &exponent); // value = f * 2^exponent, f in [0.5, 1).
  int unbiased = std::max(exponent - 1, minExp);
  double quantum = std::ldexp(1.0, unbiased - mantissaBits);
  // nearbyint rounds half to even in the default rounding mode.
  return std::nearbyint(value / quantum) * quantum;
}

uint16_t fa::toF16Bits(float value) {
  uint32_t bits = bitsOf(value);
  uint16_t sign = static_cast<uint16_t>((bits >> 16) & 0x8000);
  if (std::isnan(value))
    return sign | 0x7E00;
  double rounded = roundToFormat(std::fabs(static_cast<double>(value)), 10, -14);
  if (rounded >= 65520.0 || std::isinf(rounded))
    return sign | 0x7C00; // Overflow to infinity, as IEEE f16 does.
  if (rounded == 0.0)
    return sign;
  int exponent;
  double fraction = std::frexp(rounded, &exponent); // [0.5, 1)
  int unbiased = exponent - 1;
  if (unbiased < -14) { // Subnormal: multiples of 2^-24.
    return sign | static_cast<uint16_t>(std::ldexp(rounded, 24));
  }
  uint16_t mantissa =
      static_cast<uint16_t>(std::ldexp(fraction * 2.0 - 1.0, 10));
  return sign | static_cast<uint16_t>((unbiased + 15) << 10) | mantissa;
}

float fa::fromF16Bits(uint16_t bits) {
  int sign = (bits >> 15) & 1;
  int exponent = (bits >> 10) & 0x1F;
  int mantissa = bits & 0x3FF;
  double magnitude;
  if (exponent == 0)
    magnitude = std::ldexp(static_cast<double>(mantissa), -24);
  else if (exponent == 31)
    magnitude = mantissa ? std::numeric_limits<double>::quiet_NaN()
                         : std::numeric_limits<double>::infinity();
  else
    magnitude = std::ldexp(1.0 + mantissa / 1024.0, exponent - 15);
  return static_cast<float>(sign ? -magnitude : magnitude);
}

uint8_t fa::toF8E4M3FNBits(float value) {
  uint8_t sign = std::signbit(value) ? 0x80 : 0x00;
  if (std::isnan(value))
    return 0x7F;
  // E4M3FN: bias 7, 3 mantissa bits, max 448, no infinities: saturate.
  double rounded = roundToFormat(std::fabs(static_cast<double>(value)), 3, -6);
  if (rounded > 448.0 || std::isinf(rounded))
    rounded = 448.0;
  if (rounded == 0.0)
    return sign;
  int exponent;
  double fraction = std::frexp(rounded, &exponent);
  int unbiased = exponent - 1;
  if (unbiased < -6) // Subnormal: multiples of 2^-9.
    return sign | static_cast<uint8_t>(std::ldexp(rounded, 9));
  uint8_t mantissa = static_cast<uint8_t>(std::ldexp(fraction * 2.0 - 1.0, 3));
  return sign | static_cast<uint8_t>((unbiased + 7) << 3) | mantissa;
}

float fa::fromF8E4M3FNBits(uint8_t bits) {
  int sign = (bits >> 7) & 1;
  int exponent = (bits >> 3) & 0xF;
  int mantissa = bits & 0x7;
  double magnitude;
  if (exponent == 0xF && mantissa == 0x7)
    magnitude = std::numeric_limits<double>::quiet_NaN();
  else if (exponent == 0)
    magnitude = std::ldexp(static_cast<double>(mantissa), -9);
  else
    magnitude = std::ldexp(1.0 + mantissa / 8.0, exponent - 7);
  return static_cast<float>(sign ? -magnitude : magnitude);
}

double fa::roundTo(ElementType type, double value) {
  float single = static_cast<float>(value);
  switch (type) {
  case ElementType::F16:
    return fromF16Bits(toF16Bits(single));
  case ElementType::BF16:
    return fromBF16Bits(toBF16Bits(single));
  case ElementType::F8E4M3FN:
    return fromF8E4M3FNBits(toF8E4M3FNBits(single));
  case ElementType::F32:
    return single;
  }
  return value;
}

/// The dtype a naive framework computes in. FP8's baseline (the e4m3
/// yardstick) is the naive fp8 attention: Q, K, V in e4m3 (the inputs
/// already are), scores accumulated and kept in f32, P rounded to e4m3 for
/// P·V, accumulated in f32, O rounded to bf16 (the fp8 output type).
static ElementType naiveWorkingType(ElementType type) {
  return type == ElementType::F8E4M3FN ? ElementType::F32 : type;
}
/// The type the naive attention rounds P to before P·V (O: to
/// outputElementType).
static ElementType naiveProbsType(ElementType type) {
  return type == ElementType::F8E4M3FN ? ElementType::F8E4M3FN : type;
}

double fa::naiveDot(ScoreAccumulation accumulation, const double *query,
                   const double *key, int64_t width) {
  double sum = 0.0;
  if (accumulation == ScoreAccumulation::F32) {
    for (int64_t d = 0; d < width; ++d)
      sum += query[d] * key[d];
    return sum;
  }
  // One wgmma k32 step per 32 elements: the products (exact: e4m3 times
  // e4m3 fits in a double) and the running sum, each truncated to a
  // multiple of 2^(e - 13), e the exponent of the largest of them.
  constexpr int kStep = 32, kFractionBits = 13;
  for (int64_t d0 = 0; d0 < width; d0 += kStep) {
    int64_t count = std::min<int64_t>(kStep, width - d0);
    double largest = std::fabs(sum);
    for (int64_t d = d0; d < d0 + count; ++d)
      largest = std::max(largest, std::fabs(query[d] * key[d]));
    if (largest == 0.0)
      continue;
    double ulp = std::ldexp(1.0, std::ilogb(largest) - kFractionBits);
    double next = std::trunc(sum / ulp) * ulp;
    for (int64_t d = d0; d < d0 + count; ++d)
      next += std::trunc(query[d] * key[d] / ulp) * ulp;
    sum = next;
  }
  return sum;
}

/// Scores of one row, rounded as a naive low-precision framework would;
/// -inf where masked. Also returns d(score)/d(raw) for the softcap.
static double naiveScores(ElementType working, const ref::Problem &p,
                          const double *query, const double *key, int64_t b,
                          int64_t h, int64_t i, std::vector<double> &scores,
                          std::vector<double> &slopes,
                          ScoreAccumulation accumulation) {
  auto round = [&](double x) { return roundTo(working, x); };
  int64_t kvHead = p.kvHeadOf(h);
  const double *qRow =
      query + ((b * p.queryHeads + h) * p.queryLen + i) * p.headDim;
  double rowMax = -std::numeric_limits<double>::infinity();
  scores.assign(p.keyLen, -std::numeric_limits<double>::infinity());
  slopes.assign(p.keyLen, 1.0);
  for (int64_t j = 0; j < p.keyLen; ++j) {
    if (!ref::isVisible(p.mask, i, j, p.queryLen, p.keyLen) ||
        (p.maskMod && !p.maskMod(b, h, i, j)))
      continue;
    const double *kRow =
        key + ((b * p.kvHeads + kvHead) * p.keyLen + j) * p.headDim;
    double dot = naiveDot(accumulation, qRow, kRow, p.headDim);
    double s = round(round(dot) * p.scale);
    if (p.softcap > 0.0) {
      double t = std::tanh(s / p.softcap);
      s = round(p.softcap * t);
      slopes[j] = 1.0 - t * t;
    }
    if (!p.alibiSlopes.empty())
      s = round(s + ref::alibiBias(p, b, h, i, j));
    if (p.scoreMod) {
      ref::ScoreModValue mod = ref::scoreModAt(p, s, b, h, i, j);
      s = round(mod.value);
      slopes[j] *= mod.slope;
    }
    scores[j] = s;
    rowMax = std::max(rowMax, s);
  }
  return rowMax;
}

void fa::naiveForwardRow(ElementType type, const ref::Problem &p,
                         const double *query, const double *key,
                         const double *value, int64_t b, int64_t h, int64_t i,
                         double *outRow, double *lse,
                         ScoreAccumulation accumulation) {
  ElementType working = naiveWorkingType(type);
  std::vector<double> scores, slopes;
  double rowMax = naiveScores(working, p, query, key, b, h, i, scores, slopes,
                              accumulation);
  for (int64_t e = 0; e < p.valueDim; ++e)
    outRow[e] = 0.0;
  if (std::isinf(rowMax)) {
    *lse = -std::numeric_limits<double>::infinity();
    return;
  }
  double sum = 0.0;
  for (int64_t j = 0; j < p.keyLen; ++j)
    sum += std::isinf(scores[j]) ? 0.0 : std::exp(scores[j] - rowMax);
  *lse = static_cast<float>(rowMax + std::log(sum));
  int64_t kvHead = p.kvHeadOf(h);
  for (int64_t j = 0; j < p.keyLen; ++j) {
    if (std::isinf(scores[j]))
      continue;
    double prob = roundTo(naiveProbsType(type), std::exp(scores[j] - rowMax) / sum);
    const double *vRow =
        value + ((b * p.kvHeads + kvHead) * p.keyLen + j) * p.valueDim;
    for (int64_t e = 0; e < p.valueDim; ++e)
      outRow[e] += prob * vRow[e];
  }
  for (int64_t e = 0; e < p.valueDim; ++e)
    outRow[e] = roundTo(outputElementType(type), outRow[e]);
}

ref::ForwardResult fa::naiveForward(ElementType type, const ref::Problem &p,
                                    const std::vector<double> &query,
                                    const std::vector<double> &key,
                                    const std::vector<double> &value,
                                    ScoreAccumulation accumulation) {
  ref::ForwardResult result;
  result.output.assign(p.batch * p.queryHeads * p.queryLen * p.valueDim, 0.0);
  result.lse.assign(p.batch * p.queryHeads * p.queryLen, 0.0);
  for (int64_t b = 0; b < p.batch; ++b)
    for (int64_t h = 0; h < p.queryHeads; ++h)
      for (int64_t i = 0; i < p.queryLen; ++i) {
        size_t row = (b * p.queryHeads + h) * p.queryLen + i;
        naiveForwardRow(type, p, query.data(), key.data(), value.data(), b, h,
                        i, result.output.data() + row * p.valueDim,
                        result.lse.data() + row, accumulation);
      }
  return result;
}

ref::BackwardResult fa::naiveBackward(ElementType type, const ref::Problem &p,
                                      const std::vector<double> &query,
                                      const std::vector<double> &key,
                                      const std::vector<double> &value,
                                      const std::vector<double> &gradOutput) {
  ElementType working = naiveWorkingType(type);
  auto round = [&](double x) { return roundTo(working, x); };
  ref::BackwardResult grads;
  grads.gradQuery.assign(query.size(), 0.0);
  grads.gradKey.assign(key.size(), 0.0);
  grads.gradValue.assign(value.size(), 0.0);
  std::vector<double> scores, slopes, probs(p.keyLen), gradProbs(p.keyLen);
  for (int64_t b = 0; b < p.batch; ++b)
    for (int64_t h = 0; h < p.queryHeads; ++h) {
      int64_t kvHead = p.kvHeadOf(h);
      for (int64_t i = 0; i < p.queryLen; ++i) {
        size_t row = (b * p.queryHeads + h) * p.queryLen + i;
        double rowMax = naiveScores(working, p, query.data(), key.data(), b,
                                    h, i, scores, slopes,
                                    ScoreAccumulation::F32);
        if (std::isinf(rowMax))
          continue; // No visible key: no gradient flows through this row.
        double sum = 0.0;
        for (int64_t j = 0; j < p.keyLen; ++j)
          sum += std::isinf(scores[j]) ? 0.0 : std::exp(scores[j] - rowMax);
        const double *dO = gradOutput.data() + row * p.valueDim;
        // The naive O (in dtype) feeds D, as a framework's saved O would.
        std::vector<double> out(p.valueDim, 0.0);
        for (int64_t j = 0; j < p.keyLen; ++j) {
          probs[j] = std::isinf(scores[j])
                         ? 0.0
                         : round(std::exp(scores[j] - rowMax) / sum);
          const double *vRow =
              value.data() + ((b * p.kvHeads + kvHead) * p.keyLen + j) * p.valueDim;
          double dot = 0.0;
          for (int64_t e = 0; e < p.valueDim; ++e) {
            out[e] += probs[j] * vRow[e];
            dot += dO[e] * vRow[e];
          }
          gradProbs[j] = round(dot);
        }
        double rowDot = 0.0;
        for (int64_t e = 0; e < p.valueDim; ++e)
          rowDot += dO[e] * round(out[e]);
        rowDot = round(rowDot);
        const double *qRow = query.data() + row * p.headDim;
        for (int64_t j = 0; j < p.keyLen; ++j) {
          if (probs[j] == 0.0)
            continue;
          size_t kvRow = (b * p.kvHeads + kvHead) * p.keyLen + j;
          for (int64_t e = 0; e < p.valueDim; ++e)
            grads.gradValue[kvRow * p.valueDim + e] += probs[j] * dO[e];
          double gradScore =
              round(probs[j] * (gradProbs[j] - rowDot)) * slopes[j] * p.scale;
          for (int64_t d = 0; d < p.headDim; ++d) {
            grads.gradQuery[row * p.headDim + d] +=
                gradScore * key[kvRow * p.headDim + d];
            grads.gradKey[kvRow * p.headDim + d] += gradScore * qRow[d];
          }
        }
      }
    }
  for (auto *grad : {&grads.gradQuery, &grads.gradKey, &grads.gradValue})
    for (double &x : *grad)
      x = round(x);
  return grads;
}

ErrorStats fa::compare(const double *actual, const double *expected,
                       size_t count) {
  ErrorStats stats;
  double diffSquares = 0.0, refSquares = 0.0;
  for (size_t idx = 0; idx < count; ++idx) {
    double a = actual[idx], e = expected[idx];
    if (std::isinf(e) && a == e)
      continue; // -inf LSE of a fully masked row, reproduced exactly.
    if (!std::isfinite(a) || !std::isfinite(e)) {
      if (stats.nonFinite++ == 0)
        stats.firstNonFinite = idx;
      continue;
    }
    double diff = std::fabs(a - e);
    if (diff > stats.maxAbs) {
      stats.maxAbs = diff;
      stats.worstIndex = idx;
    }
    diffSquares += diff * diff;
    refSquares += e * e;
  }
  stats.relative = refSquares > 0.0 ? std::sqrt(diffSquares / refSquares)
                                    : std::sqrt(diffSquares);
  return stats;
}

ErrorStats fa::compare(const std::vector<double> &actual,
                       const std::vector<double> &expected) {
  if (actual.size() != expected.size()) {
    ErrorStats mismatch;
    mismatch.nonFinite = std::max(actual.size(), expected.size());
    return mismatch;
  }
  return compare(actual.data(), expected.data(), actual.size());
}

double fa::toleranceBound(const ErrorStats &naive, double floor) {
  return std::max(2.0 * naive.maxAbs + 1e-5, floor);
}

bool fa::withinTolerance(const ErrorStats &kernel, const ErrorStats &naive,
                         double floor) {
  return kernel.nonFinite == 0 && kernel.maxAbs <= toleranceBound(naive, floor);
}
