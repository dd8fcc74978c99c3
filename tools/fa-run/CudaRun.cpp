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

/// One run's tensors: their layouts, the host copies and the device
/// buffers. Neither copied nor moved (it owns device memory), and it must
/// go before the Kernel whose driver frees that memory.
struct Tensors {
  Layout qL, kL, vL, oL;
  HostData q, k, v;
  /// The output and LSE as the kernel stored them (NaN before the run).
  std::vector<uint16_t> outBits;
  std::vector<float> lse;
  /// The same, as logical values.
  std::vector<double> output, lseValues;
  /// ALiBi slopes for the reference, and as f32 for the kernel.
  std::vector<double> alibiSlopes;
  std::vector<float> slopeBits;
  DeviceBuffer dq, dk, dv, dout, dlse, dslopes;
};

} // namespace

/// Rejects options that --device cuda does not take; kPass if none.
static int checkCudaOptions(const Options &o) {
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
  return kPass;
}

/// Reads the kernel's manifest into `manifest` and the spec to run into
/// `spec`: the manifest's, checked against `size` and reconciled with
/// --spec (which must agree on d, dv and dtype and may add ALiBi), and
/// ALiBi exactly when the kernel takes slopes. kPass, or the exit code.
static int readKernelSpec(const Options &o, const ProblemSize &size,
                          Manifest &manifest, AttentionSpec &spec) {
  std::string error;
  if (!Manifest::read(o.kernel, manifest, error))
    return fail(error, kBadInput);
  // A copy: --spec may add ALiBi, which the manifest does not record yet.
  spec = manifest.spec;
  if (!validateProblem(spec, size, error) ||
      !manifest.checkLaunch(size, error) ||
      !checkHostMemory(spec, size, /*backward=*/false, error))
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
  bool takesSlopes = manifest.takesAlibiSlopes();
  if (takesSlopes != (spec.alibi != AlibiKind::None))
    return fail(std::string("--spec alibi=") + alibiName(spec.alibi) +
                    " does not match the kernel, which " +
                    (takesSlopes ? "takes" : "takes no") + " ALiBi slopes",
                kBadInput);
  return kPass;
}

/// Draws random inputs in the --layout, allocates and uploads them, and
/// poisons the outputs; also draws and uploads the ALiBi slopes, if any.
static bool prepareTensors(Driver &cu, const Options &o,
                           const AttentionSpec &spec, const ProblemSize &size,
                           Tensors &t, std::string &error) {
  ElementType type = spec.dtype;
  bool sequenceMajor = o.layout == "bshd";
  int64_t B = size.batch, Hq = size.queryHeads, Hkv = size.kvHeads,
          M = size.queryLen, N = size.keyLen, D = spec.headDim,
          Dv = spec.valueDim;
  t.qL = Layout::make(B, Hq, M, D, sequenceMajor);
  t.kL = Layout::make(B, Hkv, N, D, sequenceMajor);
  t.vL = Layout::make(B, Hkv, N, Dv, sequenceMajor);
  t.oL = Layout::make(B, Hq, M, Dv, sequenceMajor);
  std::mt19937_64 gen(o.seed);
  t.q = randomData(t.qL, type, gen);
  t.k = randomData(t.kL, type, gen);
  t.v = randomData(t.vL, type, gen);

  size_t eb = elementTypeSize(type);
  if (!allocate(cu, t.dq, t.qL.count() * eb, error) ||
      !allocate(cu, t.dk, t.kL.count() * eb, error) ||
      !allocate(cu, t.dv, t.vL.count() * eb, error) ||
      !allocate(cu, t.dout, t.oL.count() * eb, error) ||
      !allocate(cu, t.dlse, B * Hq * M * sizeof(float), error) ||
      !upload(cu, t.dq, t.q.bits.data(), error) ||
      !upload(cu, t.dk, t.k.bits.data(), error) ||
      !upload(cu, t.dv, t.v.bits.data(), error))
    return false;

  // Poison: an output element the kernel never writes stays NaN and fails.
  t.outBits = std::vector<uint16_t>(t.oL.count(), poisonBits(type));
  t.lse = std::vector<float>(B * Hq * M,
                             std::numeric_limits<float>::quiet_NaN());
  if (!upload(cu, t.dout, t.outBits.data(), error) ||
      !upload(cu, t.dlse, t.lse.data(), error))
    return false;
  // ALiBi slopes, as fa-run --device cpu draws them for the same seed.
  t.alibiSlopes = randomAlibiSlopes(spec, size, o.seed + kAlibiSeedOffset);
  t.slopeBits.assign(t.alibiSlopes.begin(), t.alibiSlopes.end());
  if (!t.slopeBits.empty() &&
      (!allocate(cu, t.dslopes, t.slopeBits.size() * sizeof(float), error) ||
       !upload(cu, t.dslopes, t.slopeBits.data(), error)))
    return false;
  return true;
}

