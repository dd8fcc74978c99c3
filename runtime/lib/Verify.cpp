//===- Verify.cpp - checking kernel outputs against the reference ---------===//
//
// Part of fa-mlir.
//
//===----------------------------------------------------------------------===//

#include "fa/runtime/Verify.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <set>
#include <sstream>

using namespace fa;

bool VerifyReport::pass() const {
  if (checks.empty())
    return false;
  for (const TensorCheck &check : checks)
    if (!check.pass)
      return false;
  return true;
}

std::string VerifyReport::format() const {
  std::ostringstream os;
  char line[512];
  for (const TensorCheck &c : checks) {
    std::snprintf(line, sizeof(line),
                  "  %-4s max_abs_err=%.3e rel_err=%.3e naive_max_abs_err=%.3e "
                  "bound=%.3e nan=%zu %s",
                  c.name.c_str(), c.kernel.maxAbs, c.kernel.relative,
                  c.naive.maxAbs, toleranceBound(c.naive, c.floor),
                  c.kernel.nonFinite,
                  c.pass ? "PASS" : "FAIL");
    os << line;
    if (c.f32NaiveMaxAbs >= 0.0) {
      std::snprintf(line, sizeof(line), " (f32-sum naive: %.3e)", c.f32NaiveMaxAbs);
      os << line;
    }
    if (!c.pass)
      os << " (worst at " << c.worstWhere << ")";
    os << "\n";
  }
  os << "  rows checked: " << rowsChecked << " of " << rowsTotal << "\n";
  os << "  verdict: " << (pass() ? "PASS" : "FAIL");
  return os.str();
}

/// "[b, h, i, e]" for a flat index into a dense [B, H, S, W] tensor.
static std::string where(size_t index, int64_t heads, int64_t seq,
                         int64_t width) {
  std::ostringstream os;
  int64_t e = index % width;
  int64_t i = (index / width) % seq;
  int64_t h = (index / width / seq) % heads;
  int64_t b = index / width / seq / heads;
  os << "[" << b << ", " << h << ", " << i;
  if (width > 1)
    os << ", " << e;
  os << "]";
  return os.str();
}

static TensorCheck check(const std::string &name,
                         const std::vector<double> &kernel,
                         const std::vector<double> &reference,
                         const std::vector<double> &naive, int64_t heads,
                         int64_t seq, int64_t width, double floor = 0.0) {
  TensorCheck c;
  c.name = name;
  c.kernel = compare(kernel, reference);
  c.naive = compare(naive, reference);
  c.floor = floor;
  c.pass = withinTolerance(c.kernel, c.naive, floor);
  size_t worst = c.kernel.nonFinite ? c.kernel.firstNonFinite : c.kernel.worstIndex;
  c.worstWhere = where(worst, heads, seq, width);
  return c;
}

VerifyReport fa::verifyForward(ElementType type, const ref::Problem &p,
                               const ForwardData &data,
                               const std::vector<int64_t> &rows,
                               ScoreAccumulation accumulation) {
  VerifyReport report;
  report.rowsTotal = p.batch * p.queryHeads * p.queryLen;
  std::vector<int64_t> selected = rows;
  if (selected.empty())
    for (int64_t row = 0; row < static_cast<int64_t>(report.rowsTotal); ++row)
      selected.push_back(row);
  report.rowsChecked = selected.size();

  // Gather the selected rows of kernel, reference and naive outputs.
  std::vector<double> outK, outR, outN, lseK, lseR, lseN, outF, lseF;
  std::vector<double> refRow(p.valueDim), naiveRow(p.valueDim),
      f32Row(p.valueDim), probs;
  bool showF32 = accumulation != ScoreAccumulation::F32;
  double lseFloor = 0.0;
  for (int64_t row : selected) {
    int64_t i = row % p.queryLen;
    int64_t h = (row / p.queryLen) % p.queryHeads;
    int64_t b = row / p.queryLen / p.queryHeads;
    double refLse, naiveLse;
    ref::forwardRow(p, data.query.data(), data.key.data(), data.value.data(),
                    b, h, i, refRow.data(), &refLse, &probs);
    naiveForwardRow(type, p, data.query.data(), data.key.data(),
                    data.value.data(), b, h, i, naiveRow.data(), &naiveLse,
                    accumulation);
    double f32Lse = 0.0;
    if (showF32)
      naiveForwardRow(type, p, data.query.data(), data.key.data(),
                      data.value.data(), b, h, i, f32Row.data(), &f32Lse);
    for (int64_t e = 0; e < p.valueDim; ++e) {
      outK.push_back(data.output[row * p.valueDim + e]);
      outR.push_back(refRow[e]);
      outN.push_back(naiveRow[e]);
    }
    if (showF32)
      outF.insert(outF.end(), f32Row.begin(), f32Row.end());
    if (!data.lse.empty()) {
      lseFloor = std::max(lseFloor, lseRoundingFloor(p, data.query, data.key,
                                                     row, refLse, probs));
      lseK.push_back(data.lse[row]);
      lseR.push_back(refLse);
      lseN.push_back(naiveLse);
      if (showF32)
        lseF.push_back(f32Lse);
    }
  }
  // Positions in the gathered vectors are reported as [sample, 0, 0, e].
  report.checks.push_back(
      check("O", outK, outR, outN, 1, selected.size(), p.valueDim));
  if (!data.lse.empty())
    report.checks.push_back(
        check("LSE", lseK, lseR, lseN, 1, selected.size(), 1, lseFloor));
  if (showF32) {
    report.checks[0].f32NaiveMaxAbs = compare(outF, outR).maxAbs;
    if (report.checks.size() > 1)
      report.checks[1].f32NaiveMaxAbs = compare(lseF, lseR).maxAbs;
  }
  if (rows.empty()) { // Full check: report real coordinates.
    report.checks[0].worstWhere =
        where(report.checks[0].kernel.nonFinite
                  ? report.checks[0].kernel.firstNonFinite
                  : report.checks[0].kernel.worstIndex,
              p.queryHeads, p.queryLen, p.valueDim);
    if (report.checks.size() > 1)
      report.checks[1].worstWhere =
        where(report.checks[1].kernel.nonFinite
                  ? report.checks[1].kernel.firstNonFinite
                  : report.checks[1].kernel.worstIndex,
              p.queryHeads, p.queryLen, 1);
  }
  return report;
}

