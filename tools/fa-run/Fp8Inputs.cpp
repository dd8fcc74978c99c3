//===- Fp8Inputs.cpp - fa-run's f8E4M3FN inputs, for every device ---------===//
//
// Part of fa-mlir.
//
//===----------------------------------------------------------------------===//

#include "Fp8Inputs.h"

#include "RandomDraws.h"

#include "fa/runtime/Numerics.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

using namespace fa;

/// One tensor of `shape` [B, H, S, W]: N(0, 1) values over descales that
/// map the largest magnitude to 448: one for the tensor, or with `perHead`
/// one per (batch, KV head) slice (`group` query heads share a KV head's).
/// Appends its descales to `descales`.
static QuantisedTensor quantisedTensor(std::vector<int64_t> shape,
                                       std::mt19937_64 &gen, bool perHead,
                                       int64_t group,
                                       std::vector<float> &descales) {
  QuantisedTensor t{std::move(shape), {}, {}};
  size_t count = 1;
  for (int64_t d : t.shape)
    count *= static_cast<size_t>(d);
  int64_t heads = t.shape[1], rows = t.shape[2] * t.shape[3];
  int64_t slices = perHead ? t.shape[0] * (heads / group) : 1;
  auto sliceOf = [&](size_t i) -> int64_t {
    if (!perHead)
      return 0;
    int64_t bh = static_cast<int64_t>(i) / rows;
    return (bh / heads) * (heads / group) + (bh % heads) / group;
  };
  std::vector<double> real = drawNormal(count, gen), largest(slices, 0.0);
  for (size_t i = 0; i < count; ++i) {
    // Per head, slices of 1x, 2x and 3x the magnitude: their descales
    // differ, so a kernel that reads the wrong one is caught.
    int64_t slice = sliceOf(i);
    real[i] *= static_cast<double>(1 + slice % 3);
    largest[slice] = std::max(largest[slice], std::fabs(real[i]));
  }
  size_t first = descales.size();
  for (double l : largest)
    descales.push_back(static_cast<float>(l > 0.0 ? l / 448.0 : 1.0));
  t.bytes.resize(count);
  t.values.resize(count);
  parallelChunks(count, [&](size_t begin, size_t end) {
    for (size_t i = begin; i < end; ++i) {
      float descale = descales[first + sliceOf(i)];
      t.bytes[i] = toF8E4M3FNBits(static_cast<float>(real[i] / descale));
      t.values[i] = static_cast<double>(fromF8E4M3FNBits(t.bytes[i])) * descale;
    }
  });
  return t;
}

QuantisedInputs fa::drawQuantisedInputs(const AttentionSpec &spec,
                                        const ProblemSize &size,
                                        std::mt19937_64 &gen) {
  int64_t B = size.batch, Hq = size.queryHeads, Hkv = size.kvHeads,
          M = size.queryLen, N = size.keyLen, D = spec.headDim,
          Dv = spec.valueDim;
  bool perHead = spec.descale == DescaleKind::Head;
  QuantisedInputs in;
  in.q = quantisedTensor({B, Hq, M, D}, gen, perHead, Hq / Hkv, in.descales);
  in.k = quantisedTensor({B, Hkv, N, D}, gen, perHead, 1, in.descales);
  in.v = quantisedTensor({B, Hkv, N, Dv}, gen, perHead, 1, in.descales);
  return in;
}

std::vector<float> fa::kernelDescales(const std::vector<float> &descales,
                                      bool noDescale) {
  std::vector<float> given = descales;
  if (noDescale)
    std::fill(given.begin() + 2 * (descales.size() / 3), given.end(), 1.0f);
  return given;
}

std::string fa::descaleSummary(const std::vector<float> &descales,
                               bool perHead) {
  size_t each = descales.size() / 3;
  if (each == 0)
    return "";
  char line[112];
  std::snprintf(line, sizeof(line), " descale%s=%.4g,%.4g,%.4g",
                perHead ? "[0,0]" : "", descales[0], descales[each],
                descales[2 * each]);
  return line;
}
