//===- Kernel.cpp - a generated kernel: manifest, load, launch ------------===//
//
// Part of fa-mlir.
//
//===----------------------------------------------------------------------===//

#include "fa/runtime/Kernel.h"

#include "fa/runtime/Json.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <fstream>
#include <sstream>

using namespace fa;
using namespace fa::cuda;

static bool readFile(const std::string &path, std::string &out,
                     std::string &error) {
  std::ifstream file(path, std::ios::binary);
  if (!file) {
    error = "cannot read " + path;
    return false;
  }
  std::ostringstream os;
  os << file.rdbuf();
  out = os.str();
  return true;
}

static std::string directoryOf(const std::string &path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? "." : path.substr(0, slash);
}

bool Manifest::read(const std::string &path, Manifest &out,
                    std::string &error) {
  std::string text;
  if (!readFile(path, text, error))
    return false;
  json::Value root;
  if (!json::parse(text, root, error)) {
    error = path + ": bad JSON: " + error;
    return false;
  }
  auto string = [&](const char *key, std::string &value) {
    const json::Value *v = root.get(key);
    if (!v || v->kind != json::Value::String) {
      error = path + ": missing string \"" + key + "\"";
      return false;
    }
    value = v->string;
    return true;
  };
  // Every number the runtime reads is a small non-negative integer; any
  // other (a fraction, 1e300) is refused before a cast could wrap it.
  auto integer = [&](const json::Value *v, const char *key, int64_t max,
                     int64_t &value) {
    if (!v || v->kind != json::Value::Number) {
      error = path + ": missing number \"" + key + "\"";
      return false;
    }
    if (!(v->number >= 0 && v->number <= static_cast<double>(max)) ||
        v->number != std::floor(v->number)) {
      error = path + ": \"" + key + "\" must be an integer in [0, " +
              std::to_string(max) + "]";
      return false;
    }
    value = static_cast<int64_t>(v->number);
    return true;
  };
  auto number = [&](const json::Value *object, const char *key,
                    int64_t &value) {
    return integer(object ? object->get(key) : nullptr, key, INT32_MAX, value);
  };
  std::string specText;
  if (!string("kernel", out.kernelName) || !string("ptx", out.ptxFile) ||
      !string("target", out.target) || !string("spec", specText) ||
      !string("generator", out.generator))
    return false;
  if (!parseSpec(specText, out.spec, error)) {
    error = path + ": bad spec: " + error;
    return false;
  }
  const json::Value *tile = root.get("tile");
  const json::Value *block = root.get("block");
  if (!number(tile, "stages", out.stages) || !number(tile, "warps", out.warps) ||
      !number(&root, "dynamic_shared_memory", out.dynamicSharedMemory))
    return false;
  if (const json::Value *scheduler = root.get("scheduler")) {
    if (scheduler->kind != json::Value::String ||
        !abi::tileSchedulerOf(scheduler->string, out.scheduler)) {
      error = path + ": \"scheduler\" must be \"per_block\" or \"persistent\"";
      return false;
    }
  }
  if (!block || block->kind != json::Value::Array || block->array.empty()) {
    error = path + ": missing \"block\"";
    return false;
  }
  if (!integer(&block->array[0], "block", 1024, out.blockThreads))
    return false;
  const json::Value *params = root.get("params");
  if (!params || params->kind != json::Value::Array) {
    error = path + ": missing \"params\"";
    return false;
  }
  for (const json::Value &p : params->array) {
    const json::Value *name = p.get("name"), *type = p.get("type");
    if (!name || !type || name->kind != json::Value::String ||
        type->kind != json::Value::String) {
      error = path + ": each of \"params\" needs a string name and type";
      return false;
    }
    int64_t unused;
    if (!abi::forwardParamValue(ForwardArgs(), name->string, unused)) {
      error = path + ": unknown kernel parameter \"" + name->string +
              "\" (this runtime is older than the kernel)";
      return false;
    }
    const std::string &t = type->string;
    abi::TensorMapInfo mapInfo;
    bool isMap = abi::tensorMapOf(name->string, mapInfo);
    if (isMap != (t == "tensormap")) {
      error = path + ": kernel parameter \"" + name->string + "\" has type \"" +
              t + "\"" + (isMap ? " (a tensormap expected)" : "");
      return false;
    }
    if (!isMap && t != "i64" && t != "memref<?xf32>" &&
        t != std::string("memref<?x") + elementTypeName(out.spec.dtype) + ">") {
      error = path + ": kernel parameter \"" + name->string +
              "\" has type \"" + t + "\" (i64 or a memref of f32 or the "
              "kernel's element type expected)";
      return false;
    }
    out.params.push_back({name->string, t});
  }
  out.ptxFile = directoryOf(path) + "/" + out.ptxFile;
  // A manifest is a promise of its PTX: say so now, not at load time.
  if (!std::ifstream(out.ptxFile, std::ios::binary)) {
    error = path + ": its PTX file " + out.ptxFile + " cannot be read";
    return false;
  }
  return true;
}

