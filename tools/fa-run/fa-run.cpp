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

#include "FaRun.h"

#include "fa/runtime/Npy.h"
#include "fa/runtime/Numerics.h"
#include "fa/runtime/Spec.h"
#include "fa/runtime/Verify.h"

#ifdef FA_ENABLE_COMPILER
#include "CpuBackend.h"
#endif

#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <limits>
#include <map>
#include <random>
#include <sys/stat.h>

using namespace fa;

namespace {

const char *kUsage =
    "usage: fa-run --device cpu|cuda (--spec SPEC | --kernel NAME.json)\n"
    "              [--b B] [--hq HQ] [--hkv HKV] [--m M] [--n N] [--seed S]\n"
    "              [--verify] [--bwd] [--bench] [--iters K] [--layout bhsd|bshd]\n"
    "              [--dump DIR] [--negative-control none|no-rescale|no-row-dot]\n"
    "SPEC: d=..,dv=..,dtype=f16|bf16|f8e4m3fn,mask=none|causal|causal_top_left|\n"
    "      window(L,R),softcap=..,scale=..,block_m=..,block_n=..\n"
    "exit: 0 pass, 1 mismatch, 2 bad input, 77 no GPU\n";

bool parseInt64(const std::string &text, int64_t &out) {
  errno = 0;
  char *end = nullptr;
  long long v = std::strtoll(text.c_str(), &end, 10);
  if (text.empty() || errno || *end)
    return false;
  out = v;
  return true;
}

/// Parses argv; on error returns false with a one-line reason.
bool parseOptions(int argc, char **argv, Options &o, std::string &error) {
  std::map<std::string, std::string *> strings = {
      {"device", &o.device}, {"spec", &o.spec}, {"kernel", &o.kernel},
      {"dump", &o.dump}, {"negative-control", &o.negativeControl},
      {"layout", &o.layout}};
  std::map<std::string, int64_t *> ints = {
      {"b", &o.batch}, {"hq", &o.queryHeads}, {"hkv", &o.kvHeads},
      {"m", &o.queryLen}, {"n", &o.keyLen}, {"iters", &o.benchIters}};
  std::map<std::string, bool *> flags = {
      {"verify", &o.verify}, {"bwd", &o.backward}, {"bench", &o.bench}};
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "-h" || arg == "--help") {
      std::cout << kUsage;
      std::exit(0);
    }
    if (arg.rfind("--", 0) != 0) {
      error = "unexpected argument '" + arg + "'";
      return false;
    }
    std::string key = arg.substr(2), value;
    bool inlineValue = false;
    if (size_t eq = key.find('='); eq != std::string::npos) {
      value = key.substr(eq + 1);
      key = key.substr(0, eq);
      inlineValue = true;
    }
    if (flags.count(key)) {
      *flags[key] = true;
      continue;
    }
    bool known = strings.count(key) || ints.count(key) || key == "seed";
    if (!known) {
      error = "unknown option '--" + key + "'";
      return false;
    }
    if (!inlineValue) {
      if (i + 1 >= argc) {
        error = "option '--" + key + "' needs a value";
        return false;
      }
      value = argv[++i];
    }
    if (strings.count(key)) {
      *strings[key] = value;
    } else if (key == "seed") {
      int64_t seed;
      if (!parseInt64(value, seed) || seed < 0) {
        error = "--seed wants a non-negative integer, not '" + value + "'";
        return false;
      }
      o.seed = static_cast<uint64_t>(seed);
    } else if (!parseInt64(value, *ints[key])) {
      error = "--" + key + " wants an integer, not '" + value + "'";
      return false;
    }
  }
  return true;
}

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

HostTensor randomTensor(ElementType type, std::vector<int64_t> shape,
                        std::mt19937_64 &gen) {
  HostTensor t{std::move(shape), {}, {}};
  std::normal_distribution<double> normal(0.0, 1.0);
  t.bits.resize(t.count());
  t.values.resize(t.count());
  for (size_t i = 0; i < t.count(); ++i) {
    t.bits[i] = storageBits(type, normal(gen));
    t.values[i] = storageValue(type, t.bits[i]);
  }
  return t;
}

