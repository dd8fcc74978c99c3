//===- CudaRun.cpp - fa-run --device cuda ---------------------------------===//
//
// Part of fa-mlir.
//
// Loads a kernel fa-compile generated, runs it on fresh random inputs in the
// chosen memory layout with NaN-poisoned outputs, verifies against the
// float64 reference (every row for small problems, at least 512 sampled
// rows across block boundaries for large ones), and times it with CUDA
// events (--bench). With --bwd the backward kernel runs after it
// (CudaBackward.cpp). Needs no MLIR: it builds on the GPU machine.
//
//===----------------------------------------------------------------------===//

#include "CudaRun.h"
#include "Fp8Inputs.h"
#include "RandomDraws.h"

#include "fa/runtime/Npy.h"
#include "fa/runtime/Verify.h"

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <limits>
#include <sys/stat.h>

using namespace fa;
using namespace fa::cuda;
using namespace fa::cudarun;

//===----------------------------------------------------------------------===//
// What the forward and the backward share (CudaRun.h)
//===----------------------------------------------------------------------===//

HostData fa::cudarun::randomData(const Layout &l, ElementType type,
                                 std::mt19937_64 &gen) {
  HostData d;
  drawRounded(
      type, l.count(), gen, [&](size_t i) { return l.physical(i); }, d.bits,
      d.logical);
  return d;
}

std::vector<double>
fa::cudarun::logicalValues(const Layout &l, ElementType type,
                           const std::vector<uint16_t> &bits) {
  std::vector<double> values(l.count());
  for (int64_t i = 0; i < l.count(); ++i)
    values[i] = storageValue(type, bits[l.physical(i)]);
  return values;
}

bool fa::cudarun::allocate(Driver &cu, DeviceBuffer &buffer, size_t bytes,
                           std::string &error) {
  buffer.cu = &cu;
  buffer.bytes = bytes;
  CUresult r = cu.cuMemAlloc(&buffer.ptr, std::max<size_t>(bytes, 16));
  if (r)
    error = cu.describe(r, "cuMemAlloc");
  return r == 0;
}

bool fa::cudarun::upload(Driver &cu, DeviceBuffer &buffer, const void *data,
                         std::string &error) {
  CUresult r = cu.cuMemcpyHtoD(buffer.ptr, data, buffer.bytes);
  if (r)
    error = cu.describe(r, "cuMemcpyHtoD");
  return r == 0;
}

bool fa::cudarun::download(Driver &cu, void *data, const DeviceBuffer &buffer,
                           std::string &error) {
  CUresult r = cu.cuMemcpyDtoH(data, buffer.ptr, buffer.bytes);
  if (r)
    error = cu.describe(r, "cuMemcpyDtoH");
  return r == 0;
}

int fa::cudarun::fail(const std::string &message, int code) {
  printError(message);
  return code;
}

bool fa::cudarun::copyBuffers(Driver &cu, const std::vector<BufferCopy> &copies,
                              std::vector<std::unique_ptr<DeviceBuffer>> &owned,
                              std::string &error) {
  for (const BufferCopy &copy : copies) {
    owned.push_back(std::make_unique<DeviceBuffer>());
    if (!allocate(cu, *owned.back(), copy.bytes, error) ||
        (copy.host && !upload(cu, *owned.back(), copy.host, error)))
      return false;
    *copy.field = owned.back()->ptr;
  }
  return true;
}

int64_t fa::cudarun::benchSets(size_t setBytes) {
  return std::min<int64_t>(
      8, std::max<int64_t>(1, (200ll << 20) / std::max<size_t>(setBytes, 1)));
}

