//===- CudaRun.cpp - fa-run --device cuda ---------------------------------===//
//
// Part of fa-mlir.
//
// Loads a kernel fa-compile generated, runs it on fresh random inputs in the
// chosen memory layout with NaN-poisoned outputs, verifies against the
// float64 reference (every row for small problems, at least 512 sampled
// rows across block boundaries for large ones), and times it with CUDA
// events (--bench). Needs no MLIR: it builds on the GPU machine.
//
//===----------------------------------------------------------------------===//

#include "FaRun.h"

#include "fa/runtime/Kernel.h"
#include "fa/runtime/Npy.h"
#include "fa/runtime/Verify.h"

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <limits>
#include <random>

using namespace fa;
using namespace fa::cuda;

namespace {

/// A tensor's logical [B, H, S, W] shape and its physical strides.
struct Layout {
  int64_t batch, heads, seq, width;
  int64_t stride[3]; // batch, head, sequence

  static Layout make(int64_t b, int64_t h, int64_t s, int64_t w,
                     bool sequenceMajor) {
    Layout l{b, h, s, w, {}};
    if (sequenceMajor) { // [B, S, H, W]
      l.stride[0] = s * h * w;
      l.stride[1] = w;
      l.stride[2] = h * w;
    } else { // [B, H, S, W]
      l.stride[0] = h * s * w;
      l.stride[1] = s * w;
      l.stride[2] = w;
    }
    return l;
  }
  int64_t count() const { return batch * heads * seq * width; }
  int64_t physical(int64_t logical) const {
    int64_t e = logical % width, s = (logical / width) % seq,
            h = (logical / width / seq) % heads,
            b = logical / width / seq / heads;
    return b * stride[0] + h * stride[1] + s * stride[2] + e;
  }
};

/// Host copies: the logical values (as doubles) and the stored bits in
/// the physical layout.
struct HostData {
  std::vector<double> logical;
  std::vector<uint16_t> bits;
};

HostData randomData(const Layout &l, ElementType type, std::mt19937_64 &gen) {
  std::normal_distribution<double> normal(0.0, 1.0);
  HostData d;
  d.logical.resize(l.count());
  d.bits.resize(l.count());
  for (int64_t i = 0; i < l.count(); ++i) {
    uint16_t bits = storageBits(type, normal(gen));
    d.bits[l.physical(i)] = bits;
    d.logical[i] = storageValue(type, bits);
  }
  return d;
}

/// Device buffers; freed on scope exit.
struct DeviceBuffer {
  Driver *cu = nullptr;
  CUdeviceptr ptr = 0;
  size_t bytes = 0;
  ~DeviceBuffer() {
    if (ptr)
      cu->cuMemFree(ptr);
  }
};

bool allocate(Driver &cu, DeviceBuffer &buffer, size_t bytes,
              std::string &error) {
  buffer.cu = &cu;
  buffer.bytes = bytes;
  CUresult r = cu.cuMemAlloc(&buffer.ptr, std::max<size_t>(bytes, 16));
  if (r)
    error = cu.describe(r, "cuMemAlloc");
  return r == 0;
}

bool upload(Driver &cu, DeviceBuffer &buffer, const void *data,
            std::string &error) {
  CUresult r = cu.cuMemcpyHtoD(buffer.ptr, data, buffer.bytes);
  if (r)
    error = cu.describe(r, "cuMemcpyHtoD");
  return r == 0;
}

bool download(Driver &cu, void *data, const DeviceBuffer &buffer,
              std::string &error) {
  CUresult r = cu.cuMemcpyDtoH(data, buffer.ptr, buffer.bytes);
  if (r)
    error = cu.describe(r, "cuMemcpyDtoH");
  return r == 0;
}

int fail(const std::string &message, int code) {
  std::cerr << "fa-run: " << message << "\n";
  return code;
}

} // namespace