double fa::lseRoundingFloor(const ref::Problem &p,
                            const std::vector<double> &query,
                            const std::vector<double> &key, int64_t row,
                            double lse, const std::vector<double> &probs) {
  // As gradientRoundingFloors: f32's unit roundoff and the probabilistic
  // dot-product bound; kUlps covers the few f32 roundings (the scale's
  // product, log2(e), the log of the sum) each logit and the LSE take.
  constexpr double kUnitRoundoff = 0x1p-24, kLambda = 6.0, kUlps = 4.0;
  if (!std::isfinite(lse))
    return 0.0;
  double dotBound = kLambda * std::sqrt(double(p.headDim));
  int64_t h = (row / p.queryLen) % p.queryHeads;
  int64_t b = row / p.queryLen / p.queryHeads;
  const double *qRow = query.data() + row * p.headDim;
  int64_t kvBase = (b * p.kvHeads + p.kvHeadOf(h)) * p.keyLen;
  double weighted = 0.0;
  for (int64_t j = 0; j < p.keyLen; ++j) {
    if (probs[j] == 0.0)
      continue;
    const double *kRow = key.data() + (kvBase + j) * p.headDim;
    double terms = 0.0;
    for (int64_t d = 0; d < p.headDim; ++d)
      terms += std::fabs(qRow[d] * kRow[d]);
    weighted += probs[j] * (dotBound + kUlps) * std::fabs(p.scale) * terms;
  }
  return kUnitRoundoff * (kUlps * std::fabs(lse) + weighted);
}