float fa::cudarun::median(std::vector<float> &times) {
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

double fa::cudarun::forwardFlops(const AttentionSpec &spec,
                                 const ProblemSize &size) {
  double flops = 4.0 * size.batch * size.queryHeads * size.queryLen *
                 size.keyLen * spec.headDim;
  // Causal: half, FlashAttention's convention (BENCHMARKS.md). A window:
  // the (query, key) pairs it keeps, counted row by row (bottom-right
  // aligned: query i sits on key i + N - M), or its TFLOP/s would count
  // the keys it skips.
  if (spec.mask.kind == MaskKind::Causal ||
      spec.mask.kind == MaskKind::CausalTopLeft)
    flops /= 2;
  if (spec.mask.kind == MaskKind::Window) {
    int64_t shift = size.keyLen - size.queryLen, pairs = 0;
    for (int64_t i = 0; i < size.queryLen; ++i) {
      int64_t first = spec.mask.left < 0 ? 0 : i + shift - spec.mask.left;
      int64_t last = spec.mask.right < 0 ? size.keyLen - 1
                                         : i + shift + spec.mask.right;
      first = std::max<int64_t>(first, 0);
      last = std::min<int64_t>(last, size.keyLen - 1);
      pairs += std::max<int64_t>(last - first + 1, 0);
    }
    flops *= double(pairs) / (double(size.queryLen) * double(size.keyLen));
  }
  return flops;
}

//===----------------------------------------------------------------------===//
// The forward
//===----------------------------------------------------------------------===//

bool fa::checkCudaDtypeOptions(const Options &o, const AttentionSpec &spec,
                               std::string &error) {
  bool fp8 = spec.dtype == ElementType::F8E4M3FN;
  error.clear();
  if (!fp8 && o.negativeControl == "no-descale")
    error = "--negative-control no-descale needs dtype=f8e4m3fn";
  else if (o.backward) // the spec contract's word, fp8's included
    checkBackwardSpec(spec, error);
  return error.empty();
}

/// Rejects options that --device cuda does not take; kPass if none.
static int checkCudaOptions(const Options &o) {
  if (o.kernel.empty())
    return fail("--device cuda needs --kernel NAME.json (written by "
                "fa-compile, e.g. kernels_generated/), or --spec in a build "
                "with the compiler",
                kBadInput);
  // The other forward controls need the CPU path's compiler; no-descale
  // is the launch's (V's descales 1), the backward's a kernel of its own
  // (--bwd-kernel, or compiled from --spec).
  bool forwardControl = (o.negativeControl == "no-descale" ||
                         o.negativeControl == "no-regions" ||
                         o.negativeControl == "block-lists") &&
                        !o.backward;
  bool backwardControl = o.negativeControl == "no-row-dot" && o.backward;
  if (o.negativeControl != "none" && !forwardControl && !backwardControl)
    return fail("--negative-control with --device cuda: only no-row-dot, "
                "with --bwd, no-descale, for an f8e4m3fn forward, "
                "no-regions, for a variant's, or block-lists, for a "
                "block-sparse kernel's (the others are CPU (compiler) "
                "options)",
                kBadInput);
  if (!o.bwdKernel.empty() && !o.backward)
    return fail("--bwd-kernel needs --bwd", kBadInput);
  if (o.layout != "bhsd" && o.layout != "bshd")
    return fail("--layout must be bhsd ([B,H,S,D]) or bshd ([B,S,H,D])",
                kBadInput);
  return kPass;
}

/// Reads the kernel's manifest into `manifest` and the spec to run into
/// `spec`: the manifest's, checked against `size` and reconciled with
/// --spec (which must agree on d, dv and dtype and may add ALiBi or
/// descale=head), ALiBi exactly when the kernel takes slopes, and
/// descales exactly when it is f8e4m3fn. kPass, or the exit code.
static int readKernelSpec(const Options &o, const ProblemSize &size,
                          Manifest &manifest, AttentionSpec &spec) {
  std::string error;
  if (!Manifest::read(o.kernel, manifest, error))
    return fail(error, kBadInput);
  // A copy: --spec may add ALiBi, which the manifest does not record yet.
  spec = manifest.spec;
  if (!validateProblem(spec, size, error) ||
      !manifest.checkLaunch(size, error) ||
      !checkHostMemory(spec, size, o.backward, error))
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
    // One kernel serves both slope shapes ([Hq] or [B, Hq]: a stride),
    // and both descale shapes (one per tensor or [B, Hkv]: strides).
    if (given.alibi != AlibiKind::None)
      spec.alibi = given.alibi;
    if (given.descale != DescaleKind::Tensor)
      spec.descale = given.descale;
  }
  if (!checkCudaDtypeOptions(o, spec, error))
    return fail(error, kBadInput);
  if (o.negativeControl == "block-lists" && !manifest.blockSparse())
    return fail("--negative-control block-lists: " + manifest.kernelName +
                    " is not block-sparse",
                kBadInput);
  if (o.backward && manifest.blockSparse())
    return fail("--bwd: " + manifest.kernelName +
                    " is block-sparse; the GPU backward takes no block mask yet",
                kBadInput);
  if (o.negativeControl == "no-regions" && manifest.variant.empty())
    return fail("--negative-control no-regions: " + manifest.kernelName +
                    " has no score_mod or mask_mod",
                kBadInput);
  for (const CaptureType &type : manifest.variant.captures)
    if (std::count(type.shape.begin(), type.shape.end(),
                   CaptureType::kDynamicExtent))
      return fail("fa-run draws captured tensors of static shapes; " +
                      manifest.kernelName + " takes one of a dynamic extent",
                  kBadInput);
  bool fp8 = spec.dtype == ElementType::F8E4M3FN;
  if (manifest.takesDescales() != fp8)
    return fail(manifest.kernelName + " is " + elementTypeName(spec.dtype) +
                    " but its manifest lists " +
                    (fp8 ? "no descale parameters" : "descale parameters") +
                    " (f8e4m3fn kernels take q_descale, k_descale, "
                    "v_descale)",
                kBadInput);
  bool takesSlopes = manifest.takesAlibiSlopes();
  if (takesSlopes != (spec.alibi != AlibiKind::None))
    return fail(std::string("--spec alibi=") + alibiName(spec.alibi) +
                    " does not match the kernel, which " +
                    (takesSlopes ? "takes" : "takes no") + " ALiBi slopes",
                kBadInput);
  return kPass;
}