/// An output buffer poisoned with NaN, so an element never written fails.
HostTensor poisoned(ElementType type, std::vector<int64_t> shape) {
  HostTensor t{std::move(shape), {}, {}};
  t.bits.assign(t.count(), poisonBits(type));
  return t;
}

void readBack(ElementType type, HostTensor &t) {
  t.values.resize(t.count());
  for (size_t i = 0; i < t.count(); ++i)
    t.values[i] = storageValue(type, t.bits[i]);
}

int badInput(const std::string &message) {
  std::cerr << "fa-run: " << message << "\n";
  return kBadInput;
}

bool dump(const std::string &dir, const std::string &name,
          const std::vector<int64_t> &shape, const std::vector<double> &values) {
  std::string error;
  if (!writeNpyF32(dir + "/" + name + ".npy", shape, values, error)) {
    std::cerr << "fa-run: " << error << "\n";
    return false;
  }
  return true;
}

} // namespace

int main(int argc, char **argv) {
  Options options;
  std::string error;
  if (!parseOptions(argc, argv, options, error))
    return badInput(error);
  if (options.device == "cuda") {
#ifdef FA_ENABLE_COMPILER
    // --spec without --kernel: compile it here, as fa-compile would.
    if (options.kernel.empty() && !options.spec.empty()) {
      bool rejected = false;
      if (!compileSpecKernel(options.spec, options.kernel, error, rejected)) {
        std::cerr << "fa-run: " << error << "\n";
        return rejected ? kBadInput : kMismatch;
      }
      std::cout << "fa-run: compiled --spec to " << options.kernel << "\n";
    }
#endif
    return runCuda(options);
  }
  if (options.device != "cpu")
    return badInput("--device must be cpu or cuda, not '" + options.device + "'");
  if (options.spec.empty())
    return badInput("--spec is required, e.g. --spec \"d=64,dtype=bf16,mask=causal\"");
  AttentionSpec spec;
  if (!parseSpec(options.spec, spec, error))
    return badInput(error);
  ProblemSize size{options.batch, options.queryHeads, options.kvHeads,
                   options.queryLen, options.keyLen};
  if (!validateProblem(spec, size, error))
    return badInput(error);
  NegativeControl control = NegativeControl::None;
  if (options.negativeControl == "no-rescale")
    control = NegativeControl::NoRescale;
  else if (options.negativeControl == "no-row-dot")
    control = NegativeControl::NoRowDot;
  else if (options.negativeControl != "none")
    return badInput("--negative-control must be none, no-rescale or no-row-dot");
  if (spec.dtype == ElementType::F8E4M3FN)
    return badInput("dtype f8e4m3fn runs on --device cuda only");
  const std::string &specText = options.spec;
  const std::string &negativeControl = options.negativeControl;
  bool withBackward = options.backward, verify = options.verify;
  const std::string &dumpDir = options.dump;
  uint64_t seed = options.seed;

#ifndef FA_ENABLE_COMPILER
  return badInput("--device cpu needs the compiler (built with "
                  "FA_ENABLE_COMPILER=OFF)");
#else
  bool rejected = false;
  std::unique_ptr<CpuBackend> backend = CpuBackend::create(
      spec, size, withBackward, control, error, rejected);
  if (!backend) {
    std::cerr << "fa-run: " << error << "\n";
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

  std::cout << "fa-run: device=cpu spec=" << specText << " b=" << B
               << " hq=" << Hq << " hkv=" << Hkv << " m=" << M << " n=" << N
               << " seed=" << seed
               << (control != NegativeControl::None
                       ? " negative-control=" + negativeControl
                       : std::string())
               << "\n";
  char compileLine[64];
  std::snprintf(compileLine, sizeof(compileLine), "  compile: %.3f s\n",
                backend->compileSeconds());
  std::cout << compileLine;

  ref::Problem problem = makeProblem(spec, size);
  bool pass = true;
  if (verify) {
    ForwardData data{q.values, k.values, v.values, o.values, lseValues};
    VerifyReport report = verifyForward(type, problem, data);
    std::cout << "forward:\n" << report.format() << "\n";
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
      std::cout << "backward:\n" << report.format() << "\n";
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
    std::cout << "  dumped to " << dumpDir << "\n";
  }
  if (!verify)
    return kPass;
  std::cout << (pass ? "PASS" : "FAIL") << "\n";
  return pass ? kPass : kMismatch;
#endif
}