GradientFloors fa::gradientRoundingFloors(const ref::Problem &p,
                                          const std::vector<double> &query,
                                          const std::vector<double> &key,
                                          const std::vector<double> &value,
                                          const std::vector<double> &gradOutput) {
  // f32's unit roundoff, and the probabilistic bound of an n-term f32 dot
  // product's error, lambda sqrt(n) u sum |x y| (docs/design.md).
  constexpr double kUnitRoundoff = 0x1p-24, kLambda = 6.0;
  double dotBound = kLambda * std::sqrt(double(p.valueDim)) * kUnitRoundoff;
  std::vector<double> floorQuery(query.size(), 0.0), floorKey(key.size(), 0.0);
  std::vector<double> probs, out(p.valueDim);
  for (int64_t b = 0; b < p.batch; ++b)
    for (int64_t h = 0; h < p.queryHeads; ++h) {
      int64_t kvHead = p.kvHeadOf(h);
      for (int64_t i = 0; i < p.queryLen; ++i) {
        int64_t row = (b * p.queryHeads + h) * p.queryLen + i;
        double lse =
            ref::rowProbabilities(p, query.data(), key.data(), b, h, i, probs);
        if (std::isinf(lse))
          continue;
        const double *dO = gradOutput.data() + row * p.valueDim;
        const double *qRow = query.data() + row * p.headDim;
        auto kvRow = [&](int64_t j) {
          return (b * p.kvHeads + kvHead) * p.keyLen + j;
        };
        std::fill(out.begin(), out.end(), 0.0);
        for (int64_t j = 0; j < p.keyLen; ++j)
          for (int64_t e = 0; e < p.valueDim && probs[j] != 0.0; ++e)
            out[e] += probs[j] * value[kvRow(j) * p.valueDim + e];
        // |dO|·|O|: D_i's terms.
        double rowDotTerms = 0.0;
        for (int64_t e = 0; e < p.valueDim; ++e)
          rowDotTerms += std::fabs(dO[e] * out[e]);
        for (int64_t j = 0; j < p.keyLen; ++j) {
          if (probs[j] == 0.0)
            continue;
          const double *vRow = value.data() + kvRow(j) * p.valueDim;
          const double *kRow = key.data() + kvRow(j) * p.headDim;
          double gradProbTerms = 0.0;
          for (int64_t e = 0; e < p.valueDim; ++e)
            gradProbTerms += std::fabs(dO[e] * vRow[e]);
          // dS_ij = P_ij (dP_ij - D_i), dP and D each an f32 dot product
          // over Dv (the softcap's derivative is at most 1).
          double gradScore =
              probs[j] * dotBound * (gradProbTerms + rowDotTerms) * p.scale;
          for (int64_t d = 0; d < p.headDim; ++d) {
            floorQuery[row * p.headDim + d] += gradScore * std::fabs(kRow[d]);
            floorKey[kvRow(j) * p.headDim + d] += gradScore * std::fabs(qRow[d]);
          }
        }
      }
    }
  GradientFloors floors;
  for (double f : floorQuery)
    floors.gradQuery = std::max(floors.gradQuery, f);
  for (double f : floorKey)
    floors.gradKey = std::max(floors.gradKey, f);
  return floors;
}

VerifyReport fa::verifyBackward(ElementType type, const ref::Problem &p,
                                const BackwardData &data) {
  VerifyReport report;
  report.rowsTotal = report.rowsChecked = p.batch * p.queryHeads * p.queryLen;
  ref::BackwardResult exact =
      ref::backward(p, data.query, data.key, data.value, data.gradOutput);
  ref::BackwardResult naive =
      naiveBackward(type, p, data.query, data.key, data.value, data.gradOutput);
  GradientFloors floors = gradientRoundingFloors(p, data.query, data.key,
                                                 data.value, data.gradOutput);
  report.checks.push_back(check("dQ", data.gradQuery, exact.gradQuery,
                                naive.gradQuery, p.queryHeads, p.queryLen,
                                p.headDim, floors.gradQuery));
  report.checks.push_back(check("dK", data.gradKey, exact.gradKey,
                                naive.gradKey, p.kvHeads, p.keyLen, p.headDim,
                                floors.gradKey));
  report.checks.push_back(check("dV", data.gradValue, exact.gradValue,
                                naive.gradValue, p.kvHeads, p.keyLen,
                                p.valueDim));
  return report;
}

std::vector<int64_t> fa::sampleRows(const ref::Problem &p, int64_t blockM,
                                    int64_t blockN, size_t count,
                                    uint64_t seed) {
  std::mt19937_64 gen(seed);
  int64_t heads = p.batch * p.queryHeads;
  std::uniform_int_distribution<int64_t> anyHead(0, heads - 1);
  std::set<int64_t> rows;
  auto add = [&](int64_t i) {
    if (i >= 0 && i < p.queryLen)
      rows.insert(anyHead(gen) * p.queryLen + i);
  };
  // Block boundaries: first and last row of each Q block, and the last row.
  for (int64_t q0 = 0; q0 < p.queryLen; q0 += blockM) {
    add(q0);
    add(std::min(q0 + blockM, p.queryLen) - 1);
  }
  add(p.queryLen - 1);
  // Rows whose last visible key (bottom-right diagonal) ends a KV block, or
  // sits just inside one.
  int64_t shift = p.keyLen - p.queryLen;
  for (int64_t k0 = 0; k0 < p.keyLen; k0 += blockN) {
    add(k0 - shift);
    add(k0 + blockN - 1 - shift);
  }
  std::uniform_int_distribution<int64_t> anyRow(0, heads * p.queryLen - 1);
  size_t total = static_cast<size_t>(heads * p.queryLen);
  while (rows.size() < std::min(count, total))
    rows.insert(anyRow(gen));
  return std::vector<int64_t>(rows.begin(), rows.end());
}
