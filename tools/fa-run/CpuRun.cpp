//===- CpuRun.cpp - fa-run --device cpu -----------------------------------===//
//
// Part of fa-mlir.
//
// Compiles the spec through fa-tile, fa-fuse-online-softmax,
// fa-recompute-backward and fa-to-cpu (CpuBackend), runs it on fresh random
// inputs with NaN-poisoned outputs, and verifies O, LSE (and dQ, dK, dV)
// against the float64 reference. With ALiBi in the spec, fresh random slopes
// go to both the kernel and the reference. Only in builds with the compiler.
//
//===----------------------------------------------------------------------===//

#include "CpuBackend.h"
#include "FaRun.h"
#include "Fp8Inputs.h"
#include "RandomDraws.h"

#include "fa/runtime/Npy.h"
#include "fa/runtime/Verify.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <limits>
#include <random>
#include <sys/stat.h>

using namespace fa;

namespace {

int badInput(const std::string &message) {
  printError(message);
  return kBadInput;
}

/// One tensor in the dtype's storage and as the exact doubles it holds
/// (for f8E4M3FN: the stored values times the tensor's descale).
struct HostTensor {
  std::vector<int64_t> shape;
  std::vector<uint16_t> bits; // f16/bf16 storage
  std::vector<uint8_t> bytes; // f8E4M3FN storage
  std::vector<double> values;

  void *data() { return bytes.empty() ? static_cast<void *>(bits.data()) : bytes.data(); }

