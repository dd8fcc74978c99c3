//===- CudaBackward.cpp - fa-run --device cuda --bwd ----------------------===//
//
// Part of fa-mlir.
//
// The backward on the GPU. After the forward kernel ran (CudaRun.cpp), the
// backward kernel's three steps run on the O and LSE it wrote, with a
// fresh random dO in O's layout, the gradients poisoned with NaN and the
// workspace too; dQ, dK and dV are then checked against the float64
// reference exactly as --device cpu checks them. With --deterministic the
// backward runs in its deterministic mode, and again on the same inputs
// until ten runs have been compared bit for bit.
//
//===----------------------------------------------------------------------===//

#include "CudaRun.h"

#include "fa/runtime/Npy.h"
#include "fa/runtime/Verify.h"

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <tuple>
#include <unistd.h>

using namespace fa;
using namespace fa::cuda;
using namespace fa::cudarun;
using abi::BackwardStep;

namespace {

/// The backward's own tensors, beside the forward's: dO and the gradients
/// (in the layouts of O, Q, K and V), and the workspace.
struct Gradients {
  HostData gradOut;
  /// dQ, dK, dV as the kernels stored them (NaN before the run).
  std::vector<uint16_t> dqBits, dkBits, dvBits;
  /// The same, as logical values.
  std::vector<double> gradQuery, gradKey, gradValue;
  DeviceBuffer gradOutBuffer, dqBuffer, dkBuffer, dvBuffer, workspace;
};

} // namespace

static std::string directoryOf(const std::string &path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? "." : path.substr(0, slash);
}

/// What the backward must share with the forward whose O and LSE it reads,
/// and does not: "the mask (causal vs none)"; empty if nothing.
static std::string disagreement(const Manifest &forward,
                                const BackwardManifest &backward) {
  const AttentionSpec &f = forward.spec, &b = backward.spec;
  auto versus = [](const std::string &x, const std::string &y) {
    return " (" + x + " vs " + y + ")";
  };
  if (f.dtype != b.dtype)
    return "the dtype" +
           versus(elementTypeName(f.dtype), elementTypeName(b.dtype));
  if (f.headDim != b.headDim)
    return "head_dim" +
           versus(std::to_string(f.headDim), std::to_string(b.headDim));
  if (f.valueDim != b.valueDim)
    return "value_dim" +
           versus(std::to_string(f.valueDim), std::to_string(b.valueDim));
  if (maskName(f.mask) != maskName(b.mask))
    return "the mask" + versus(maskName(f.mask), maskName(b.mask));
  if (f.scaleOrDefault() != b.scaleOrDefault())
    return "the scale" + versus(exactDouble(f.scaleOrDefault()),
                                exactDouble(b.scaleOrDefault()));
  if (f.softcap != b.softcap)
    return "softcap" + versus(exactDouble(f.softcap), exactDouble(b.softcap));
  // One kernel serves both slope shapes ([Hq] and [B, Hq]: a stride), so
  // what must agree is whether the kernels take slopes at all.
  bool fSlopes = forward.takesAlibiSlopes(),
       bSlopes = backward.takesAlibiSlopes();
  if (fSlopes != bSlopes)
    return "ALiBi" +
           versus(fSlopes ? "slopes" : "none", bSlopes ? "slopes" : "none");
  // The same regions on the same captures, as written.
  if (variantJson(forward.variant) != variantJson(backward.variant))
    return "the score_mod / mask_mod regions or their captures";
  return "";
}

