//===- Kernel.cpp - a generated kernel: manifest, load, launch ------------===//
//
// Part of fa-mlir.
//
//===----------------------------------------------------------------------===//

#include "fa/runtime/Kernel.h"

#include "KernelCommon.h"

#include <algorithm>
#include <sstream>

using namespace fa;
using namespace fa::cuda;
using detail::TensorMapStorage;

bool Manifest::read(const std::string &path, Manifest &out,
                    std::string &error) {
  detail::ManifestReader reader(path, error);
  if (!reader.open() || !reader.expectKind("forward") ||
      !reader.readCommon(out))
    return false;
  const json::Value &root = reader.root();
  if (!reader.number(&root, "dynamic_shared_memory", out.dynamicSharedMemory))
    return false;
  if (const json::Value *scheduler = root.get("scheduler")) {
    if (scheduler->kind != json::Value::String ||
        !abi::tileSchedulerOf(scheduler->string, out.scheduler))
      return reader.fail(
          "\"scheduler\" must be \"per_block\" or \"persistent\"");
  }
  if (const json::Value *blocks = root.get("block_sparse")) {
    if (!reader.number(blocks, "q_block", out.sparseQBlock) ||
        !reader.number(blocks, "kv_block", out.sparseKvBlock))
      return false;
    auto powerOfTwo = [](int64_t v) { return v >= 16 && (v & (v - 1)) == 0; };
    if (!powerOfTwo(out.sparseQBlock) || !powerOfTwo(out.sparseKvBlock) ||
        out.sparseQBlock % out.spec.blockM || out.sparseKvBlock % out.spec.blockN)
      return reader.fail("\"block_sparse\" blocks must be powers of two from "
                         "16 that the tile divides");
  }
  if (const json::Value *variant = root.get("variant")) {
    std::string reason;
    if (!parseVariant(*variant, out.variant, reason))
      return reader.fail(reason);
  }
  auto known = [](const std::string &name) {
    int64_t unused;
    return abi::forwardParamValue(ForwardArgs(), name, unused);
  };
  if (!reader.blockThreads(&root, out.blockThreads) ||
      !reader.params(&root, out.spec.dtype, known, out.params) ||
      !reader.matchTable(out.params, out.spec.dtype,
                         abi::forwardKernelParams(/*alibi=*/true,
                                                  /*tensorMaps=*/true,
                                                  /*descale=*/true,
                                                  /*outputTensorMap=*/true,
                                                  out.variant.captures,
                                                  /*blockMask=*/true)))
    return false;
  if (!reader.matchCaptures(out.params, out.variant.captures))
    return false;
  if (out.takesParam("kv_indices") != out.blockSparse())
    return reader.fail("a block-sparse kernel states \"block_sparse\" and "
                       "takes the block mask's parameters; no other does");
  return reader.locatePtx(out);
}

bool Manifest::checkLaunch(const ProblemSize &size,
                           std::string &error) const {
  using detail::kMaxGridX, detail::kMaxGridYZ;
  // The reason is formatted only on failure: every launch comes through.
  auto refuse = [&](auto write) {
    std::ostringstream os;
    write(os);
    error = os.str();
    return false;
  };
  int64_t blocks = queryBlocks(size.queryLen);
  if (scheduler == abi::TileScheduler::Persistent) {
    // The kernel decodes its tiles in 32 bits (GridCoords::forTile).
    int64_t tiles = blocks * size.queryHeads * size.batch;
    if (tiles > INT32_MAX)
      return refuse([&](std::ostream &os) {
        os << "m=" << size.queryLen << ", hq=" << size.queryHeads
           << ", b=" << size.batch << " make " << tiles
           << " tiles, more than a persistent kernel's " << INT32_MAX;
      });
  } else if (blocks > kMaxGridX)
    return refuse([&](std::ostream &os) {
      os << "m=" << size.queryLen << " needs " << blocks
         << " query blocks, more than a launch's " << kMaxGridX;
    });
  else if (size.queryHeads > kMaxGridYZ)
    return refuse([&](std::ostream &os) {
      os << "hq=" << size.queryHeads << " is more than a launch's "
         << kMaxGridYZ << " (grid y)";
    });
  else if (size.batch > kMaxGridYZ)
    return refuse([&](std::ostream &os) {
      os << "b=" << size.batch << " is more than a launch's " << kMaxGridYZ
         << " (grid z)";
    });
  error.clear();
  return true;
}

