//===- BackwardKernel.cpp - the backward's three kernels ------------------===//
//
// Part of fa-mlir.
//
//===----------------------------------------------------------------------===//

#include "fa/runtime/BackwardKernel.h"

#include "KernelCommon.h"

#include "fa/runtime/Limits.h"

#include <sstream>

using namespace fa;
using namespace fa::cuda;
using abi::BackwardStep;

/// The steps in launch order.
static constexpr BackwardStep kSteps[] = {
    BackwardStep::Preprocess, BackwardStep::Main, BackwardStep::Postprocess};

/// Every backward kernel's parameters (a name in more than one step has
/// the same type in each).
static std::vector<abi::Param>
backwardTable(const std::vector<CaptureType> &captures) {
  std::vector<abi::Param> table;
  for (BackwardStep s : kSteps) {
    std::vector<abi::Param> step =
        abi::backwardKernelParams(s, /*alibi=*/true, /*tensorMaps=*/true, captures);
    table.insert(table.end(), step.begin(), step.end());
  }
  return table;
}

/// Reads steps[name] into `step`: its entry, block, shared memory and
/// parameters, each parameter of the ABI table's type.
static bool readStep(detail::ManifestReader &reader, const json::Value &steps,
                     const char *name, ElementType dtype,
                     const std::vector<CaptureType> &captures,
                     BackwardManifest::Step &step) {
  const json::Value *object = steps.get(name);
  if (!object || object->kind != json::Value::Object)
    return reader.fail(std::string("missing step \"") + name + "\"");
  reader.setContext(std::string("step \"") + name + "\": ");
  if (!reader.string(object, "entry", step.entry))
    return false;
  if (!limits::isPtxIdentifier(step.entry))
    return reader.fail("\"entry\" must be a PTX identifier, not \"" +
                       step.entry + "\"");
  auto known = [](const std::string &param) {
    int64_t unused;
    int capture, dimension;
    return abi::backwardParamValue(BackwardArgs(), 0, param, unused) ||
           abi::captureParamOf(param, capture, dimension);
  };
  bool main = std::string(name) == abi::backwardStepName(BackwardStep::Main);
  if (!reader.blockThreads(object, step.blockThreads) ||
      !reader.number(object, "dynamic_shared_memory",
                     step.dynamicSharedMemory) ||
      !reader.params(object, dtype, known, step.params) ||
      !reader.matchTable(step.params, dtype, backwardTable(captures)) ||
      !reader.matchCaptures(step.params,
                            main ? captures : std::vector<CaptureType>()))
    return false;
  reader.setContext("");
  return true;
}

bool BackwardManifest::read(const std::string &path, BackwardManifest &out,
                            std::string &error) {
  detail::ManifestReader reader(path, error);
  if (!reader.open() || !reader.expectKind("backward") ||
      !reader.readCommon(out))
    return false;
  // A kernel outside the backward's ranges would compute wrong gradients.
  std::string why;
  if (!checkBackwardSpec(out.spec, why))
    return reader.fail(why);
  const json::Value &root = reader.root();
  if (const json::Value *control = root.get("negative_control")) {
    if (control->kind != json::Value::String ||
        (control->string != "none" && control->string != "no-row-dot"))
      return reader.fail(
          "\"negative_control\" must be \"none\" or \"no-row-dot\"");
    out.negativeControl = control->string;
  }
  // Written only by compilers whose main kernel reads "deterministic";
  // older kernels take the flag but ignore it, so absent means false.
  if (const json::Value *mode = root.get("deterministic_mode")) {
    if (mode->kind != json::Value::Bool)
      return reader.fail("\"deterministic_mode\" must be true or false");
    out.deterministicMode = mode->boolean;
  }
  // The main step's grid is ceil(N / block_n) of the spec's block_n: a
  // tile that says otherwise is a kernel the grid would not cover.
  const json::Value *tile = root.get("tile");
  if (tile && tile->get("block_n")) {
    int64_t blockN = 0;
    if (!reader.number(tile, "block_n", blockN))
      return false;
    if (blockN != out.spec.blockN)
      return reader.fail("\"tile\"'s block_n (" + std::to_string(blockN) +
                         ") is not the spec's (" +
                         std::to_string(out.spec.blockN) + ")");
  }
  if (const json::Value *variant = root.get("variant")) {
    std::string reason;
    if (!parseVariant(*variant, out.variant, reason))
      return reader.fail(reason);
  }
  const json::Value *steps = root.get("steps");
  if (!steps || steps->kind != json::Value::Object)
    return reader.fail("missing object \"steps\"");
  for (const auto &entry : steps->object) {
    bool isStep = false;
    for (BackwardStep s : kSteps)
      isStep |= entry.first == abi::backwardStepName(s);
    if (!isStep)
      return reader.fail("unknown step \"" + entry.first +
                         "\" (the steps are preprocess, main and "
                         "postprocess)");
  }
  for (BackwardStep s : kSteps)
    if (!readStep(reader, *steps, abi::backwardStepName(s), out.spec.dtype,
                  out.variant.captures, out.steps[static_cast<size_t>(s)]))
      return false;
  return reader.locatePtx(out);
}