/// The kernel's arguments for the tensors in `t`.
static ForwardArgs makeForwardArgs(const Tensors &t, const AttentionSpec &spec,
                                   const ProblemSize &size) {
  int64_t Hq = size.queryHeads, M = size.queryLen;
  ForwardArgs args;
  args.q = t.dq.ptr;
  args.k = t.dk.ptr;
  args.v = t.dv.ptr;
  args.o = t.dout.ptr;
  args.lse = t.dlse.ptr;
  args.batch = size.batch;
  args.queryHeads = Hq;
  args.kvHeads = size.kvHeads;
  args.queryLen = M;
  args.keyLen = size.keyLen;
  std::copy(t.qL.stride, t.qL.stride + 3, args.qStride);
  std::copy(t.kL.stride, t.kL.stride + 3, args.kStride);
  std::copy(t.vL.stride, t.vL.stride + 3, args.vStride);
  std::copy(t.oL.stride, t.oL.stride + 3, args.oStride);
  args.lseStride[0] = Hq * M;
  args.lseStride[1] = M;
  if (!t.slopeBits.empty()) {
    args.alibiSlopes = t.dslopes.ptr;
    args.alibiStrideB = spec.alibi == AlibiKind::BatchHead ? Hq : 0;
  }
  return args;
}

/// Runs the kernel once, waits for it, and downloads O and LSE into `t`
/// (the stored bits and the logical values).
static bool runOnce(const Kernel &kernel, const ForwardArgs &args,
                    const std::string &kernelName, ElementType type,
                    Tensors &t, std::string &error) {
  Driver &cu = kernel.driver();
  CUresult r;
  if (!kernel.forward(args, nullptr, error))
    return false;
  if ((r = cu.cuCtxSynchronize())) {
    error = cu.describe(r, ("running " + kernelName).c_str());
    return false;
  }
  if (!download(cu, t.outBits.data(), t.dout, error) ||
      !download(cu, t.lse.data(), t.dlse, error))
    return false;

  t.output.resize(t.oL.count());
  for (int64_t i = 0; i < t.oL.count(); ++i)
    t.output[i] = storageValue(type, t.outBits[t.oL.physical(i)]);
  t.lseValues.assign(t.lse.begin(), t.lse.end());
  return true;
}

/// Checks O and LSE against the float64 reference; true if they pass.
static bool verifyOutputs(const Options &o, const AttentionSpec &spec,
                          const ProblemSize &size, const Tensors &t) {
  ref::Problem problem = makeProblem(spec, size, t.alibiSlopes);
  // Full check for small problems; sampled rows (block boundaries
  // included) for large ones.
  double work = static_cast<double>(size.batch) * size.queryHeads *
                size.queryLen * size.keyLen * (spec.headDim + spec.valueDim);
  std::vector<int64_t> rows;
  if (work > 4e9)
    rows = sampleRows(problem, spec.blockM, spec.blockN, 512, o.seed + 1);
  ForwardData data{t.q.logical, t.k.logical, t.v.logical, t.output,
                   t.lseValues};
  VerifyReport report = verifyForward(spec.dtype, problem, data, rows);
  std::cout << "forward:\n" << report.format() << "\n";
  return report.pass();
}

