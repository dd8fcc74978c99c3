//===- CpuRun.cpp - fa-run --device cpu -----------------------------------===//
//
// Part of fa-mlir.
//
// Compiles the spec through fa-tile, fa-fuse-online-softmax,
// fa-recompute-backward and fa-to-cpu (CpuBackend), runs it on fresh random
// inputs with NaN-poisoned outputs, and verifies O, LSE (and dQ, dK, dV)
// against the float64 reference. Only in builds with the compiler.
//
//===----------------------------------------------------------------------===//

#include "CpuBackend.h"
#include "FaRun.h"

#include "fa/runtime/Npy.h"
#include "fa/runtime/Verify.h"

#include <cstdio>
#include <iostream>
#include <limits>
#include <random>
#include <sys/stat.h>

using namespace fa;

namespace {

int badInput(const std::string &message) {
  std::cerr << "fa-run: " << message << "\n";
  return kBadInput;
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

int fa::runCpu(const Options &options) {
  std::string error;
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
  bool rejected = false;
  std::unique_ptr<CpuBackend> backend = CpuBackend::create(
      spec, size, options.backward, control, error, rejected);
  if (!backend) {
    std::cerr << "fa-run: " << error << "\n";
    return rejected ? kBadInput : kMismatch;
  }

  ElementType type = spec.dtype;
  std::mt19937_64 gen(options.seed);
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

  std::cout << "fa-run: device=cpu spec=" << options.spec << " b=" << B
               << " hq=" << Hq << " hkv=" << Hkv << " m=" << M << " n=" << N
               << " seed=" << options.seed
               << (control != NegativeControl::None
                       ? " negative-control=" + options.negativeControl
                       : std::string())
               << "\n";
  char compileLine[64];
  std::snprintf(compileLine, sizeof(compileLine), "  compile: %.3f s\n",
                backend->compileSeconds());
  std::cout << compileLine;

  ref::Problem problem = makeProblem(spec, size);
  bool pass = true;
  if (options.verify) {
    ForwardData data{q.values, k.values, v.values, o.values, lseValues};
    VerifyReport report = verifyForward(type, problem, data);
    std::cout << "forward:\n" << report.format() << "\n";
    pass &= report.pass();
  }

  HostTensor gradOut, dq, dk, dv;
  if (options.backward) {
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
    if (options.verify) {
      BackwardData data{q.values,  k.values,  v.values, gradOut.values,
                        dq.values, dk.values, dv.values};
      VerifyReport report = verifyBackward(type, problem, data);
      std::cout << "backward:\n" << report.format() << "\n";
      pass &= report.pass();
    }
  }

  if (!options.dump.empty()) {
    ::mkdir(options.dump.c_str(), 0755);
    bool ok = dump(options.dump, "q", q.shape, q.values) &&
              dump(options.dump, "k", k.shape, k.values) &&
              dump(options.dump, "v", v.shape, v.values) &&
              dump(options.dump, "o", o.shape, o.values) &&
              dump(options.dump, "lse", {B, Hq, M}, lseValues);
    if (options.backward)
      ok = ok && dump(options.dump, "do", gradOut.shape, gradOut.values) &&
           dump(options.dump, "dq", dq.shape, dq.values) &&
           dump(options.dump, "dk", dk.shape, dk.values) &&
           dump(options.dump, "dv", dv.shape, dv.values);
    if (!ok)
      return kBadInput;
    std::cout << "  dumped to " << options.dump << "\n";
  }
  if (!options.verify)
    return kPass;
  std::cout << (pass ? "PASS" : "FAIL") << "\n";
  return pass ? kPass : kMismatch;
}
