//===- KernelCommon.cpp - what forward and backward kernels share ---------===//
//
// Part of fa-mlir.
//
//===----------------------------------------------------------------------===//

#include "KernelCommon.h"

#include <algorithm>

#include <cmath>
#include <fstream>
#include <set>
#include <sstream>

using namespace fa;
using namespace fa::cuda;
using namespace fa::detail;

bool fa::detail::isVectorAligned(const char *name, cuda::CUdeviceptr base,
                                 const int64_t stride[3], ElementType type,
                                 std::string &error) {
  int64_t bytes = static_cast<int64_t>(elementTypeSize(type));
  bool aligned = base % 16 == 0;
  for (int i = 0; i < 3; ++i)
    aligned = aligned && (stride[i] * bytes) % 16 == 0;
  if (aligned)
    return true;
  error = std::string(name) +
          " must be 16-byte aligned: its pointer and its batch, head and "
          "sequence strides (in bytes) multiples of 16";
  return false;
}

bool fa::detail::forwardTensorsAligned(const ForwardArgs &a, ElementType dtype,
                                       std::string &error) {
  return isVectorAligned("q", a.q, a.qStride, dtype, error) &&
         isVectorAligned("k", a.k, a.kStride, dtype, error) &&
         isVectorAligned("v", a.v, a.vStride, dtype, error) &&
         isVectorAligned("o", a.o, a.oStride, outputElementType(dtype), error);
}