bool Manifest::checkLaunch(const ProblemSize &size,
                           std::string &error) const {
  constexpr int64_t kMaxGridX = INT32_MAX, kMaxGridYZ = 65535;
  int64_t blocks = queryBlocks(size.queryLen);
  std::ostringstream os;
  if (scheduler == abi::TileScheduler::Persistent) {
    // The kernel decodes its tiles in 32 bits (GridCoords::forTile).
    if (blocks * size.queryHeads * size.batch > INT32_MAX)
      os << "m=" << size.queryLen << ", hq=" << size.queryHeads
         << ", b=" << size.batch << " make "
         << blocks * size.queryHeads * size.batch
         << " tiles, more than a persistent kernel's " << INT32_MAX;
  } else if (blocks > kMaxGridX)
    os << "m=" << size.queryLen << " needs " << blocks
       << " query blocks, more than a launch's " << kMaxGridX;
  else if (size.queryHeads > kMaxGridYZ)
    os << "hq=" << size.queryHeads << " is more than a launch's "
       << kMaxGridYZ << " (grid y)";
  else if (size.batch > kMaxGridYZ)
    os << "b=" << size.batch << " is more than a launch's " << kMaxGridYZ
       << " (grid z)";
  error = os.str();
  return error.empty();
}

bool Manifest::takesAlibiSlopes() const {
  for (const auto &param : params)
    if (param.first == "alibi_slopes")
      return true;
  return false;
}