/// `t`'s values, its e4m3 bytes placed in layout `l`.
static HostData placed(const Layout &l, QuantisedTensor &&t) {
  HostData d;
  d.bytes.resize(t.bytes.size());
  for (int64_t i = 0; i < l.count(); ++i)
    d.bytes[l.physical(i)] = t.bytes[i];
  d.logical = std::move(t.values);
  return d;
}

/// Draws Q, K and V into `t` in the --layout, as fa-run --device cpu draws
/// them for the same seed: rounded to the 16-bit dtype, or quantised to
/// e4m3 over their descales (Fp8Inputs.h), which go to t.descales.
static void drawInputs(const Options &o, const AttentionSpec &spec,
                       const ProblemSize &size, Tensors &t) {
  bool sequenceMajor = o.layout == "bshd";
  int64_t B = size.batch, Hq = size.queryHeads, Hkv = size.kvHeads,
          M = size.queryLen, N = size.keyLen, D = spec.headDim,
          Dv = spec.valueDim;
  t.qL = Layout::make(B, Hq, M, D, sequenceMajor);
  t.kL = Layout::make(B, Hkv, N, D, sequenceMajor);
  t.vL = Layout::make(B, Hkv, N, Dv, sequenceMajor);
  t.oL = Layout::make(B, Hq, M, Dv, sequenceMajor);
  t.gen.seed(o.seed);
  if (spec.dtype != ElementType::F8E4M3FN) {
    t.q = randomData(t.qL, spec.dtype, t.gen);
    t.k = randomData(t.kL, spec.dtype, t.gen);
    t.v = randomData(t.vL, spec.dtype, t.gen);
    return;
  }
  QuantisedInputs in = drawQuantisedInputs(spec, size, t.gen);
  t.q = placed(t.qL, std::move(in.q));
  t.k = placed(t.kL, std::move(in.k));
  t.v = placed(t.vL, std::move(in.v));
  t.descales = std::move(in.descales);
}

/// f8e4m3fn: uploads the descales the kernel reads, Q's, K's and V's, each
/// one value or [B, Hkv]; with --negative-control no-descale V's are 1 (the
/// reference keeps t.descales). Nothing for 16-bit inputs.
static bool uploadDescales(Driver &cu, const Options &o, Tensors &t,
                           std::string &error) {
  if (t.descales.empty())
    return true;
  std::vector<float> given =
      kernelDescales(t.descales, o.negativeControl == "no-descale");
  size_t each = given.size() / 3;
  DeviceBuffer *buffers[3] = {&t.dqDescale, &t.dkDescale, &t.dvDescale};
  for (size_t i = 0; i < 3; ++i)
    if (!allocate(cu, *buffers[i], each * sizeof(float), error) ||
        !upload(cu, *buffers[i], given.data() + i * each, error))
      return false;
  return true;
}