bool fa::detail::readFile(const std::string &path, std::string &out,
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

//===----------------------------------------------------------------------===//
// ManifestReader
//===----------------------------------------------------------------------===//

bool ManifestReader::fail(const std::string &message) {
  error = path + ": " + context + message;
  return false;
}

bool ManifestReader::open() {
  std::string text;
  if (!readFile(path, text, error))
    return false;
  if (!json::parse(text, value, error))
    return fail("bad JSON: " + error);
  return true;
}

bool ManifestReader::expectKind(const std::string &kind) {
  std::string actual = "forward";
  if (const json::Value *v = value.get("kind")) {
    if (v->kind != json::Value::String)
      return fail("\"kind\" must be a string");
    actual = v->string;
  }
  if (actual == kind)
    return true;
  if (actual == "forward" || actual == "backward") {
    error = path + " is a " + actual + " manifest; load it as the " + actual +
            " kernel";
    return false;
  }
  return fail("unknown \"kind\" \"" + actual +
              "\" (this runtime is older than the kernel)");
}

bool ManifestReader::string(const json::Value *object, const char *key,
                            std::string &out) {
  const json::Value *v = object ? object->get(key) : nullptr;
  if (!v || v->kind != json::Value::String)
    return fail(std::string("missing string \"") + key + "\"");
  out = v->string;
  return true;
}

bool ManifestReader::integer(const json::Value *v, const char *key, int64_t min,
                             int64_t max, int64_t &out) {
  if (!v || v->kind != json::Value::Number)
    return fail(std::string("missing number \"") + key + "\"");
  if (!(v->number >= static_cast<double>(min) &&
        v->number <= static_cast<double>(max)) ||
      v->number != std::floor(v->number))
    return fail(std::string("\"") + key + "\" must be an integer in [" +
                std::to_string(min) + ", " + std::to_string(max) + "]");
  out = static_cast<int64_t>(v->number);
  return true;
}

bool ManifestReader::number(const json::Value *object, const char *key,
                            int64_t &out) {
  return integer(object ? object->get(key) : nullptr, key, 0, INT32_MAX, out);
}

bool ManifestReader::blockThreads(const json::Value *object, int64_t &threads) {
  const json::Value *block = object ? object->get("block") : nullptr;
  if (!block || block->kind != json::Value::Array || block->array.empty())
    return fail("missing \"block\"");
  return integer(&block->array[0], "block", 1, 1024, threads);
}

bool ManifestReader::readCommon(KernelInfo &info) {
  std::string specText;
  if (!string(&value, "kernel", info.kernelName) ||
      !string(&value, "ptx", info.ptxFile) ||
      !string(&value, "target", info.target) ||
      !string(&value, "spec", specText) ||
      !string(&value, "generator", info.generator))
    return false;
  if (!parseSpec(specText, info.spec, error))
    return fail("bad spec: " + error);
  const json::Value *tile = value.get("tile");
  return number(tile, "stages", info.stages) &&
         number(tile, "warps", info.warps);
}

bool ManifestReader::params(
    const json::Value *object, ElementType dtype,
    const std::function<bool(const std::string &)> &known, ParamList &out) {
  const json::Value *list = object ? object->get("params") : nullptr;
  if (!list || list->kind != json::Value::Array)
    return fail("missing \"params\"");
  std::set<std::string> seen;
  for (const json::Value &p : list->array) {
    const json::Value *name = p.get("name"), *type = p.get("type");
    if (!name || !type || name->kind != json::Value::String ||
        type->kind != json::Value::String)
      return fail("each of \"params\" needs a string name and type");
    const std::string &n = name->string, &t = type->string;
    if (!known(n))
      return fail("unknown kernel parameter \"" + n +
                  "\" (this runtime is older than the kernel)");
    // The ABI table lists each name once: a repeat is no manifest the
    // compiler wrote from it.
    if (!seen.insert(n).second)
      return fail("kernel parameter \"" + n + "\" is listed twice");
    abi::TensorMapInfo mapInfo;
    bool isMap = abi::tensorMapOf(n, mapInfo);
    if (isMap != (t == "tensormap"))
      return fail("kernel parameter \"" + n + "\" has type \"" + t + "\"" +
                  (isMap ? " (a tensormap expected)" : ""));
    int capture, dimension;
    bool isCapture = abi::captureParamOf(n, capture, dimension);
    bool captureType =
        isCapture && (t == "f32" || (t.rfind("memref<?x", 0) == 0 &&
                                     t.back() == '>' &&
                                     captureElementBytes(t.substr(
                                         9, t.size() - 10)) != 0));
    if (!isMap && !captureType && t != "i64" && t != "memref<?xf32>" &&
        t != "memref<?xi32>" &&
        t != abi::paramTypeName(abi::ParamType::ElementBuffer,
                                elementTypeName(dtype)) &&
        t != abi::paramTypeName(abi::ParamType::OutputBuffer,
                                elementTypeName(dtype)))
      return fail("kernel parameter \"" + n + "\" has type \"" + t +
                  "\" (i64 or a memref of f32, i32, the kernel's element "
                  "type or its output type expected; a capture's f32 or "
                  "memref of its element)");
    out.push_back({n, t});
  }
  return true;
}

bool ManifestReader::matchTable(const ParamList &params, ElementType dtype,
                                const std::vector<abi::Param> &table) {
  for (const auto &[name, type] : params)
    for (const abi::Param &p : table) {
      if (name != p.name)
        continue;
      std::string expected = abi::paramTypeName(p, elementTypeName(dtype));
      if (type != expected)
        return fail("kernel parameter \"" + name + "\" has type \"" + type +
                    "\" (the ABI table's is \"" + expected + "\")");
      break;
    }
  return true;
}

bool ManifestReader::locatePtx(KernelInfo &info) {
  info.ptxFile = directoryOf(path) + "/" + info.ptxFile;
  if (!std::ifstream(info.ptxFile, std::ios::binary))
    return fail("its PTX file " + info.ptxFile + " cannot be read");
  return true;
}

//===----------------------------------------------------------------------===//
// Launching
//===----------------------------------------------------------------------===//

namespace {
/// cuda.h's CUtensorMapDataType / Swizzle / L2promotion values we use.
/// TMA has no fp8 type: e4m3 is moved as bytes (UINT8), as CUTLASS does.
constexpr int kTensorMapUInt8 = 0, kTensorMapFloat16 = 6, kTensorMapFloat32 = 7,
              kTensorMapBFloat16 = 9;
constexpr int kSwizzle128B = 3, kL2Promotion256B = 3;

/// The map's CUtensorMapDataType for elements of `type`.
int tensorMapDataType(ElementType type) {
  switch (type) {
  case ElementType::F8E4M3FN:
    return kTensorMapUInt8;
  case ElementType::F16:
    return kTensorMapFloat16;
  case ElementType::F32:
    return kTensorMapFloat32;
  case ElementType::BF16:
    break;
  }
  return kTensorMapBFloat16;
}
} // namespace

bool detail::encodeTensorMap(const cuda::Driver &d, ElementType dtype,
                     const TensorMapSource &source, TensorMapStorage &map,
                     std::string &error) {
  const int64_t *stride = source.stride;
  ElementType type = source.f32 ? ElementType::F32 : dtype;
  int64_t elementBytes = static_cast<int64_t>(elementTypeSize(type));
  uint64_t dims[4] = {uint64_t(source.width), uint64_t(source.rows),
                      uint64_t(source.heads), uint64_t(source.batch)};
  uint64_t strides[3] = {uint64_t(stride[2] * elementBytes),
                         uint64_t(stride[1] * elementBytes),
                         uint64_t(stride[0] * elementBytes)};
  for (uint64_t bytes : strides)
    if (bytes % 16) {
      error = "TMA needs " + source.tensor + "'s strides to be multiples of 16 "
              "bytes (" + std::to_string(16 / elementBytes) + " elements of " +
              elementTypeName(type) + "), got " + std::to_string(stride[2]) +
              ", " + std::to_string(stride[1]) + ", " +
              std::to_string(stride[0]);
      return false;
    }
  if (source.base % 16) {
    error = "TMA needs " + source.tensor + " 16-byte aligned";
    return false;
  }
  unsigned box[4] = {unsigned(abi::kTensorMapPanelBytes / elementBytes),
                     unsigned(source.boxRows), 1, 1};
  unsigned elementStrides[4] = {1, 1, 1, 1};
  cuda::CUresult r = d.cuTensorMapEncodeTiled(
      &map, tensorMapDataType(type), 4, reinterpret_cast<void *>(source.base), dims, strides,
      box, elementStrides, /*interleave=*/0, kSwizzle128B, kL2Promotion256B,
      /*oobFill=*/0);
  if (r) {
    error = d.describe(r, ("encoding the tensor map of " + source.tensor).c_str());
    return false;
  }
  return true;
}

bool TensorMapCache::get(const cuda::Driver &d, ElementType dtype,
                         size_t slot, const TensorMapSource &source,
                         TensorMapStorage &map, std::string &error) {
  std::lock_guard<std::mutex> lock(mutex);
  if (entries.size() <= slot)
    entries.resize(slot + 1);
  Entry &e = entries[slot];
  const TensorMapSource &c = e.source;
  bool sameShape = e.valid && e.dtype == dtype && c.f32 == source.f32 &&
                   c.width == source.width && c.rows == source.rows &&
                   c.heads == source.heads && c.batch == source.batch &&
                   c.boxRows == source.boxRows &&
                   std::equal(e.stride, e.stride + 3, source.stride);
  // TMA's own checks (alignment) are encodeTensorMap's: a new base goes
  // through them before it may be re-pointed to.
  if (sameShape && c.base != source.base && d.cuTensorMapReplaceAddress &&
      source.base % 16 == 0 &&
      d.cuTensorMapReplaceAddress(&e.map,
                                  reinterpret_cast<void *>(source.base)) == 0)
    e.source.base = source.base;
  if (!sameShape || e.source.base != source.base) {
    e.valid = false;
    if (!encodeTensorMap(d, dtype, source, e.map, error))
      return false;
    e.valid = true;
    e.dtype = dtype;
    e.source = source;
    std::copy(source.stride, source.stride + 3, e.stride);
    e.source.stride = e.stride;
  }
  map = e.map;
  return true;
}

bool LaunchParams::pack(const ParamList &params, const ValueOf &valueOf,
                        const MapOf &mapOf, std::string &error) {
  words.clear();
  pointers.clear();
  // Reserved up front, so that the pointers into them stay valid. The
  // kernel indexes with its own offsets, so a buffer's size is
  // informational.
  words.reserve(5 * params.size());
  maps.assign(params.size(), TensorMapStorage());
  for (size_t i = 0; i < params.size(); ++i) {
    const auto &[name, type] = params[i];
    if (type == "tensormap") {
      if (!mapOf) {
        error = "kernel parameter \"" + name +
                "\" is a tensor map, which "
                "this kernel kind does not take";
        return false;
      }
      if (!mapOf(i, name, maps[i], error))
        return false;
      pointers.push_back(&maps[i]);
      continue;
    }
    int64_t value = valueOf(i, name);
    size_t first = words.size();
    if (type.rfind("memref", 0) == 0)
      words.insert(words.end(), {value, value, 0, INT64_MAX, 1});
    else
      words.push_back(value);
    for (size_t w = first; w < words.size(); ++w)
      pointers.push_back(&words[w]);
  }
  return true;
}

bool fa::detail::loadModule(Driver &d, const std::string &ptx, CUmodule &module,
                            std::string &error) {
  char infoLog[8192] = {0}, errorLog[8192] = {0};
  int options[] = {kJitInfoLogBuffer, kJitInfoLogBufferSize, kJitErrorLogBuffer,
                   kJitErrorLogBufferSize};
  void *values[] = {infoLog, reinterpret_cast<void *>(sizeof(infoLog)),
                    errorLog, reinterpret_cast<void *>(sizeof(errorLog))};
  CUresult r = d.cuModuleLoadDataEx(&module, ptx.c_str(), 4, options, values);
  if (r) {
    error =
        d.describe(r, "loading the PTX") + (errorLog[0] ? ": " : "") + errorLog;
    return false;
  }
  return true;
}

bool fa::detail::loadFunction(Driver &d, CUmodule module,
                              const std::string &entry,
                              int64_t dynamicSharedMemory, CUfunction &function,
                              int &registers, std::string &error) {
  CUresult r;
  if ((r = d.cuModuleGetFunction(&function, module, entry.c_str()))) {
    error = d.describe(r, ("finding kernel " + entry).c_str());
    return false;
  }
  if (!cuda::sharedMemoryFits(d, entry, dynamicSharedMemory, error))
    return false;
  // More than 48 KiB of dynamic shared memory must be asked for.
  if ((r = d.cuFuncSetAttribute(function, kFuncAttributeMaxDynamicSharedBytes,
                                static_cast<int>(dynamicSharedMemory)))) {
    error = d.describe(
        r, ("raising the dynamic shared memory limit of " + entry).c_str());
    return false;
  }
  d.cuFuncGetAttribute(&registers, kFuncAttributeNumRegs, function);
  return true;
}

/// The launch's captured values against the variant's types: one each, a
/// buffer for each tensor, with its extents (the static ones as stated).
bool detail::checkCaptures(const Variant &variant,
                          const std::vector<ForwardArgs::Capture> &captures,
                          std::string &error) {
  if (captures.size() != variant.captures.size()) {
    error = "the kernel takes " + std::to_string(variant.captures.size()) +
            " captured values; " + std::to_string(captures.size()) + " given";
    return false;
  }
  for (size_t i = 0; i < captures.size(); ++i) {
    const CaptureType &type = variant.captures[i];
    const ForwardArgs::Capture &c = captures[i];
    if (type.isScalar()) {
      if (c.data || !c.extents.empty()) {
        error = "captured value " + std::to_string(i) +
                " is a scalar: no buffer and no extents";
        return false;
      }
      continue;
    }
    bool extentsOk = c.extents.size() == type.shape.size();
    for (size_t d = 0; extentsOk && d < type.shape.size(); ++d)
      extentsOk = c.extents[d] >= 1 &&
                  (type.shape[d] == CaptureType::kDynamicExtent ||
                   type.shape[d] == c.extents[d]);
    if (!c.data || !extentsOk) {
      error = "captured value " + std::to_string(i) +
              " must be a non-null buffer with " +
              std::to_string(type.shape.size()) +
              " extents, each >= 1 and equal to the static ones of its type";
      return false;
    }
  }
  return true;
}

bool detail::ManifestReader::matchCaptures(const ParamList &params,
                                           const std::vector<CaptureType> &captures) {
  // The capture parameters are exactly the variant's, in its order: one
  // more, fewer or another would shift the launch words.
  std::vector<std::string> given, expected;
  for (const auto &param : params) {
    int capture, dimension;
    if (abi::captureParamOf(param.first, capture, dimension))
      given.push_back(param.first);
  }
  for (const abi::Param &p : abi::captureParams(captures))
    expected.push_back(p.name);
  if (given != expected)
    return fail("the capture parameters do not match \"variant\"'s captures");
  return true;
}

int64_t detail::captureParamValue(const ForwardArgs &args, const Variant &variant,
                                  const std::string &name) {
  int capture, dimension;
  if (abi::captureParamOf(name, capture, dimension) && dimension < 0 &&
      capture < static_cast<int>(variant.captures.size()) &&
      capture < static_cast<int>(args.captures.size()) &&
      variant.captures[capture].isScalar() && variant.captures[capture].isFloat())
    return abi::f32Bits(args.captures[capture].real);
  int64_t value = 0;
  abi::forwardParamValue(args, name, value);
  return value;
}