int fa::cudarun::readBackwardManifest(const Options &o, const Manifest &forward,
                                      const ProblemSize &size,
                                      std::string &path,
                                      BackwardManifest &out) {
  path = o.bwdKernel;
  if (path.empty()) {
    // fa-compile's name for the backward beside the forward; under
    // --deterministic its _det kernel where there is one.
    std::string directory = directoryOf(o.kernel) + "/";
    path = directory + abi::backwardKernelNameOf(forward.kernelName) + ".json";
    std::string deterministicPath =
        directory +
        abi::backwardKernelNameOf(forward.kernelName, /*deterministic=*/true) +
        ".json";
    if (o.deterministic && ::access(deterministicPath.c_str(), R_OK) == 0)
      path = deterministicPath;
  }
  std::string error;
  if (!BackwardManifest::read(path, out, error)) {
    if (o.bwdKernel.empty() && error.rfind("cannot read", 0) == 0)
      error += " (the backward kernel of " + forward.kernelName +
               "; give --bwd-kernel B.json)";
    return fail(error, kBadInput);
  }
  if (std::string what = disagreement(forward, out); !what.empty())
    return fail("the forward kernel " + forward.kernelName +
                    " and the backward kernel " + out.kernelName +
                    " disagree on " + what,
                kBadInput);
  if (!out.checkLaunch(size, error))
    return fail(error, kBadInput);
  // Refused here, before anything runs, rather than by backward() later.
  if (o.deterministic && !out.deterministicMode)
    return fail("--deterministic: the backward kernel " + out.kernelName +
                    " has no deterministic mode (its manifest lacks "
                    "\"deterministic_mode\": true)",
                kBadInput);
  // A deliberately broken kernel runs only when asked for, and then must
  // be the one asked for.
  if (out.negativeControl != o.negativeControl)
    return fail(o.negativeControl == "none"
                    ? "the backward kernel " + out.kernelName +
                          " is the negative control \"" + out.negativeControl +
                          "\"; run it with "
                          "--negative-control " +
                          out.negativeControl
                    : "--negative-control " + o.negativeControl +
                          ": the backward kernel " + out.kernelName +
                          " is not that control (its manifest says \"" +
                          out.negativeControl + "\")",
                kBadInput);
  return kPass;
}

/// Fills the gradients and the workspace with NaN on the device: a
/// gradient element the kernels never write stays NaN, and so does one
/// computed from a delta the preprocess does not write or a dQ accumulator
/// (or semaphore) the runtime does not zero.
static bool poison(Driver &cu, ElementType type, Gradients &g,
                   std::string &error) {
  std::fill(g.dqBits.begin(), g.dqBits.end(), poisonBits(type));
  std::fill(g.dkBits.begin(), g.dkBits.end(), poisonBits(type));
  std::fill(g.dvBits.begin(), g.dvBits.end(), poisonBits(type));
  if (!upload(cu, g.dqBuffer, g.dqBits.data(), error) ||
      !upload(cu, g.dkBuffer, g.dkBits.data(), error) ||
      !upload(cu, g.dvBuffer, g.dvBits.data(), error))
    return false;
  // f32 NaN is all-ones bytes.
  if (CUresult r = cu.cuMemsetD8(g.workspace.ptr, 0xFF, g.workspace.bytes)) {
    error = cu.describe(r, "poisoning the workspace");
    return false;
  }
  return true;
}

/// Draws dO from the run's random stream (after Q, K and V, as --device cpu
/// does), poisons the gradients and the workspace, uploads them, and fills
/// `args`. False with a reason.
static bool prepareGradients(const Options &o, Driver &cu,
                             const BackwardKernel &kernel,
                             const AttentionSpec &spec, const ProblemSize &size,
                             const ForwardArgs &forwardArgs, Tensors &t,
                             Gradients &g, BackwardArgs &args,
                             std::string &error) {
  ElementType type = spec.dtype;
  size_t eb = elementTypeSize(type);
  g.gradOut = randomData(t.oL, type, t.gen);
  // Poison: a gradient element the kernels never write stays NaN and fails.
  g.dqBits.assign(t.qL.count(), poisonBits(type));
  g.dkBits.assign(t.kL.count(), poisonBits(type));
  g.dvBits.assign(t.vL.count(), poisonBits(type));
  int64_t workspaceBytes =
      kernel.workspaceBytes(size.batch, size.queryHeads, size.queryLen);
  if (workspaceBytes < 0) {
    error = "the backward's workspace is too large for this problem";
    return false;
  }
  if (!allocate(cu, g.gradOutBuffer, t.oL.count() * eb, error) ||
      !allocate(cu, g.dqBuffer, t.qL.count() * eb, error) ||
      !allocate(cu, g.dkBuffer, t.kL.count() * eb, error) ||
      !allocate(cu, g.dvBuffer, t.vL.count() * eb, error) ||
      !allocate(cu, g.workspace, workspaceBytes, error) ||
      !upload(cu, g.gradOutBuffer, g.gradOut.bits.data(), error) ||
      !poison(cu, type, g, error))
    return false;
  args.forward = forwardArgs;
  args.gradOut = g.gradOutBuffer.ptr;
  args.dq = g.dqBuffer.ptr;
  args.dk = g.dkBuffer.ptr;
  args.dv = g.dvBuffer.ptr;
  // Each gradient in the layout of its tensor (--layout).
  std::copy(t.oL.stride, t.oL.stride + 3, args.gradOutStride);
  std::copy(t.qL.stride, t.qL.stride + 3, args.dqStride);
  std::copy(t.kL.stride, t.kL.stride + 3, args.dkStride);
  std::copy(t.vL.stride, t.vL.stride + 3, args.dvStride);
  args.workspace = g.workspace.ptr;
  args.deterministic = o.deterministic;
  return true;
}