std::unique_ptr<Kernel> Kernel::load(const std::string &manifestPath,
                                     std::string &error, bool &noDevice) {
  noDevice = false;
  std::unique_ptr<Kernel> kernel(new Kernel());
  if (!Manifest::read(manifestPath, kernel->info, error))
    return nullptr;
  std::string ptx;
  if (!readFile(kernel->info.ptxFile, ptx, error))
    return nullptr;
  kernel->cu = cuda::driver(error, noDevice);
  if (!kernel->cu)
    return nullptr;
  Driver &d = *kernel->cu;
  char infoLog[8192] = {0}, errorLog[8192] = {0};
  int options[] = {kJitInfoLogBuffer, kJitInfoLogBufferSize,
                   kJitErrorLogBuffer, kJitErrorLogBufferSize};
  void *values[] = {infoLog, reinterpret_cast<void *>(sizeof(infoLog)),
                    errorLog, reinterpret_cast<void *>(sizeof(errorLog))};
  CUresult r = d.cuModuleLoadDataEx(&kernel->module, ptx.c_str(), 4, options,
                                    values);
  if (r) {
    error = d.describe(r, "loading the PTX") + (errorLog[0] ? ": " : "") +
            errorLog;
    return nullptr;
  }
  if ((r = d.cuModuleGetFunction(&kernel->function, kernel->module,
                                 kernel->info.kernelName.c_str()))) {
    error = d.describe(r, ("finding kernel " + kernel->info.kernelName).c_str());
    return nullptr;
  }
  // More than 48 KiB of dynamic shared memory must be asked for.
  if ((r = d.cuFuncSetAttribute(kernel->function,
                                kFuncAttributeMaxDynamicSharedBytes,
                                static_cast<int>(kernel->info.dynamicSharedMemory)))) {
    error = d.describe(r, "raising the dynamic shared memory limit");
    return nullptr;
  }
  d.cuFuncGetAttribute(&kernel->numRegisters, kFuncAttributeNumRegs,
                       kernel->function);
  if (kernel->info.scheduler == abi::TileScheduler::Persistent) {
    int sms = 0, perSM = 0;
    if ((r = d.cuDeviceGetAttribute(&sms, kDeviceAttributeMultiprocessorCount,
                                    d.device)) ||
        (r = d.cuOccupancyMaxActiveBlocksPerMultiprocessor(
             &perSM, kernel->function,
             static_cast<int>(kernel->info.blockThreads),
             static_cast<size_t>(kernel->info.dynamicSharedMemory)))) {
      error = d.describe(r, "sizing the persistent grid");
      return nullptr;
    }
    if (perSM < 1) {
      error = kernel->info.kernelName + ": no block of " +
              std::to_string(kernel->info.blockThreads) +
              " threads fits an SM (registers or shared memory)";
      return nullptr;
    }
    kernel->residentBlocks = int64_t(sms) * perSM;
  }
  return kernel;
}

Kernel::~Kernel() {
  if (module && cu)
    cu->cuModuleUnload(module);
}

namespace {
/// A CUtensorMap's storage: 128 bytes, 64-byte aligned (cuda.h).
struct alignas(abi::kTensorMapAlignment) TensorMapStorage {
  uint64_t words[abi::kTensorMapBytes / 8];
};

/// cuda.h's CUtensorMapDataType / Swizzle / L2promotion values we use.
constexpr int kTensorMapFloat16 = 6, kTensorMapBFloat16 = 9;
constexpr int kSwizzle128B = 3, kL2Promotion256B = 3;
} // namespace

/// The TMA map of tensor-map parameter `name` for one launch: the tensor
/// as 4-D [B, H, S, D] through its strides, boxes of one 128-byte panel
/// row by block_m (Q) or block_n (K, V) rows, 128-byte swizzle, zeros out
/// of bounds (KernelAbi.h's TensorMapInfo).
static bool encodeTensorMap(const Driver &d, const Manifest &info,
                            const ForwardArgs &a, const std::string &name,
                            TensorMapStorage &map, std::string &error) {
  abi::TensorMapInfo t;
  abi::tensorMapOf(name, t);
  const AttentionSpec &spec = info.spec;
  bool isQuery = t.tensor == "q", isValue = t.tensor == "v";
  CUdeviceptr base = isQuery ? a.q : isValue ? a.v : a.k;
  const int64_t *stride = isQuery ? a.qStride : isValue ? a.vStride : a.kStride;
  int64_t width = isValue ? spec.valueDim : spec.headDim;
  int64_t elementBytes = 2;
  uint64_t dims[4] = {uint64_t(width),
                      uint64_t(isQuery ? a.queryLen : a.keyLen),
                      uint64_t(isQuery ? a.queryHeads : a.kvHeads),
                      uint64_t(a.batch)};
  uint64_t strides[3] = {uint64_t(stride[2] * elementBytes),
                         uint64_t(stride[1] * elementBytes),
                         uint64_t(stride[0] * elementBytes)};
  for (uint64_t bytes : strides)
    if (bytes % 16) {
      error = "TMA needs " + t.tensor + "'s strides to be multiples of 16 "
              "bytes (8 elements), got " + std::to_string(stride[2]) + ", " +
              std::to_string(stride[1]) + ", " + std::to_string(stride[0]);
      return false;
    }
  if (base % 16) {
    error = "TMA needs " + t.tensor + " 16-byte aligned";
    return false;
  }
  unsigned box[4] = {unsigned(abi::kTensorMapPanelBytes / elementBytes),
                     unsigned(t.queryRows ? spec.blockM : spec.blockN), 1, 1};
  unsigned elementStrides[4] = {1, 1, 1, 1};
  int dataType = spec.dtype == ElementType::F16 ? kTensorMapFloat16
                                                : kTensorMapBFloat16;
  CUresult r = d.cuTensorMapEncodeTiled(
      &map, dataType, 4, reinterpret_cast<void *>(base), dims, strides, box,
      elementStrides, /*interleave=*/0, kSwizzle128B, kL2Promotion256B,
      /*oobFill=*/0);
  if (r) {
    error = d.describe(r, ("encoding the tensor map of " + t.tensor).c_str());
    return false;
  }
  return true;
}

