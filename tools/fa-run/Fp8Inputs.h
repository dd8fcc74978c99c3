//===- Fp8Inputs.h - fa-run's f8E4M3FN inputs, for every device -*- C++ -*-===//
//
// Part of fa-mlir.
//
// How fa-run draws and scales the inputs of an f8e4m3fn run, in one place
// for --device cpu (CpuRun.cpp) and --device cuda (CudaRun.cpp): a seed
// gives the same e4m3 bytes, descales and reference values on both.
//
//===----------------------------------------------------------------------===//

#ifndef FA_TOOLS_FARUN_FP8INPUTS_H
#define FA_TOOLS_FARUN_FP8INPUTS_H

#include "fa/runtime/Spec.h"

#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace fa {

/// One f8E4M3FN tensor of shape [B, H, S, W], dense in that (logical)
/// order: its e4m3 bytes, and the exact doubles the reference reads (each
/// stored value times its descale).
struct QuantisedTensor {
  std::vector<int64_t> shape;
  std::vector<uint8_t> bytes;
  std::vector<double> values;
};

/// The inputs of an f8e4m3fn run: N(0, 1) values (per head, slices of 1x,
/// 2x and 3x the magnitude, so that a kernel reading the wrong descale is
/// caught) over descales that map each slice's largest magnitude to 448
/// (FlashAttention-3's scaling), stored rounded to e4m3. Drawn from `gen`
/// in the order Q, K, V.
struct QuantisedInputs {
  QuantisedTensor q, k, v;
  /// Q's, then K's, then V's descales (f32, as the kernel reads them):
  /// one each for descale=tensor, [B, Hkv] each for descale=head (query
  /// head h uses KV head h / (Hq / Hkv)'s).
  std::vector<float> descales;

  /// How many descales each tensor has (1, or B · Hkv).
  size_t perTensor() const { return descales.size() / 3; }
};

/// Q [B, Hq, M, D], K [B, Hkv, N, D] and V [B, Hkv, N, Dv] of an f8e4m3fn
/// `spec` at `size` (spec.descale picks one descale per tensor or [B, Hkv]).
QuantisedInputs drawQuantisedInputs(const AttentionSpec &spec,
                                    const ProblemSize &size,
                                    std::mt19937_64 &gen);

/// The descales a kernel is given: `descales`, or with `noDescale`
/// (--negative-control no-descale) V's replaced by 1, while the reference
/// keeps the true ones, so that the run must fail.
std::vector<float> kernelDescales(const std::vector<float> &descales,
                                  bool noDescale);

/// " descale=Q,K,V" as a run's header line shows the descales (per head:
/// " descale[0,0]=..." of batch 0, KV head 0).
std::string descaleSummary(const std::vector<float> &descales, bool perHead);

} // namespace fa

#endif // FA_TOOLS_FARUN_FP8INPUTS_H