  size_t count() const {
    size_t n = 1;
    for (int64_t d : shape)
      n *= d;
    return n;
  }
};

HostTensor randomTensor(ElementType type, std::vector<int64_t> shape,
                        std::mt19937_64 &gen) {
  HostTensor t{std::move(shape), {}, {}, {}};
  drawRounded(
      type, t.count(), gen, [](size_t i) { return i; }, t.bits, t.values);
  return t;
}

/// One of drawQuantisedInputs' tensors (Fp8Inputs.h) as a HostTensor.
HostTensor hostTensor(QuantisedTensor &&t) {
  return {std::move(t.shape), {}, std::move(t.bytes), std::move(t.values)};
}

/// An output buffer poisoned with NaN, so an element never written fails.
HostTensor poisoned(ElementType type, std::vector<int64_t> shape) {
  HostTensor t{std::move(shape), {}, {}, {}};
  t.bits.assign(t.count(), poisonBits(type));
  return t;
}

void readBack(ElementType type, HostTensor &t) {
  t.values.resize(t.count());
  for (size_t i = 0; i < t.count(); ++i)
    t.values[i] = storageValue(type, t.bits[i]);
}

bool dump(const std::string &dir, const std::string &name,
          const std::vector<int64_t> &shape, const std::vector<double> &values) {
  std::string error;
  if (!writeNpyF32(dir + "/" + name + ".npy", shape, values, error)) {
    printError(error);
    return false;
  }
  return true;
}

bool parseNegativeControl(const std::string &name, NegativeControl &control) {
  for (auto [text, kind] :
       {std::pair{"none", NegativeControl::None},
        std::pair{"no-rescale", NegativeControl::NoRescale},
        std::pair{"no-row-dot", NegativeControl::NoRowDot},
        std::pair{"no-alibi", NegativeControl::NoAlibi},
        std::pair{"no-descale", NegativeControl::NoDescale},
        std::pair{"no-regions", NegativeControl::NoRegions},
        std::pair{"no-score-mod-grad", NegativeControl::NoScoreModGrad}})
    if (name == text) {
      control = kind;
      return true;
    }
  return false;
}

/// The tensors of one run, for --dump.
struct RunTensors {
  HostTensor q, k, v, o, gradOut, dq, dk, dv;
  std::vector<int64_t> lseShape;
  std::vector<double> lse;
  std::vector<int64_t> slopesShape; // empty without ALiBi
  std::vector<double> slopes;
};

/// Fresh Q, K, V for `spec`: in its 16-bit type, or quantised to e4m3
/// with their descales (Q's, K's, V's, each one value or [B, Hkv]), which
/// it returns.
std::vector<float> drawInputs(const AttentionSpec &spec, const ProblemSize &size,
                              std::mt19937_64 &gen, RunTensors &t) {
  int64_t B = size.batch, Hq = size.queryHeads, Hkv = size.kvHeads,
          M = size.queryLen, N = size.keyLen, D = spec.headDim,
          Dv = spec.valueDim;
  if (spec.dtype == ElementType::F8E4M3FN) {
    QuantisedInputs in = drawQuantisedInputs(spec, size, gen);
    t.q = hostTensor(std::move(in.q));
    t.k = hostTensor(std::move(in.k));
    t.v = hostTensor(std::move(in.v));
    return std::move(in.descales);
  }
  t.q = randomTensor(spec.dtype, {B, Hq, M, D}, gen);
  t.k = randomTensor(spec.dtype, {B, Hkv, N, D}, gen);
  t.v = randomTensor(spec.dtype, {B, Hkv, N, Dv}, gen);
  return {};
}

/// Writes every tensor of the run to `dir` as .npy.
bool dumpAll(const std::string &dir, const RunTensors &t, bool backward) {
  ::mkdir(dir.c_str(), 0755);
  bool ok = dump(dir, "q", t.q.shape, t.q.values) &&
            dump(dir, "k", t.k.shape, t.k.values) &&
            dump(dir, "v", t.v.shape, t.v.values) &&
            dump(dir, "o", t.o.shape, t.o.values) &&
            dump(dir, "lse", t.lseShape, t.lse);
  if (!t.slopes.empty())
    ok = ok && dump(dir, "slopes", t.slopesShape, t.slopes);
  if (backward)
    ok = ok && dump(dir, "do", t.gradOut.shape, t.gradOut.values) &&
         dump(dir, "dq", t.dq.shape, t.dq.values) &&
         dump(dir, "dk", t.dk.shape, t.dk.values) &&
         dump(dir, "dv", t.dv.shape, t.dv.values);
  return ok;
}

/// What a run is of, once its options are checked.
struct CpuRequest {
  AttentionSpec spec;
  ProblemSize size;
  NegativeControl control = NegativeControl::None;
};

/// The options and the spec, checked before anything is compiled: kPass
/// with `request` filled, or kBadInput with the reason on stderr.
int checkCpuRequest(const Options &options, CpuRequest &request) {
  std::string error;
  if (options.spec.empty())
    return badInput("--spec is required, e.g. --spec \"d=64,dtype=bf16,mask=causal\"");
  // Options only the CUDA path honours are refused, not ignored.
  for (const char *cudaOnly :
       {"kernel", "bwd-kernel", "layout", "bench", "iters"})
    if (options.given.count(cudaOnly))
      return badInput(std::string("--") + cudaOnly +
                      " is a --device cuda option");
  AttentionSpec &spec = request.spec;
  if (!parseSpec(options.spec, spec, error))
    return badInput(error);
  request.size = {options.batch, options.queryHeads, options.kvHeads,
                  options.queryLen, options.keyLen};
  if (!validateProblem(spec, request.size, error) ||
      !checkHostMemory(spec, request.size, options.backward, error))
    return badInput(error);
  NegativeControl &control = request.control;
  if (!parseNegativeControl(options.negativeControl, control))
    return badInput("--negative-control must be none, no-rescale, no-row-dot, "
                    "no-alibi, no-descale, no-regions or no-score-mod-grad");
  // A control that changes nothing this run checks would report PASS for
  // a build that was never broken.
  if (control == NegativeControl::NoRowDot && !options.backward)
    return badInput("--negative-control no-row-dot breaks the backward "
                    "(D = rowsum(dO * O)): give --bwd");
  if (control == NegativeControl::NoAlibi && spec.alibi == AlibiKind::None)
    return badInput("--negative-control no-alibi needs a spec with alibi=head "
                    "or alibi=batch_head");
  bool fp8 = spec.dtype == ElementType::F8E4M3FN;
  if (control == NegativeControl::NoDescale && !fp8)
    return badInput("--negative-control no-descale needs dtype=f8e4m3fn");
  // The spec contract's word on which specs have a backward (fp8 has none).
  if (options.backward && !checkBackwardSpec(spec, error))
    return badInput(error);
  if (fp8 && !options.input.empty())
    return badInput("dtype f8e4m3fn is a forward of the spec's module: no "
                    "--input");
  if (control == NegativeControl::NoRegions && options.input.empty())
    return badInput("--negative-control no-regions needs an --input whose "
                    "fa.attention has score_mod or mask_mod regions");
  if (control == NegativeControl::NoScoreModGrad &&
      (options.input.empty() || !options.backward))
    return badInput("--negative-control no-score-mod-grad breaks the "
                    "backward of an --input's score_mod: give --input and "
                    "--bwd");
  if (!options.input.empty() &&
      ((control != NegativeControl::None &&
        control != NegativeControl::NoRegions &&
        control != NegativeControl::NoScoreModGrad) ||
       spec.alibi != AlibiKind::None))
    return badInput("--input runs without ALiBi: no alibi, and no "
                    "--negative-control but no-regions or no-score-mod-grad");
  return kPass;
}

/// The f32 buffers the kernel reads and writes beside `RunTensors`: the
/// LSE (kept for the backward) and the ALiBi slopes.
struct KernelBuffers {
  std::vector<float> lse, slopes;
};

/// The forward on fresh inputs (drawn from `gen`) into `t` and `buffers`,
/// then the run's header and compile time on stdout.
void runForward(CpuBackend &backend, const Options &options,
                const CpuRequest &request, std::mt19937_64 &gen,
                RunTensors &t, KernelBuffers &buffers) {
  const AttentionSpec &spec = request.spec;
  const ProblemSize &size = request.size;
  // f8E4M3FN's output is bf16 (fa.attention's rule).
  ElementType outType = outputElementType(spec.dtype);
  int64_t B = size.batch, Hq = size.queryHeads, Hkv = size.kvHeads,
          M = size.queryLen, N = size.keyLen, Dv = spec.valueDim;
  std::vector<float> descales = drawInputs(spec, size, gen, t);
  bool perHead = spec.descale == DescaleKind::Head;
  t.o = poisoned(outType, {B, Hq, M, Dv});
  t.slopesShape = alibiShape(spec, size);
  t.slopes = randomAlibiSlopes(spec, size, options.seed + kAlibiSeedOffset);
  buffers.slopes.assign(t.slopes.begin(), t.slopes.end());
  buffers.lse.assign(B * Hq * M, std::numeric_limits<float>::quiet_NaN());

  // The broken build's V descales are 1; the reference keeps the true ones.
  std::vector<float> given =
      kernelDescales(descales, request.control == NegativeControl::NoDescale);
  backend.forward(t.q.data(), t.k.data(), t.v.data(), buffers.slopes.data(),
                  t.o.bits.data(), buffers.lse.data(), given.data());
  readBack(outType, t.o);
  t.lseShape = {B, Hq, M};
  t.lse.assign(buffers.lse.begin(), buffers.lse.end());

  std::cout << "fa-run: device=cpu spec=" << options.spec << " b=" << B
               << " hq=" << Hq << " hkv=" << Hkv << " m=" << M << " n=" << N
               << " seed=" << options.seed;
  // The first of each tensor's descales (per head: of head 0, batch 0).
  std::cout << descaleSummary(descales, perHead);
  if (request.control != NegativeControl::None)
    std::cout << " negative-control=" << options.negativeControl;
  std::cout << "\n";
  char compileLine[64];
  std::snprintf(compileLine, sizeof(compileLine), "  compile: %.3f s\n",
                backend.compileSeconds());
  std::cout << compileLine;
}

/// The backward on a fresh dO (drawn from `gen`) into `t`, checked against
/// the reference with --verify (the report on stdout): false on a mismatch.
bool runBackward(CpuBackend &backend, const Options &options,
                 const CpuRequest &request, const ref::Problem &problem,
                 std::mt19937_64 &gen, RunTensors &t, KernelBuffers &buffers) {
  ElementType type = request.spec.dtype;
  int64_t B = request.size.batch, Hq = request.size.queryHeads,
          Hkv = request.size.kvHeads, M = request.size.queryLen,
          N = request.size.keyLen, D = request.spec.headDim,
          Dv = request.spec.valueDim;
  t.gradOut = randomTensor(type, {B, Hq, M, Dv}, gen);
  t.dq = poisoned(type, {B, Hq, M, D});
  t.dk = poisoned(type, {B, Hkv, N, D});
  t.dv = poisoned(type, {B, Hkv, N, Dv});
  backend.backward(t.q.bits.data(), t.k.bits.data(), t.v.bits.data(),
                   t.o.bits.data(), t.gradOut.bits.data(), buffers.lse.data(),
                   buffers.slopes.data(), t.dq.bits.data(), t.dk.bits.data(),
                   t.dv.bits.data());
  readBack(type, t.dq);
  readBack(type, t.dk);
  readBack(type, t.dv);
  if (!options.verify)
    return true;
  BackwardData data{t.q.values,  t.k.values,  t.v.values, t.gradOut.values,
                    t.dq.values, t.dk.values, t.dv.values};
  VerifyReport report = verifyBackward(type, problem, data);
  std::cout << "backward:\n" << report.format() << "\n";
  return report.pass();
}

} // namespace