/// Draws random inputs in the --layout, allocates and uploads them, and
/// poisons the outputs; also draws and uploads the ALiBi slopes and the
/// fp8 descales, if any.
static bool prepareTensors(Driver &cu, const Options &o,
                           const AttentionSpec &spec, const ProblemSize &size,
                           Tensors &t, std::string &error) {
  drawInputs(o, spec, size, t);
  int64_t B = size.batch, Hq = size.queryHeads, M = size.queryLen;
  // Q, K, V in the dtype (1 byte for e4m3), O in its output type (bf16).
  ElementType outType = outputElementType(spec.dtype);
  size_t eb = elementTypeSize(spec.dtype), ob = elementTypeSize(outType);
  if (!allocate(cu, t.dq, t.qL.count() * eb, error) ||
      !allocate(cu, t.dk, t.kL.count() * eb, error) ||
      !allocate(cu, t.dv, t.vL.count() * eb, error) ||
      !allocate(cu, t.dout, t.oL.count() * ob, error) ||
      !allocate(cu, t.dlse, B * Hq * M * sizeof(float), error) ||
      !upload(cu, t.dq, t.q.data(), error) ||
      !upload(cu, t.dk, t.k.data(), error) ||
      !upload(cu, t.dv, t.v.data(), error))
    return false;

  // Poison: an output element the kernel never writes stays NaN and fails.
  t.outBits = std::vector<uint16_t>(t.oL.count(), poisonBits(outType));
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
  return uploadDescales(cu, o, t, error);
}

/// A variant kernel's captured values, drawn as fa-run --device cpu draws
/// them for the same seed, and uploaded; nothing for a spec's kernel.
static bool prepareCaptures(Driver &cu, const Options &o,
                            const Variant &variant, Tensors &t,
                            std::string &error) {
  std::vector<std::vector<uint8_t>> bytes;
  t.captures = drawCaptures(variant.captures, o.seed + kCaptureSeedOffset, bytes);
  for (size_t c = 0; c < t.captures.size(); ++c) {
    t.dcaptures.push_back(std::make_unique<DeviceBuffer>());
    if (variant.captures[c].isScalar())
      continue;
    if (!allocate(cu, *t.dcaptures.back(), bytes[c].size(), error) ||
        !upload(cu, *t.dcaptures.back(), bytes[c].data(), error))
      return false;
  }
  return true;
}

/// A block-sparse kernel's block mask for the run: the blocks of the
/// reference's visibility (the built-in mask and the user's mask_mod on
/// the drawn captures; one row for every batch and head where the
/// mask_mod reads neither), uploaded. The block-lists control drops each
/// row's last listed block, which must fail the check.
static bool prepareBlockMask(Driver &cu, const Options &o, const Manifest &manifest,
                             const ProblemSize &size, Tensors &t,
                             std::string &error) {
  if (!manifest.blockSparse())
    return true;
  const VariantProgram &maskMod = manifest.variant.maskMod;
  std::function<bool(int64_t, int64_t, int64_t, int64_t)> userMask;
  if (!maskMod.empty())
    userMask = maskModOf(maskMod, t.captures);
  ref::Problem problem = makeProblem(manifest.spec, size, t.alibiSlopes);
  const ref::Mask &mask = problem.mask;
  int64_t M = size.queryLen, N = size.keyLen;
  auto visible = [&](int64_t b, int64_t h, int64_t i, int64_t j) {
    return ref::isVisible(mask, i, j, M, N) && (!userMask || userMask(b, h, i, j));
  };
  bool perBatch = !maskMod.empty() && programReads(maskMod, 0);
  bool perHead = !maskMod.empty() && programReads(maskMod, 1);
  t.blockMask = buildBlockMask(visible, perBatch ? size.batch : 1,
                               perHead ? size.queryHeads : 1, M, N,
                               manifest.sparseQBlock, manifest.sparseKvBlock);
  if (o.negativeControl == "block-lists")
    dropLastListedBlocks(t.blockMask);
  auto put = [&](DeviceBuffer &buffer, const std::vector<int32_t> &values) {
    return allocate(cu, buffer, values.size() * sizeof(int32_t), error) &&
           upload(cu, buffer, values.data(), error);
  };
  return put(t.dkvNumBlocks, t.blockMask.kvNumBlocks) &&
         put(t.dkvIndices, t.blockMask.kvIndices) &&
         put(t.dfullKvNumBlocks, t.blockMask.fullKvNumBlocks) &&
         put(t.dfullKvIndices, t.blockMask.fullKvIndices);
}