int fa::runCuda(const Options &o) {
  if (o.kernel.empty())
    return fail("--device cuda needs --kernel NAME.json (written by "
                "fa-compile, e.g. kernels_generated/), or --spec in a build "
                "with the compiler",
                kBadInput);
  if (o.negativeControl != "none")
    return fail("--negative-control is a CPU (compiler) option", kBadInput);
  if (o.backward)
    return fail("--bwd: there is no GPU backward kernel yet; use --device cpu",
                kBadInput);
  if (o.layout != "bhsd" && o.layout != "bshd")
    return fail("--layout must be bhsd ([B,H,S,D]) or bshd ([B,S,H,D])",
                kBadInput);
  Manifest manifest;
  std::string error;
  if (!Manifest::read(o.kernel, manifest, error))
    return fail(error, kBadInput);
  // A copy: --spec may add ALiBi, which the manifest does not record yet.
  AttentionSpec spec = manifest.spec;
  ProblemSize size{o.batch, o.queryHeads, o.kvHeads, o.queryLen, o.keyLen};
  if (!validateProblem(spec, size, error))
    return fail(error, kBadInput);
  if (!o.spec.empty()) {
    AttentionSpec given;
    if (!parseSpec(o.spec, given, error))
      return fail(error, kBadInput);
    if (given.headDim != spec.headDim || given.valueDim != spec.valueDim ||
        given.dtype != spec.dtype)
      return fail("--spec does not match the kernel's manifest (" +
                      manifest.kernelName + ")",
                  kBadInput);
    // One kernel serves both slope shapes ([Hq] or [B, Hq]: a stride).
    if (given.alibi != AlibiKind::None)
      spec.alibi = given.alibi;
  }
  bool takesSlopes = false;
  for (const auto &param : manifest.params)
    takesSlopes |= param.first == "alibi_slopes";
  if (takesSlopes != (spec.alibi != AlibiKind::None))
    return fail(std::string("--spec alibi=") + alibiName(spec.alibi) +
                    " does not match the kernel, which " +
                    (takesSlopes ? "takes" : "takes no") + " ALiBi slopes",
                kBadInput);
  bool noDevice = false;
  std::unique_ptr<Kernel> kernel = Kernel::load(o.kernel, error, noDevice);
  if (!kernel)
    return fail(error, noDevice ? kNoGpu : kMismatch);
  Driver &cu = kernel->driver();

  ElementType type = spec.dtype;
  bool sequenceMajor = o.layout == "bshd";
  int64_t B = size.batch, Hq = size.queryHeads, Hkv = size.kvHeads,
          M = size.queryLen, N = size.keyLen, D = spec.headDim,
          Dv = spec.valueDim;
  Layout qL = Layout::make(B, Hq, M, D, sequenceMajor);
  Layout kL = Layout::make(B, Hkv, N, D, sequenceMajor);
  Layout vL = Layout::make(B, Hkv, N, Dv, sequenceMajor);
  Layout oL = Layout::make(B, Hq, M, Dv, sequenceMajor);
  std::mt19937_64 gen(o.seed);
  HostData q = randomData(qL, type, gen), k = randomData(kL, type, gen),
           v = randomData(vL, type, gen);

  size_t eb = elementTypeSize(type);
  DeviceBuffer dq, dk, dv, dout, dlse;
  if (!allocate(cu, dq, qL.count() * eb, error) ||
      !allocate(cu, dk, kL.count() * eb, error) ||
      !allocate(cu, dv, vL.count() * eb, error) ||
      !allocate(cu, dout, oL.count() * eb, error) ||
      !allocate(cu, dlse, B * Hq * M * sizeof(float), error) ||
      !upload(cu, dq, q.bits.data(), error) ||
      !upload(cu, dk, k.bits.data(), error) ||
      !upload(cu, dv, v.bits.data(), error))
    return fail(error, kMismatch);

  // Poison: an output element the kernel never writes stays NaN and fails.
  std::vector<uint16_t> outBits(oL.count(), poisonBits(type));
  std::vector<float> lse(B * Hq * M, std::numeric_limits<float>::quiet_NaN());
  if (!upload(cu, dout, outBits.data(), error) ||
      !upload(cu, dlse, lse.data(), error))
    return fail(error, kMismatch);
  // ALiBi slopes, as fa-run --device cpu draws them for the same seed.
  std::vector<double> alibiSlopes =
      randomAlibiSlopes(spec, size, o.seed + kAlibiSeedOffset);
  std::vector<float> slopeBits(alibiSlopes.begin(), alibiSlopes.end());
  DeviceBuffer dslopes;
  if (!slopeBits.empty() &&
      (!allocate(cu, dslopes, slopeBits.size() * sizeof(float), error) ||
       !upload(cu, dslopes, slopeBits.data(), error)))
    return fail(error, kMismatch);

  ForwardArgs args;
  args.q = dq.ptr;
  args.k = dk.ptr;
  args.v = dv.ptr;
  args.o = dout.ptr;
  args.lse = dlse.ptr;
  args.batch = B;
  args.queryHeads = Hq;
  args.kvHeads = Hkv;
  args.queryLen = M;
  args.keyLen = N;
  std::copy(qL.stride, qL.stride + 3, args.qStride);
  std::copy(kL.stride, kL.stride + 3, args.kStride);
  std::copy(vL.stride, vL.stride + 3, args.vStride);
  std::copy(oL.stride, oL.stride + 3, args.oStride);
  args.lseStride[0] = Hq * M;
  args.lseStride[1] = M;
  if (!slopeBits.empty()) {
    args.alibiSlopes = dslopes.ptr;
    args.alibiStrideB = spec.alibi == AlibiKind::BatchHead ? Hq : 0;
  }
  CUresult r;
  if (!kernel->forward(args, nullptr, error))
    return fail(error, kMismatch);
  if ((r = cu.cuCtxSynchronize()))
    return fail(cu.describe(r, ("running " + manifest.kernelName).c_str()), kMismatch);
  if (!download(cu, outBits.data(), dout, error) ||
      !download(cu, lse.data(), dlse, error))
    return fail(error, kMismatch);

  std::vector<double> output(oL.count());
  for (int64_t i = 0; i < oL.count(); ++i)
    output[i] = storageValue(type, outBits[oL.physical(i)]);
  std::vector<double> lseValues(lse.begin(), lse.end());

  std::cout << "fa-run: device=cuda (" << cu.deviceName << ") kernel="
            << manifest.kernelName << " b=" << B << " hq=" << Hq
            << " hkv=" << Hkv << " m=" << M << " n=" << N
            << " layout=" << o.layout << " seed=" << o.seed
            << (alibiSlopes.empty()
                    ? std::string()
                    : std::string(" alibi=") + alibiName(spec.alibi))
            << " registers=" << kernel->registers() << "\n";

  bool pass = true;
  if (o.verify) {
    ref::Problem problem = makeProblem(spec, size, alibiSlopes);
    // Full check for small problems; sampled rows (block boundaries
    // included) for large ones.
    double work = static_cast<double>(B) * Hq * M * N * (D + Dv);
    std::vector<int64_t> rows;
    if (work > 4e9)
      rows = sampleRows(problem, spec.blockM, spec.blockN, 512, o.seed + 1);
    ForwardData data{q.logical, k.logical, v.logical, output, lseValues};
    VerifyReport report = verifyForward(type, problem, data, rows);
    std::cout << "forward:\n" << report.format() << "\n";
    pass = report.pass();
  }

  if (o.bench) {
    // Rotate among input sets larger than L2 together, so that each launch
    // reads K and V from HBM, as a real model does.
    size_t setBytes = (qL.count() + kL.count() + vL.count() + oL.count()) * eb;
    int64_t sets = std::min<int64_t>(8, std::max<int64_t>(1, (200ll << 20) / setBytes));
    std::vector<std::unique_ptr<DeviceBuffer>> extra;
    std::vector<ForwardArgs> rotation = {args};
    for (int64_t s = 1; s < sets; ++s) {
      ForwardArgs a = args;
      // Copies of the real inputs (timing never runs on zeros).
      struct Copy {
        CUdeviceptr *field;
        size_t bytes;
        const void *host;
      };
      for (const Copy &copy :
           {Copy{&a.q, dq.bytes, q.bits.data()}, Copy{&a.k, dk.bytes, k.bits.data()},
            Copy{&a.v, dv.bytes, v.bits.data()},
            Copy{&a.o, dout.bytes, outBits.data()},
            Copy{&a.lse, dlse.bytes, lse.data()}}) {
        extra.push_back(std::make_unique<DeviceBuffer>());
        if (!allocate(cu, *extra.back(), copy.bytes, error) ||
            !upload(cu, *extra.back(), copy.host, error))
          return fail(error, kMismatch);
        *copy.field = extra.back()->ptr;
      }
      rotation.push_back(a);
    }
    CUevent start, stop;
    cu.cuEventCreate(&start, 0);
    cu.cuEventCreate(&stop, 0);
    for (int i = 0; i < 10; ++i) // warm-up
      if (!kernel->forward(rotation[i % rotation.size()], nullptr, error))
        return fail(error, kMismatch);
    std::vector<float> times;
    for (int64_t i = 0; i < o.benchIters; ++i) {
      cu.cuEventRecord(start, nullptr);
      kernel->forward(rotation[i % rotation.size()], nullptr, error);
      cu.cuEventRecord(stop, nullptr);
      if ((r = cu.cuEventSynchronize(stop)))
        return fail(cu.describe(r, "timing"), kMismatch);
      float ms = 0;
      cu.cuEventElapsedTime(&ms, start, stop);
      times.push_back(ms);
    }
    cu.cuEventDestroy(start);
    cu.cuEventDestroy(stop);
    std::sort(times.begin(), times.end());
    double median = times[times.size() / 2];
    // DESIGN.md's convention: 4·B·Hq·M·N·D, halved for the causal masks.
    double flops = 4.0 * B * Hq * M * N * D;
    if (spec.mask.kind == ref::MaskKind::Causal ||
        spec.mask.kind == ref::MaskKind::CausalTopLeft)
      flops /= 2;
    char line[256];
    std::snprintf(line, sizeof(line),
                  "bench: median %.4f ms over %lld launches (%lld input sets), "
                  "%.1f TFLOP/s\n",
                  median, static_cast<long long>(o.benchIters),
                  static_cast<long long>(rotation.size()),
                  flops / (median * 1e-3) / 1e12);
    std::cout << line;
  }

  if (!o.dump.empty()) {
    std::string e;
    bool ok = writeNpyF32(o.dump + "/q.npy", {B, Hq, M, D}, q.logical, e) &&
              writeNpyF32(o.dump + "/k.npy", {B, Hkv, N, D}, k.logical, e) &&
              writeNpyF32(o.dump + "/v.npy", {B, Hkv, N, Dv}, v.logical, e) &&
              writeNpyF32(o.dump + "/o.npy", {B, Hq, M, Dv}, output, e) &&
              writeNpyF32(o.dump + "/lse.npy", {B, Hq, M}, lseValues, e);
    if (!ok)
      return fail(e, kBadInput);
  }
  if (!o.verify)
    return kPass;
  std::cout << (pass ? "PASS" : "FAIL") << "\n";
  return pass ? kPass : kMismatch;
}