int fa::runCpu(const Options &options) {
  CpuRequest request;
  if (int refused = checkCpuRequest(options, request))
    return refused;
  std::string error;
  bool rejected = false;
  std::unique_ptr<CpuBackend> backend =
      CpuBackend::create(request.spec, request.size, options.backward,
                         request.control, error, rejected, options.input);
  if (!backend) {
    printError(error);
    return rejected ? kBadInput : kMismatch;
  }

  std::mt19937_64 gen(options.seed);
  RunTensors t;
  KernelBuffers buffers;
  backend->drawCaptures(options.seed + kCaptureSeedOffset);
  runForward(*backend, options, request, gen, t, buffers);
  ref::Problem problem = makeProblem(request.spec, request.size, t.slopes);
  backend->bindVariantRegions(problem);
  bool pass = true;
  if (options.verify) {
    // A raised --input computes O alone: its LSE (still NaN) is not checked.
    ForwardData data{t.q.values, t.k.values, t.v.values, t.o.values,
                     backend->computesLse() ? t.lse : std::vector<double>()};
    VerifyReport report = verifyForward(request.spec.dtype, problem, data);
    std::cout << "forward:\n" << report.format() << "\n";
    pass &= report.pass();
  }
  if (options.backward)
    pass &= runBackward(*backend, options, request, problem, gen, t, buffers);

  if (!options.dump.empty()) {
    if (!dumpAll(options.dump, t, options.backward))
      return kBadInput;
    std::cout << "  dumped to " << options.dump << "\n";
  }
  if (!options.verify)
    return kPass;
  std::cout << (pass ? "PASS" : "FAIL") << "\n";
  return pass ? kPass : kMismatch;
}