bool Manifest::takesParam(const std::string &name) const {
  for (const auto &param : params)
    if (param.first == name)
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
  if (!detail::readFile(kernel->info.ptxFile, ptx, error))
    return nullptr;
  kernel->cu = cuda::driver(error, noDevice);
  if (!kernel->cu)
    return nullptr;
  Driver &d = *kernel->cu;
  if (!detail::loadModule(d, ptx, kernel->module, error) ||
      !detail::loadFunction(d, kernel->module, kernel->info.kernelName,
                            kernel->info.dynamicSharedMemory, kernel->function,
                            kernel->numRegisters, error))
    return nullptr;
  for (const auto &param : kernel->info.params) {
    kernel->paramRows.push_back(abi::forwardParamRow(param.first));
    int capture, dimension;
    bool floatScalar = abi::captureParamOf(param.first, capture, dimension) &&
                       dimension < 0 &&
                       kernel->info.variant.captures[capture].isScalar() &&
                       kernel->info.variant.captures[capture].isFloat();
    kernel->floatCaptureOf.push_back(floatScalar ? capture : -1);
  }
  kernel->mapCache = std::make_unique<detail::TensorMapCache>();
  if (kernel->info.scheduler == abi::TileScheduler::Persistent) {
    int sms = 0, perSM = 0;
    CUresult r;
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

/// The TMA map of tensor-map parameter `name`, the manifest's `index`th,
/// for one launch (KernelAbi.h's TensorMapInfo), from `cache` where the
/// tensor is the one it last saw.
static bool tensorMapOf(const Driver &d, const Manifest &info,
                        detail::TensorMapCache &cache, const ForwardArgs &a,
                        size_t index, const std::string &name,
                        TensorMapStorage &map, std::string &error) {
  abi::TensorMapInfo t;
  abi::tensorMapOf(name, t);
  const AttentionSpec &spec = info.spec;
  bool isQuery = t.tensor == "q", isValue = t.tensor == "v",
       isOutput = t.tensor == "o";
  detail::TensorMapSource source;
  source.tensor = t.tensor;
  source.base = isQuery ? a.q : isValue ? a.v : isOutput ? a.o : a.k;
  source.stride = isQuery    ? a.qStride
                  : isValue  ? a.vStride
                  : isOutput ? a.oStride
                             : a.kStride;
  source.width = isValue || isOutput ? spec.valueDim : spec.headDim;
  source.rows = t.queryRows ? a.queryLen : a.keyLen;
  source.heads = t.queryRows ? a.queryHeads : a.kvHeads;
  source.batch = a.batch;
  source.boxRows = t.warpgroupRows ? abi::kTensorMapWarpgroupRows
                   : t.queryRows   ? spec.blockM
                                   : spec.blockN;
  // O is of the kernel's output type (bf16 for e4m3), mapped as such.
  ElementType type = isOutput ? outputElementType(spec.dtype) : spec.dtype;
  return cache.get(d, type, index, source, map, error);
}

bool Manifest::checkBlockMask(const ForwardArgs &a, std::string &error) const {
  const ForwardArgs::BlockMask &m = a.blockMask;
  if (!blockSparse()) {
    if (m.kvNumBlocks || m.kvIndices || m.fullKvNumBlocks || m.fullKvIndices) {
      error = "a block mask was given to a kernel that is not block-sparse";
      return false;
    }
    return true;
  }
  auto blocks = [](int64_t len, int64_t size) { return (len + size - 1) / size; };
  std::ostringstream os;
  if (!m.kvNumBlocks || !m.kvIndices || !m.fullKvNumBlocks || !m.fullKvIndices)
    os << "the kernel is block-sparse: kv_num_blocks, kv_indices, "
          "full_kv_num_blocks and full_kv_indices must all be given";
  else if (m.qBlockSize != sparseQBlock || m.kvBlockSize != sparseKvBlock)
    os << "the block mask's blocks are " << m.qBlockSize << "x" << m.kvBlockSize
       << "; the kernel was built for " << sparseQBlock << "x"
       << sparseKvBlock;
  else if ((m.batch != 1 && m.batch != a.batch) ||
           (m.heads != 1 && m.heads != a.queryHeads))
    os << "the block mask's batch and heads must be 1 or the problem's (b="
       << a.batch << ", hq=" << a.queryHeads << "), got " << m.batch << " and "
       << m.heads;
  else if (m.qBlocks != blocks(a.queryLen, m.qBlockSize) ||
           m.kvBlocks != blocks(a.keyLen, m.kvBlockSize))
    os << "the block mask has " << m.qBlocks << "x" << m.kvBlocks
       << " blocks; m=" << a.queryLen << ", n=" << a.keyLen << " need "
       << blocks(a.queryLen, m.qBlockSize) << "x" << blocks(a.keyLen, m.kvBlockSize);
  error = os.str();
  return error.empty();
}

bool Kernel::forward(const ForwardArgs &a, CUstream stream,
                     std::string &error) const {
  cuda::makeCurrent(*cu);
  ProblemSize size{a.batch, a.queryHeads, a.kvHeads, a.queryLen, a.keyLen};
  if (!validateProblem(info.spec, size, error) ||
      !info.checkLaunch(size, error))
    return false;
  if (!a.q || !a.k || !a.v || !a.o || !a.lse) {
    error = "null tensor pointer";
    return false;
  }
  if (!detail::forwardTensorsAligned(a, info.spec.dtype, error))
    return false;
  if (info.takesAlibiSlopes() && !a.alibiSlopes) {
    error = "the kernel takes ALiBi slopes; none given";
    return false;
  }
  if (info.takesDescales()) {
    if (!a.qDescale || !a.kDescale || !a.vDescale) {
      error = "the kernel (f8e4m3fn) takes Q's, K's and V's descale "
              "factors; one or more is null";
      return false;
    }
    if (a.descaleStride[0] < 0 || a.descaleStride[1] < 0) {
      error = "descale strides must be >= 0 ({0, 0}: one factor per tensor; "
              "{Hkv, 1}: [B, Hkv])";
      return false;
    }
  }
  if (!detail::checkCaptures(info.variant, a.captures, error) ||
      !info.checkBlockMask(a, error))
    return false;
  // The launch words, in the manifest's order (the ABI table's,
  // KernelAbi.h); the names were checked when the manifest was read.
  detail::LaunchParams launch;
  auto valueOf = [&](size_t index, const std::string &) {
    // A float scalar capture is launched as its f32 bits.
    int capture = floatCaptureOf[index];
    return capture >= 0 ? abi::f32Bits(a.captures[capture].real)
                        : abi::forwardParamValueAt(paramRows[index], a);
  };
  auto mapOf = [&](size_t index, const std::string &name,
                   TensorMapStorage &map, std::string &why) {
    return tensorMapOf(*cu, info, *mapCache, a, index, name, map, why);
  };
  if (!launch.pack(info.params, valueOf, mapOf, error))
    return false;
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