/// Runs the backward once, waits for it, and downloads dQ, dK and dV into
/// `g` (the stored bits and the logical values).
static bool runBackwardOnce(const BackwardKernel &kernel,
                            const BackwardArgs &args, ElementType type,
                            const Tensors &t, Gradients &g,
                            std::string &error) {
  Driver &cu = kernel.driver();
  if (!kernel.backward(args, nullptr, error))
    return false;
  if (CUresult r = cu.cuCtxSynchronize()) {
    error = cu.describe(r, ("running " + kernel.manifest().kernelName).c_str());
    return false;
  }
  if (!download(cu, g.dqBits.data(), g.dqBuffer, error) ||
      !download(cu, g.dkBits.data(), g.dkBuffer, error) ||
      !download(cu, g.dvBits.data(), g.dvBuffer, error))
    return false;
  g.gradQuery = logicalValues(t.qL, type, g.dqBits);
  g.gradKey = logicalValues(t.kL, type, g.dkBits);
  g.gradValue = logicalValues(t.vL, type, g.dvBits);
  return true;
}

/// Runs of the deterministic mode compared bit for bit (the first one
/// included).
constexpr int kDeterministicRuns = 10;

/// --deterministic: runs the backward kDeterministicRuns - 1 more times on the
/// inputs of the first run, each on freshly poisoned gradients and
/// workspace (the runtime zeroes what must start at zero), and compares dQ,
/// dK and dV bit for bit with the first run's, which `g` holds. Prints one
/// line; kPass, kMismatch if any run differs, or the exit code of a
/// failure.
static int checkDeterministic(const BackwardKernel &kernel,
                              const BackwardArgs &args, ElementType type,
                              const Tensors &t, Gradients &g) {
  std::string error;
  const std::vector<uint16_t> dq = g.dqBits, dk = g.dkBits, dv = g.dvBits;
  auto differing = [](const std::vector<uint16_t> &a,
                      const std::vector<uint16_t> &b) {
    int64_t n = 0;
    for (size_t i = 0; i < a.size(); ++i)
      n += a[i] != b[i];
    return n;
  };
  for (int run = 2; run <= kDeterministicRuns; ++run) {
    if (!poison(kernel.driver(), type, g, error) ||
        !runBackwardOnce(kernel, args, type, t, g, error))
      return fail(error, kMismatch);
    std::string line;
    for (auto [name, first, now] : {std::make_tuple("dQ", &dq, &g.dqBits),
                                    std::make_tuple("dK", &dk, &g.dkBits),
                                    std::make_tuple("dV", &dv, &g.dvBits)})
      if (int64_t n = differing(*first, *now))
        line += std::string(line.empty() ? "deterministic: " : "; ") + name +
                " differs in run " + std::to_string(run) + " (" +
                std::to_string(n) + " elements)";
    if (!line.empty()) {
      std::cout << line << "\n";
      return kMismatch;
    }
  }
  std::cout << "deterministic: dQ, dK, dV bit-identical over "
            << kDeterministicRuns << " runs\n";
  return kPass;
}

/// What the deterministic mode is weighed against: the backward a user gets
/// without --deterministic, fa_bwd_X beside the forward fa_fwd_X (the
/// `_det` kernel's own default launch can be slower: its blocks are
/// ordered for the turns); null if there is none, or it is `given`.
static std::unique_ptr<BackwardKernel>
loadDefaultBackward(const Options &o, const Kernel &forward,
                    const BackwardKernel &given) {
  std::string name = abi::backwardKernelNameOf(forward.manifest().kernelName);
  if (name == given.manifest().kernelName)
    return nullptr;
  std::string error;
  bool noDevice = false;
  return BackwardKernel::load(directoryOf(o.kernel) + "/" + name + ".json",
                              error, noDevice);
}