/// --bench: times o.benchIters launches with CUDA events and prints the
/// median and its TFLOP/s. kPass, or the exit code.
static int runBench(const Options &o, const Kernel &kernel,
                    const AttentionSpec &spec, const ProblemSize &size,
                    const ForwardArgs &args, const Tensors &t) {
  Driver &cu = kernel.driver();
  std::string error;
  CUresult r;
  size_t eb = elementTypeSize(spec.dtype);
  // Rotate among input sets larger than L2 together, so that each launch
  // reads K and V from HBM, as a real model does.
  size_t setBytes =
      (t.qL.count() + t.kL.count() + t.vL.count() + t.oL.count()) * eb;
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
         {Copy{&a.q, t.dq.bytes, t.q.bits.data()},
          Copy{&a.k, t.dk.bytes, t.k.bits.data()},
          Copy{&a.v, t.dv.bytes, t.v.bits.data()},
          Copy{&a.o, t.dout.bytes, t.outBits.data()},
          Copy{&a.lse, t.dlse.bytes, t.lse.data()}}) {
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
    if (!kernel.forward(rotation[i % rotation.size()], nullptr, error))
      return fail(error, kMismatch);
  std::vector<float> times;
  for (int64_t i = 0; i < o.benchIters; ++i) {
    cu.cuEventRecord(start, nullptr);
    kernel.forward(rotation[i % rotation.size()], nullptr, error);
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
  double flops = 4.0 * size.batch * size.queryHeads * size.queryLen *
                 size.keyLen * spec.headDim;
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
  return kPass;
}

/// --dump DIR: writes Q, K, V, O and LSE (logical [B, H, S, D] order, f32)
/// as .npy files. kPass, or the exit code.
static int writeDump(const std::string &dir, const AttentionSpec &spec,
                     const ProblemSize &size, const Tensors &t) {
  int64_t B = size.batch, Hq = size.queryHeads, Hkv = size.kvHeads,
          M = size.queryLen, N = size.keyLen, D = spec.headDim,
          Dv = spec.valueDim;
  std::string e;
  bool ok = writeNpyF32(dir + "/q.npy", {B, Hq, M, D}, t.q.logical, e) &&
            writeNpyF32(dir + "/k.npy", {B, Hkv, N, D}, t.k.logical, e) &&
            writeNpyF32(dir + "/v.npy", {B, Hkv, N, Dv}, t.v.logical, e) &&
            writeNpyF32(dir + "/o.npy", {B, Hq, M, Dv}, t.output, e) &&
            writeNpyF32(dir + "/lse.npy", {B, Hq, M}, t.lseValues, e);
  if (!ok)
    return fail(e, kBadInput);
  return kPass;
}

int fa::runCuda(const Options &o) {
  if (int code = checkCudaOptions(o); code != kPass)
    return code;
  ProblemSize size{o.batch, o.queryHeads, o.kvHeads, o.queryLen, o.keyLen};
  Manifest manifest;
  AttentionSpec spec;
  if (int code = readKernelSpec(o, size, manifest, spec); code != kPass)
    return code;
  std::string error;
  bool noDevice = false;
  std::unique_ptr<Kernel> kernel = Kernel::load(o.kernel, error, noDevice);
  if (!kernel)
    return fail(error, noDevice ? kNoGpu : kMismatch);
  Driver &cu = kernel->driver();

  // Declared after the kernel, so its buffers are freed while the driver
  // is still there.
  Tensors t;
  if (!prepareTensors(cu, o, spec, size, t, error))
    return fail(error, kMismatch);
  ForwardArgs args = makeForwardArgs(t, spec, size);
  if (!runOnce(*kernel, args, manifest.kernelName, spec.dtype, t, error))
    return fail(error, kMismatch);

  std::cout << "fa-run: device=cuda (" << cu.deviceName << ") kernel="
            << manifest.kernelName << " b=" << size.batch
            << " hq=" << size.queryHeads << " hkv=" << size.kvHeads
            << " m=" << size.queryLen << " n=" << size.keyLen
            << " layout=" << o.layout << " seed=" << o.seed
            << (t.alibiSlopes.empty()
                    ? std::string()
                    : std::string(" alibi=") + alibiName(spec.alibi))
            << " registers=" << kernel->registers() << "\n";

  bool pass = true;
  if (o.verify)
    pass = verifyOutputs(o, spec, size, t);
  if (o.bench)
    if (int code = runBench(o, *kernel, spec, size, args, t); code != kPass)
      return code;
  if (!o.dump.empty())
    if (int code = writeDump(o.dump, spec, size, t); code != kPass)
      return code;
  if (!o.verify)
    return kPass;
  std::cout << (pass ? "PASS" : "FAIL") << "\n";
  return pass ? kPass : kMismatch;
}