void fa::cudarun::addVariant(ref::Problem &problem, const Variant &variant,
                             const Tensors &t) {
  if (!variant.scoreMod.empty())
    problem.scoreMod = scoreModOf(variant.scoreMod, t.captures);
  if (!variant.maskMod.empty())
    problem.maskMod = maskModOf(variant.maskMod, t.captures);
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
  if (!t.descales.empty()) {
    args.qDescale = t.dqDescale.ptr;
    args.kDescale = t.dkDescale.ptr;
    args.vDescale = t.dvDescale.ptr;
    // One factor per tensor ({0, 0}), or [B, Hkv] ({Hkv, 1}).
    if (spec.descale == DescaleKind::Head) {
      args.descaleStride[0] = size.kvHeads;
      args.descaleStride[1] = 1;
    }
  }
  for (size_t c = 0; c < t.captures.size(); ++c) {
    ForwardArgs::Capture capture;
    capture.data = t.dcaptures[c]->ptr;
    capture.extents = t.captures[c].shape;
    if (!capture.data) {
      capture.extents.clear();
      capture.real = t.captures[c].elements.front();
      capture.integer = static_cast<int64_t>(capture.real);
    }
    args.captures.push_back(capture);
  }
  if (t.dkvIndices.ptr) {
    const HostBlockMask &m = t.blockMask;
    args.blockMask = {t.dkvNumBlocks.ptr, t.dkvIndices.ptr, t.dfullKvNumBlocks.ptr,
                      t.dfullKvIndices.ptr, m.batch, m.heads, m.qBlocks,
                      m.kvBlocks, m.qBlockSize, m.kvBlockSize};
  }
  return args;
}

/// Runs the kernel once, waits for it, and downloads O (stored in
/// `outType`) and LSE into `t` (the stored bits and the logical values).
static bool runOnce(const Kernel &kernel, const ForwardArgs &args,
                    const std::string &kernelName, ElementType outType,
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

  t.output = logicalValues(t.oL, outType, t.outBits);
  t.lseValues.assign(t.lse.begin(), t.lse.end());
  return true;
}