/// --bench with --deterministic: times the default backward (fa_bwd_X, or
/// the kernel's default launch) and the deterministic mode, alternating
/// per iteration (and which goes first, so that neither always follows the
/// other), over the same input sets (one workspace layout serves both),
/// and prints the medians and their ratio. kPass, or the exit code.
static int benchBothModes(const Options &o, const Kernel &forward,
                          const BackwardKernel &backward,
                          const std::vector<BackwardArgs> &rotation) {
  Driver &cu = backward.driver();
  std::unique_ptr<BackwardKernel> other = loadDefaultBackward(o, forward, backward);
  const BackwardKernel &usual = other ? *other : backward;
  std::string error;
  CUevent events[3];
  for (CUevent &e : events)
    cu.cuEventCreate(&e, 0);
  std::vector<float> times[2]; // default, deterministic
  CUresult r = 0;
  for (int64_t i = -10; i < o.benchIters && !r && error.empty(); ++i) {
    // The first ten iterations warm up, untimed.
    BackwardArgs a = rotation[(i + 10) % rotation.size()];
    bool deterministicFirst = (i + 10) % 2;
    cu.cuEventRecord(events[0], nullptr);
    for (int k = 0; k < 2 && error.empty(); ++k) {
      a.deterministic = deterministicFirst == (k == 0);
      if ((a.deterministic ? backward : usual).backward(a, nullptr, error))
        cu.cuEventRecord(events[k + 1], nullptr);
    }
    if (!error.empty() || (r = cu.cuEventSynchronize(events[2])) || i < 0)
      continue;
    float first = 0, second = 0;
    cu.cuEventElapsedTime(&first, events[0], events[1]);
    cu.cuEventElapsedTime(&second, events[1], events[2]);
    times[deterministicFirst ? 1 : 0].push_back(first);
    times[deterministicFirst ? 0 : 1].push_back(second);
  }
  for (CUevent &e : events)
    cu.cuEventDestroy(e);
  if (r)
    return fail(cu.describe(r, "timing"), kMismatch);
  if (!error.empty())
    return fail(error, kMismatch);
  double x = median(times[0]), y = median(times[1]);
  char line[320];
  std::snprintf(line, sizeof(line),
                "bench: backward default (%s) %.4f ms, deterministic %.4f ms "
                "(Y/X = %.3f)\n",
                usual.manifest().kernelName.c_str(), x, y, y / x);
  std::cout << line;
  return kPass;
}

/// --bench with --bwd: times o.benchIters iterations of the forward and
/// the backward with CUDA events, and prints the median of both together
/// and of the backward alone. kPass, or the exit code.
static int runBackwardBench(const Options &o, const Kernel &forward,
                            const BackwardKernel &backward,
                            const AttentionSpec &spec, const ProblemSize &size,
                            const BackwardArgs &args, const Tensors &t,
                            const Gradients &g) {
  Driver &cu = backward.driver();
  std::string error;
  size_t eb = elementTypeSize(spec.dtype);
  size_t setBytes =
      2 * (t.qL.count() + t.kL.count() + t.vL.count() + t.oL.count()) * eb +
      g.workspace.bytes;
  std::vector<std::unique_ptr<DeviceBuffer>> extra;
  std::vector<BackwardArgs> rotation = {args};
  for (int64_t s = 1, sets = benchSets(setBytes); s < sets; ++s) {
    BackwardArgs a = args;
    ForwardArgs &f = a.forward;
    // Copies of the real inputs (timing never runs on zeros); outputs and
    // the workspace are written before they are read.
    if (!copyBuffers(
            cu,
            {{&f.q, t.dq.bytes, t.q.bits.data()},
             {&f.k, t.dk.bytes, t.k.bits.data()},
             {&f.v, t.dv.bytes, t.v.bits.data()},
             {&f.o, t.dout.bytes, nullptr},
             {&f.lse, t.dlse.bytes, nullptr},
             {&a.gradOut, g.gradOutBuffer.bytes, g.gradOut.bits.data()},
             {&a.dq, g.dqBuffer.bytes, nullptr},
             {&a.dk, g.dkBuffer.bytes, nullptr},
             {&a.dv, g.dvBuffer.bytes, nullptr},
             {&a.workspace, g.workspace.bytes, nullptr}},
            extra, error))
      return fail(error, kMismatch);
    rotation.push_back(a);
  }
  CUevent start, middle, stop;
  cu.cuEventCreate(&start, 0);
  cu.cuEventCreate(&middle, 0);
  cu.cuEventCreate(&stop, 0);
  std::vector<float> both, alone;
  CUresult r = 0;
  for (int64_t i = -10; i < o.benchIters && !r && error.empty(); ++i) {
    // The first ten iterations warm up, untimed.
    const BackwardArgs &a = rotation[(i + 10) % rotation.size()];
    cu.cuEventRecord(start, nullptr);
    if (!forward.forward(a.forward, nullptr, error))
      break;
    cu.cuEventRecord(middle, nullptr);
    if (!backward.backward(a, nullptr, error))
      break;
    cu.cuEventRecord(stop, nullptr);
    if ((r = cu.cuEventSynchronize(stop)) || i < 0)
      continue;
    float total = 0, tail = 0;
    cu.cuEventElapsedTime(&total, start, stop);
    cu.cuEventElapsedTime(&tail, middle, stop);
    both.push_back(total);
    alone.push_back(tail);
  }
  cu.cuEventDestroy(start);
  cu.cuEventDestroy(middle);
  cu.cuEventDestroy(stop);
  if (r)
    return fail(cu.describe(r, "timing"), kMismatch);
  if (!error.empty())
    return fail(error, kMismatch);
  // FlashAttention's convention: the backward's five matmuls (S again, dV,
  // dP, dK, dQ) against the forward's two make 2.5 times its FLOPs.
  double flops = forwardFlops(spec, size);
  double msBoth = median(both), msAlone = median(alone);
  char line[320];
  std::snprintf(line, sizeof(line),
                "bench: median %.4f ms forward+backward over %lld iterations "
                "(%lld input sets), %.1f TFLOP/s\n"
                "bench: median %.4f ms backward alone, %.1f TFLOP/s\n",
                msBoth, static_cast<long long>(o.benchIters),
                static_cast<long long>(rotation.size()),
                3.5 * flops / (msBoth * 1e-3) / 1e12, msAlone,
                2.5 * flops / (msAlone * 1e-3) / 1e12);
  std::cout << line;
  if (o.deterministic)
    return benchBothModes(o, forward, backward, rotation);
  return kPass;
}