bool BackwardManifest::takesAlibiSlopes() const {
  for (const auto &param : step(BackwardStep::Main).params)
    if (param.first == "alibi_slopes")
      return true;
  return false;
}

std::array<int64_t, 3> BackwardManifest::grid(BackwardStep s,
                                              const ProblemSize &size) const {
  auto ceilDiv = [](int64_t a, int64_t b) { return a / b + (a % b != 0); };
  if (s == BackwardStep::Main)
    return {ceilDiv(size.keyLen, spec.blockN), size.kvHeads, size.batch};
  return {ceilDiv(size.queryLen, abi::kBackwardRowsPerBlock), size.queryHeads,
          size.batch};
}

bool BackwardManifest::checkLaunch(const ProblemSize &size,
                                   std::string &error) const {
  using detail::kMaxGridX, detail::kMaxGridYZ;
  for (BackwardStep s : kSteps) {
    std::array<int64_t, 3> g = grid(s, size);
    bool main = s == BackwardStep::Main;
    std::ostringstream os;
    if (g[0] > kMaxGridX)
      os << (main ? "n=" : "m=") << (main ? size.keyLen : size.queryLen)
         << " needs " << g[0] << " blocks of "
         << (main ? spec.blockN : abi::kBackwardRowsPerBlock)
         << (main ? " keys" : " query rows") << ", more than a launch's "
         << kMaxGridX << " (grid x)";
    else if (g[1] > kMaxGridYZ)
      os << (main ? "hkv=" : "hq=") << g[1] << " is more than a launch's "
         << kMaxGridYZ << " (grid y)";
    else if (g[2] > kMaxGridYZ)
      os << "b=" << g[2] << " is more than a launch's " << kMaxGridYZ
         << " (grid z)";
    if (!os.str().empty()) {
      error =
          os.str() + " in the backward's " + abi::backwardStepName(s) + " step";
      return false;
    }
  }
  return true;
}

std::unique_ptr<BackwardKernel>
BackwardKernel::load(const std::string &manifestPath, std::string &error,
                     bool &noDevice) {
  noDevice = false;
  std::unique_ptr<BackwardKernel> kernel(new BackwardKernel());
  if (!BackwardManifest::read(manifestPath, kernel->info, error))
    return nullptr;
  std::string ptx;
  if (!detail::readFile(kernel->info.ptxFile, ptx, error))
    return nullptr;
  kernel->cu = cuda::driver(error, noDevice);
  if (!kernel->cu)
    return nullptr;
  // One module, three entries.
  if (!detail::loadModule(*kernel->cu, ptx, kernel->module, error))
    return nullptr;
  for (size_t i = 0; i < kernel->functions.size(); ++i) {
    const BackwardManifest::Step &step = kernel->info.steps[i];
    if (!detail::loadFunction(*kernel->cu, kernel->module, step.entry,
                              step.dynamicSharedMemory, kernel->functions[i],
                              kernel->numRegisters[i], error))
      return nullptr;
  }
  return kernel;
}

BackwardKernel::~BackwardKernel() {
  if (module && cu)
    cu->cuModuleUnload(module);
}

int64_t BackwardKernel::workspaceBytes(int64_t batch, int64_t queryHeads,
                                       int64_t queryLen) const {
  // dq_acc is the largest part, and Q-sized: bounded like every tensor.
  if (limits::checkedElements(
          {batch, queryHeads, queryLen, info.spec.headDim}) < 0)
    return -1;
  return abi::BackwardWorkspace::of(batch, queryHeads, queryLen,
                                    info.spec.headDim)
      .bytes;
}

bool BackwardKernel::checkArgs(const BackwardArgs &a,
                               std::string &error) const {
  const ForwardArgs &f = a.forward;
  ProblemSize size{f.batch, f.queryHeads, f.kvHeads, f.queryLen, f.keyLen};
  if (!validateProblem(info.spec, size, error) ||
      !info.checkLaunch(size, error))
    return false;
  if (!f.q || !f.k || !f.v || !f.o || !f.lse || !a.gradOut || !a.dq || !a.dk ||
      !a.dv) {
    error = "null tensor pointer";
    return false;
  }
  ElementType dtype = info.spec.dtype;
  if (!detail::forwardTensorsAligned(f, dtype, error) ||
      !detail::isVectorAligned("do", a.gradOut, a.gradOutStride, dtype, error) ||
      !detail::isVectorAligned("dq", a.dq, a.dqStride, dtype, error) ||
      !detail::isVectorAligned("dk", a.dk, a.dkStride, dtype, error) ||
      !detail::isVectorAligned("dv", a.dv, a.dvStride, dtype, error))
    return false;
  if (!a.workspace) {
    error = "null workspace (the backward needs workspaceBytes() bytes of "
            "device memory)";
    return false;
  }
  // Its parts are placed at 256-byte offsets (abi::BackwardWorkspace) for
  // the kernels' vector accesses; cuMemAlloc's pointers are so aligned.
  if (a.workspace % 256) {
    error = "the workspace must be 256-byte aligned";
    return false;
  }
  // A kernel without the mode would ignore the flag and accumulate dQ in
  // whatever order its blocks finish: refuse rather than promise.
  if (a.deterministic && !info.deterministicMode) {
    error = "the backward kernel " + info.kernelName +
            " has no deterministic mode (its manifest lacks "
            "\"deterministic_mode\": true)";
    return false;
  }
  if (!detail::checkCaptures(info.variant, f.captures, error))
    return false;
  if (info.takesAlibiSlopes() && !f.alibiSlopes) {
    error = "the kernel takes ALiBi slopes; none given";
    return false;
  }
  return true;
}