/// Checks O and LSE against the float64 reference; true if they pass.
static bool verifyOutputs(const Options &o, const AttentionSpec &spec,
                          const Variant &variant, const ProblemSize &size,
                          const Tensors &t) {
  ref::Problem problem = makeProblem(spec, size, t.alibiSlopes);
  // The no-regions control leaves the regions out of the reference.
  if (o.negativeControl != "no-regions")
    addVariant(problem, variant, t);
  // Full check for small problems; sampled rows (block boundaries
  // included) for large ones.
  double work = static_cast<double>(size.batch) * size.queryHeads *
                size.queryLen * size.keyLen * (spec.headDim + spec.valueDim);
  std::vector<int64_t> rows;
  if (work > 4e9)
    rows = sampleRows(problem, spec.blockM, spec.blockN, 512, o.seed + 1);
  ForwardData data{t.q.logical, t.k.logical, t.v.logical, t.output,
                   t.lseValues};
  // Hopper's e4m3 tensor cores sum Q·Kᵀ in ~13 bits (Numerics.h): the
  // yardstick sums as they do; the f32-summing naive is shown beside.
  ScoreAccumulation accumulation = spec.dtype == ElementType::F8E4M3FN
                                       ? ScoreAccumulation::Fp8TensorCore
                                       : ScoreAccumulation::F32;
  VerifyReport report =
      verifyForward(spec.dtype, problem, data, rows, accumulation);
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
  size_t setBytes = t.dq.bytes + t.dk.bytes + t.dv.bytes + t.dout.bytes;
  std::vector<std::unique_ptr<DeviceBuffer>> extra;
  std::vector<ForwardArgs> rotation = {args};
  for (int64_t s = 1, sets = benchSets(setBytes); s < sets; ++s) {
    ForwardArgs a = args;
    // Copies of the real inputs (timing never runs on zeros).
    if (!copyBuffers(cu,
                     {{&a.q, t.dq.bytes, t.q.data()},
                      {&a.k, t.dk.bytes, t.k.data()},
                      {&a.v, t.dv.bytes, t.v.data()},
                      {&a.o, t.dout.bytes, t.outBits.data()},
                      {&a.lse, t.dlse.bytes, t.lse.data()}},
                     extra, error))
      return fail(error, kMismatch);
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
  double ms = median(times);
  char line[256];
  std::snprintf(line, sizeof(line),
                "bench: median %.4f ms over %lld launches (%lld input sets), "
                "%.1f TFLOP/s\n",
                ms, static_cast<long long>(o.benchIters),
                static_cast<long long>(rotation.size()),
                forwardFlops(spec, size) / (ms * 1e-3) / 1e12);
  std::cout << line;
  return kPass;
}

/// --dump DIR: writes Q, K, V, O and LSE (logical [B, H, S, D] order, f32)
/// and, with ALiBi, the slopes ([Hq] or [B, Hq]) as .npy files, the same
/// set --device cpu writes. kPass, or the exit code.
static int writeDump(const std::string &dir, const AttentionSpec &spec,
                     const ProblemSize &size, const Tensors &t) {
  int64_t B = size.batch, Hq = size.queryHeads, Hkv = size.kvHeads,
          M = size.queryLen, N = size.keyLen, D = spec.headDim,
          Dv = spec.valueDim;
  ::mkdir(dir.c_str(), 0755);
  std::string e;
  bool ok = writeNpyF32(dir + "/q.npy", {B, Hq, M, D}, t.q.logical, e) &&
            writeNpyF32(dir + "/k.npy", {B, Hkv, N, D}, t.k.logical, e) &&
            writeNpyF32(dir + "/v.npy", {B, Hkv, N, Dv}, t.v.logical, e) &&
            writeNpyF32(dir + "/o.npy", {B, Hq, M, Dv}, t.output, e) &&
            writeNpyF32(dir + "/lse.npy", {B, Hq, M}, t.lseValues, e);
  if (ok && !t.alibiSlopes.empty())
    ok = writeNpyF32(dir + "/slopes.npy", alibiShape(spec, size),
                     t.alibiSlopes, e);
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
  std::string backwardPath;
  BackwardManifest backwardManifest;
  if (o.backward)
    if (int code = readBackwardManifest(o, manifest, size, backwardPath,
                                        backwardManifest);
        code != kPass)
      return code;
  std::string error;
  bool noDevice = false;
  // A kernel built for more shared memory than this device has
  // (--shared-memory-budget) is the user's to fix: exit 2, said before
  // loading (the load refuses it too, as a library call's error).
  if (Driver *d = cuda::driver(error, noDevice)) {
    const auto &main = backwardManifest.step(abi::BackwardStep::Main);
    if (!sharedMemoryFits(*d, manifest.kernelName, manifest.dynamicSharedMemory,
                          error) ||
        (o.backward &&
         !sharedMemoryFits(*d, main.entry, main.dynamicSharedMemory, error)))
      return fail(error, kBadInput);
  }
  std::unique_ptr<Kernel> kernel = Kernel::load(o.kernel, error, noDevice);
  std::unique_ptr<BackwardKernel> backward;
  if (kernel && o.backward)
    backward = BackwardKernel::load(backwardPath, error, noDevice);
  if (!kernel || (o.backward && !backward))
    return fail(error, noDevice ? kNoGpu : kMismatch);
  Driver &cu = kernel->driver();

  // Declared after the kernels, so its buffers are freed while the driver
  // is still there.
  Tensors t;
  if (!prepareTensors(cu, o, spec, size, t, error) ||
      !prepareCaptures(cu, o, manifest.variant, t, error) ||
      !prepareBlockMask(cu, o, manifest, size, t, error))
    return fail(error, kMismatch);
  ForwardArgs args = makeForwardArgs(t, spec, size);
  if (!runOnce(*kernel, args, manifest.kernelName,
               outputElementType(spec.dtype), t, error))
    return fail(error, kMismatch);

  std::cout << "fa-run: device=cuda (" << cu.deviceName << ") kernel="
            << manifest.kernelName << " b=" << size.batch
            << " hq=" << size.queryHeads << " hkv=" << size.kvHeads
            << " m=" << size.queryLen << " n=" << size.keyLen
            << " layout=" << o.layout << " seed=" << o.seed
            << (t.alibiSlopes.empty()
                    ? std::string()
                    : std::string(" alibi=") + alibiName(spec.alibi))
            << descaleSummary(t.descales, spec.descale == DescaleKind::Head)
            << (o.negativeControl == "none"
                    ? std::string()
                    : " negative-control=" + o.negativeControl)
            << (manifest.blockSparse()
                    ? " blocks_listed=" + std::to_string(listedFraction(t.blockMask))
                    : std::string())
            << " registers=" << kernel->registers() << "\n";

  bool pass = true;
  if (o.verify)
    pass = verifyOutputs(o, spec, manifest.variant, size, t);
  if (!o.dump.empty())
    if (int code = writeDump(o.dump, spec, size, t); code != kPass)
      return code;
  if (o.backward) {
    // The backward's --bench times the forward with it.
    if (int code =
            runBackward(o, *kernel, *backward, spec, size, args, t, pass);
        code != kPass)
      return code;
  } else if (o.bench) {
    if (int code = runBench(o, *kernel, spec, size, args, t); code != kPass)
      return code;
  }
  if (!o.verify)
    return kPass;
  std::cout << (pass ? "PASS" : "FAIL") << "\n";
  return pass ? kPass : kMismatch;
}