/// --dump DIR with --bwd: dO, dQ, dK and dV as .npy (logical [B, H, S, D]
/// order, f32), beside the forward's tensors. kPass, or the exit code.
static int writeGradientDump(const std::string &dir, const Tensors &t,
                             const Gradients &g) {
  auto shape = [](const Layout &l) {
    return std::vector<int64_t>{l.batch, l.heads, l.seq, l.width};
  };
  std::string e;
  bool ok = writeNpyF32(dir + "/do.npy", shape(t.oL), g.gradOut.logical, e) &&
            writeNpyF32(dir + "/dq.npy", shape(t.qL), g.gradQuery, e) &&
            writeNpyF32(dir + "/dk.npy", shape(t.kL), g.gradKey, e) &&
            writeNpyF32(dir + "/dv.npy", shape(t.vL), g.gradValue, e);
  return ok ? kPass : fail(e, kBadInput);
}

int fa::cudarun::runBackward(const Options &o, const Kernel &forward,
                             const BackwardKernel &backward,
                             const AttentionSpec &spec, const ProblemSize &size,
                             const ForwardArgs &forwardArgs, Tensors &t,
                             bool &pass) {
  Driver &cu = backward.driver();
  std::string error;
  Gradients g;
  BackwardArgs args;
  if (!prepareGradients(o, cu, backward, spec, size, forwardArgs, t, g, args,
                        error) ||
      !runBackwardOnce(backward, args, spec.dtype, t, g, error))
    return fail(error, kMismatch);

  const BackwardManifest &m = backward.manifest();
  std::cout << "fa-run: backward kernel=" << m.kernelName
            << " registers=" << backward.registers(BackwardStep::Preprocess)
            << "/" << backward.registers(BackwardStep::Main) << "/"
            << backward.registers(BackwardStep::Postprocess)
            << " (preprocess/main/postprocess) workspace=" << g.workspace.bytes
            << (o.deterministic ? " mode=deterministic" : "")
            << (m.negativeControl != "none"
                    ? " negative-control=" + m.negativeControl
                    : std::string())
            << "\n";
  if (o.verify) {
    ref::Problem problem = makeProblem(spec, size, t.alibiSlopes);
    addVariant(problem, m.variant, t);
    BackwardData data{t.q.logical, t.k.logical, t.v.logical, g.gradOut.logical,
                      g.gradQuery, g.gradKey,   g.gradValue};
    VerifyReport report = verifyBackward(spec.dtype, problem, data);
    std::cout << "backward:\n" << report.format() << "\n";
    pass &= report.pass();
  }
  if (o.deterministic)
    if (int code = checkDeterministic(backward, args, spec.dtype, t, g);
        code != kPass)
      return code;
  if (!o.dump.empty())
    if (int code = writeGradientDump(o.dump, t, g); code != kPass)
      return code;
  if (o.bench)
    return runBackwardBench(o, forward, backward, spec, size, args, t, g);
  return kPass;
}