bool Kernel::forward(const ForwardArgs &a, CUstream stream,
                     std::string &error) const {
  if (a.batch < 1 || a.queryHeads < 1 || a.kvHeads < 1 || a.queryLen < 1 ||
      a.keyLen < 1 || a.queryHeads % a.kvHeads) {
    error = "bad problem size (need sizes >= 1 and hq a multiple of hkv)";
    return false;
  }
  ProblemSize size{a.batch, a.queryHeads, a.kvHeads, a.queryLen, a.keyLen};
  if (!validateProblem(info.spec, size, error) ||
      !info.checkLaunch(size, error))
    return false;
  if (!a.q || !a.k || !a.v || !a.o || !a.lse) {
    error = "null tensor pointer";
    return false;
  }
  if (info.takesAlibiSlopes() && !a.alibiSlopes) {
    error = "the kernel takes ALiBi slopes; none given";
    return false;
  }
  // The launch words, in the manifest's order (the ABI table's, KernelAbi.h):
  // a memref<?xT> is MLIR's descriptor (allocated, aligned, offset, size,
  // stride), an i64 one word. The kernel indexes with its own offsets, so
  // a buffer's size is informational.
  // `words` is reserved up front, so pointers into it stay valid.
  std::vector<int64_t> words;
  words.reserve(5 * info.params.size());
  std::vector<TensorMapStorage> maps(info.params.size());
  std::vector<void *> launch;
  for (size_t i = 0; i < info.params.size(); ++i) {
    const auto &[name, type] = info.params[i];
    if (type == "tensormap") {
      if (!encodeTensorMap(*cu, info, a, name, maps[i], error))
        return false;
      launch.push_back(&maps[i]);
      continue;
    }
    int64_t value = 0;
    abi::forwardParamValue(a, name, value); // names were checked on read
    size_t first = words.size();
    if (type.rfind("memref", 0) == 0)
      words.insert(words.end(), {value, value, 0, INT64_MAX, 1});
    else
      words.push_back(value);
    for (size_t w = first; w < words.size(); ++w)
      launch.push_back(&words[w]);
  }
  int64_t queryBlocks = info.queryBlocks(a.queryLen);
  unsigned grid[3] = {static_cast<unsigned>(queryBlocks),
                      static_cast<unsigned>(a.queryHeads),
                      static_cast<unsigned>(a.batch)};
  if (info.scheduler == abi::TileScheduler::Persistent) {
    int64_t tiles = queryBlocks * a.queryHeads * a.batch;
    grid[0] = static_cast<unsigned>(std::min(tiles, residentBlocks));
    grid[1] = grid[2] = 1;
  }
  CUresult r = cu->cuLaunchKernel(
      function, grid[0], grid[1], grid[2],
      static_cast<unsigned>(info.blockThreads),
      1, 1, static_cast<unsigned>(info.dynamicSharedMemory), stream,
      launch.data(), nullptr);
  if (r) {
    error = cu->describe(r, ("launching " + info.kernelName).c_str());
    return false;
  }
  return true;
}
