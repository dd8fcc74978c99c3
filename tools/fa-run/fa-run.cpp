//===- fa-run.cpp - run and verify fa-mlir attention ----------------------===//
//
// Part of fa-mlir.
//
// fa-run --device cpu --spec "d=72,dv=72,dtype=bf16,mask=causal,softcap=0"
//        --b 2 --hq 6 --hkv 2 --m 113 --n 203 --seed 7 --verify [--bwd]
//        [--dump DIR]
//
// Fresh random normal inputs (rounded to the dtype), outputs poisoned with
// NaN before every launch, every element checked against the float64
// reference under DESIGN.md's tolerance policy.
//
// Exit codes: 0 pass, 1 numerical mismatch, 2 bad input, 77 no GPU.
//
//===----------------------------------------------------------------------===//

#include "fa/runtime/Npy.h"
#include "fa/runtime/Numerics.h"
#include "fa/runtime/Spec.h"
#include "fa/runtime/Verify.h"

#ifdef FA_ENABLE_COMPILER
#include "CpuBackend.h"
#endif

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <sys/stat.h>

using namespace fa;
namespace cl = llvm::cl;

namespace {

enum ExitCode { kPass = 0, kMismatch = 1, kBadInput = 2, kNoGpu = 77 };

cl::opt<std::string> deviceName("device", cl::desc("cpu or cuda"),
                                cl::init("cpu"));
cl::opt<std::string> specText(
    "spec", cl::desc("d=..,dv=..,dtype=f16|bf16|f8e4m3fn,mask=none|causal|"
                     "causal_top_left|window(L,R),softcap=..,scale=..,"
                     "block_m=..,block_n=.."));
cl::opt<int64_t> batch("b", cl::desc("batch B"), cl::init(1));
cl::opt<int64_t> queryHeads("hq", cl::desc("query heads Hq"), cl::init(1));
cl::opt<int64_t> kvHeads("hkv", cl::desc("key/value heads Hkv"), cl::init(1));
cl::opt<int64_t> queryLen("m", cl::desc("query length M"), cl::init(128));
cl::opt<int64_t> keyLen("n", cl::desc("key length N"), cl::init(128));
cl::opt<uint64_t> seed("seed", cl::desc("random seed of the inputs"),
                       cl::init(0));
cl::opt<bool> verify("verify", cl::desc("check against the float64 reference"));
cl::opt<bool> withBackward("bwd", cl::desc("also run and check the backward"));
cl::opt<std::string> dumpDir("dump", cl::desc("write inputs/outputs as .npy"));
cl::opt<std::string> negativeControl(
    "negative-control",
    cl::desc("build a deliberately broken kernel that --verify must catch: "
             "none, no-rescale (online softmax without the rescale), "
             "no-row-dot (backward without D)"),
    cl::init("none"));

/// One tensor in the dtype's storage and as the exact doubles it holds.
struct HostTensor {
  std::vector<int64_t> shape;
  std::vector<uint16_t> bits; // f16/bf16 storage
  std::vector<double> values;

  size_t count() const {
    size_t n = 1;
    for (int64_t d : shape)
      n *= d;
    return n;
  }
};

uint16_t toBits(ElementType type, double value) {
  return type == ElementType::F16 ? toF16Bits(static_cast<float>(value))
                                  : toBF16Bits(static_cast<float>(value));
}

double fromBits(ElementType type, uint16_t bits) {
  return type == ElementType::F16 ? fromF16Bits(bits) : fromBF16Bits(bits);
}

HostTensor randomTensor(ElementType type, std::vector<int64_t> shape,
                        std::mt19937_64 &gen) {
  HostTensor t{std::move(shape), {}, {}};
  std::normal_distribution<double> normal(0.0, 1.0);
  t.bits.resize(t.count());
  t.values.resize(t.count());
  for (size_t i = 0; i < t.count(); ++i) {
    t.bits[i] = toBits(type, normal(gen));
    t.values[i] = fromBits(type, t.bits[i]);
  }
  return t;
}

/// An output buffer poisoned with NaN, so an element never written fails.
HostTensor poisoned(ElementType type, std::vector<int64_t> shape) {
  HostTensor t{std::move(shape), {}, {}};
  t.bits.assign(t.count(), type == ElementType::F16 ? 0x7E00 : 0x7FC0);
  return t;
}

void readBack(ElementType type, HostTensor &t) {
  t.values.resize(t.count());
  for (size_t i = 0; i < t.count(); ++i)
    t.values[i] = fromBits(type, t.bits[i]);
}

int badInput(const std::string &message) {
  llvm::errs() << "fa-run: " << message << "\n";
  return kBadInput;
}

bool dump(const std::string &dir, const std::string &name,
          const std::vector<int64_t> &shape, const std::vector<double> &values) {
  std::string error;
  if (!writeNpyF32(dir + "/" + name + ".npy", shape, values, error)) {
    llvm::errs() << "fa-run: " << error << "\n";
    return false;
  }
  return true;
}

} // namespace