/// The main step's TMA map `name` (sm_90a): Q, dO and dq_acc by block_m
/// rows, K and V by block_n; dq_acc is f32, [B, Hq, M, D] in the workspace.
static bool encodeBackwardMap(const Driver &d, const AttentionSpec &spec,
                              const BackwardArgs &a,
                              const abi::BackwardWorkspace &w,
                              const std::string &name,
                              detail::TensorMapStorage &map, std::string &error) {
  const ForwardArgs &f = a.forward;
  // dq_acc's strides as the kernel's own dq_acc_stride_* (the ABI table).
  int64_t dqAccStride[3];
  const char *dims[3] = {"b", "h", "s"};
  for (int i = 0; i < 3; ++i)
    abi::backwardParamValue(a, spec.headDim, std::string("dq_acc_stride_") + dims[i],
                            dqAccStride[i]);
  abi::TensorMapInfo t;
  abi::tensorMapOf(name, t);
  detail::TensorMapSource source;
  source.tensor = t.tensor;
  source.f32 = t.f32;
  source.batch = f.batch;
  source.rows = t.queryRows ? f.queryLen : f.keyLen;
  source.heads = t.queryRows ? f.queryHeads : f.kvHeads;
  source.boxRows = t.queryRows ? spec.blockM : spec.blockN;
  source.width = spec.headDim;
  if (t.tensor == "q") {
    source.base = f.q;
    source.stride = f.qStride;
  } else if (t.tensor == "k") {
    source.base = f.k;
    source.stride = f.kStride;
  } else if (t.tensor == "v") {
    source.base = f.v;
    source.stride = f.vStride;
    source.width = spec.valueDim;
  } else if (t.tensor == "do") {
    source.base = a.gradOut;
    source.stride = a.gradOutStride;
    source.width = spec.valueDim;
  } else {
    source.base = a.workspace + w.dqAccOffset;
    source.stride = dqAccStride;
  }
  return detail::encodeTensorMap(d, spec.dtype, source, map, error);
}

bool BackwardKernel::backward(const BackwardArgs &a, CUstream stream,
                              std::string &error) const {
  cuda::makeCurrent(*cu);
  if (!checkArgs(a, error))
    return false;
  const ForwardArgs &f = a.forward;
  int64_t headDim = info.spec.headDim;
  abi::BackwardWorkspace w =
      abi::BackwardWorkspace::of(f.batch, f.queryHeads, f.queryLen, headDim);
  // The main step adds each KV block's share of dQ into dq_acc, and the
  // deterministic mode counts the KV blocks done per Q block in
  // dq_semaphore: both start at zero on every call, on the stream, ahead
  // of the launches that read them (one contiguous range, in words).
  CUresult r =
      cu->cuMemsetD32Async(a.workspace + w.zeroOffset, 0,
                           static_cast<size_t>(w.zeroBytes / 4), stream);
  if (r) {
    error = cu->describe(r, "zeroing the dQ accumulator and semaphores");
    return false;
  }
  // The names were checked against the ABI table when the manifest was
  // read.
  auto valueOf = [&](size_t, const std::string &name) {
    int64_t value = 0;
    if (!abi::backwardParamValue(a, headDim, name, value))
      value = detail::captureParamValue(f, info.variant, name);
    return value;
  };
  auto mapOf = [&](size_t, const std::string &name,
                   detail::TensorMapStorage &map, std::string &why) {
    return encodeBackwardMap(*cu, info.spec, a, w, name, map, why);
  };
  ProblemSize size{f.batch, f.queryHeads, f.kvHeads, f.queryLen, f.keyLen};
  for (BackwardStep s : kSteps) {
    const BackwardManifest::Step &step = info.step(s);
    detail::LaunchParams launch;
    if (!launch.pack(step.params, valueOf, mapOf, error))
      return false;
    std::array<int64_t, 3> g = info.grid(s, size);
    r = cu->cuLaunchKernel(
        functions[static_cast<size_t>(s)], static_cast<unsigned>(g[0]),
        static_cast<unsigned>(g[1]), static_cast<unsigned>(g[2]),
        static_cast<unsigned>(step.blockThreads), 1, 1,
        static_cast<unsigned>(step.dynamicSharedMemory), stream, launch.data(),
        nullptr);
    if (r) {
      error = cu->describe(r, ("launching " + step.entry).c_str());
      return false;
    }
  }
  return true;
}