int main(int argc, char **argv) {
  std::string parseErrors;
  llvm::raw_string_ostream errs(parseErrors);
  if (!cl::ParseCommandLineOptions(argc, argv, "fa-run: run and verify "
                                               "fa-mlir attention kernels\n",
                                   &errs))
    return badInput(llvm::StringRef(parseErrors).trim().str());

  if (specText.empty())
    return badInput("--spec is required, e.g. --spec \"d=64,dtype=bf16,mask=causal\"");
  AttentionSpec spec;
  std::string error;
  if (!parseSpec(specText, spec, error))
    return badInput(error);
  ProblemSize size{batch, queryHeads, kvHeads, queryLen, keyLen};
  if (!validateProblem(spec, size, error))
    return badInput(error);
  NegativeControl control = NegativeControl::None;
  if (negativeControl == "no-rescale")
    control = NegativeControl::NoRescale;
  else if (negativeControl == "no-row-dot")
    control = NegativeControl::NoRowDot;
  else if (negativeControl != "none")
    return badInput("--negative-control must be none, no-rescale or no-row-dot");

  if (deviceName == "cuda")
    return badInput("--device cuda: this fa-run has no CUDA backend yet "
                    "(the GPU runtime lands with the sm_80 issue)");
  if (deviceName != "cpu")
    return badInput("--device must be cpu or cuda, not '" + deviceName + "'");
  if (spec.dtype == ElementType::F8E4M3FN)
    return badInput("dtype f8e4m3fn runs on --device cuda only");

#ifndef FA_ENABLE_COMPILER
  return badInput("--device cpu needs the compiler (built with "
                  "FA_ENABLE_COMPILER=OFF)");
#else
  bool rejected = false;
  std::unique_ptr<CpuBackend> backend = CpuBackend::create(
      spec, size, withBackward, control, error, rejected);
  if (!backend) {
    llvm::errs() << "fa-run: " << llvm::StringRef(error).trim() << "\n";
    return rejected ? kBadInput : kMismatch;
  }

  ElementType type = spec.dtype;
  std::mt19937_64 gen(seed);
  int64_t B = size.batch, Hq = size.queryHeads, Hkv = size.kvHeads,
          M = size.queryLen, N = size.keyLen, D = spec.headDim,
          Dv = spec.valueDim;
  HostTensor q = randomTensor(type, {B, Hq, M, D}, gen);
  HostTensor k = randomTensor(type, {B, Hkv, N, D}, gen);
  HostTensor v = randomTensor(type, {B, Hkv, N, Dv}, gen);
  HostTensor o = poisoned(type, {B, Hq, M, Dv});
  std::vector<float> lse(B * Hq * M, std::numeric_limits<float>::quiet_NaN());

  backend->forward(q.bits.data(), k.bits.data(), v.bits.data(), o.bits.data(),
                   lse.data());
  readBack(type, o);
  std::vector<double> lseValues(lse.begin(), lse.end());

  llvm::outs() << "fa-run: device=cpu spec=" << specText << " b=" << B
               << " hq=" << Hq << " hkv=" << Hkv << " m=" << M << " n=" << N
               << " seed=" << seed
               << (control != NegativeControl::None
                       ? " negative-control=" + negativeControl
                       : std::string())
               << "\n";
  llvm::outs() << "  compile: " << llvm::format("%.3f", backend->compileSeconds())
               << " s\n";

  ref::Problem problem = makeProblem(spec, size);
  bool pass = true;
  if (verify) {
    ForwardData data{q.values, k.values, v.values, o.values, lseValues};
    VerifyReport report = verifyForward(type, problem, data);
    llvm::outs() << "forward:\n" << report.format() << "\n";
    pass &= report.pass();
  }

  HostTensor gradOut, dq, dk, dv;
  if (withBackward) {
    gradOut = randomTensor(type, {B, Hq, M, Dv}, gen);
    dq = poisoned(type, {B, Hq, M, D});
    dk = poisoned(type, {B, Hkv, N, D});
    dv = poisoned(type, {B, Hkv, N, Dv});
    backend->backward(q.bits.data(), k.bits.data(), v.bits.data(),
                      o.bits.data(), gradOut.bits.data(), lse.data(),
                      dq.bits.data(), dk.bits.data(), dv.bits.data());
    readBack(type, dq);
    readBack(type, dk);
    readBack(type, dv);
    if (verify) {
      BackwardData data{q.values,  k.values,  v.values, gradOut.values,
                        dq.values, dk.values, dv.values};
      VerifyReport report = verifyBackward(type, problem, data);
      llvm::outs() << "backward:\n" << report.format() << "\n";
      pass &= report.pass();
    }
  }

  if (!dumpDir.empty()) {
    ::mkdir(dumpDir.c_str(), 0755);
    bool ok = dump(dumpDir, "q", q.shape, q.values) &&
              dump(dumpDir, "k", k.shape, k.values) &&
              dump(dumpDir, "v", v.shape, v.values) &&
              dump(dumpDir, "o", o.shape, o.values) &&
              dump(dumpDir, "lse", {B, Hq, M}, lseValues);
    if (withBackward)
      ok = ok && dump(dumpDir, "do", gradOut.shape, gradOut.values) &&
           dump(dumpDir, "dq", dq.shape, dq.values) &&
           dump(dumpDir, "dk", dk.shape, dk.values) &&
           dump(dumpDir, "dv", dv.shape, dv.values);
    if (!ok)
      return kBadInput;
    llvm::outs() << "  dumped to " << dumpDir << "\n";
  }
  if (!verify)
    return kPass;
  llvm::outs() << (pass ? "PASS" : "FAIL") << "\n";
  return pass ? kPass : kMismatch;
#endif
}
