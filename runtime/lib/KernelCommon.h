//===- KernelCommon.h - what forward and backward kernels share -*- C++ -*-===//
//
// Part of fa-mlir.
//
// Private to the runtime: reading the fields every manifest has, packing a
// kernel's parameters into launch words, and loading a PTX module. The
// forward kernel (Kernel.cpp) and the backward's three (BackwardKernel.cpp)
// go through the same code, so that the two cannot drift apart.
//
//===----------------------------------------------------------------------===//

#ifndef FA_RUNTIME_LIB_KERNELCOMMON_H
#define FA_RUNTIME_LIB_KERNELCOMMON_H

#include "fa/runtime/Json.h"
#include "fa/runtime/Kernel.h"

#include <climits>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

namespace fa {
namespace detail {

/// CUDA's grid limits: x up to 2^31 - 1 blocks, y and z up to 65535.
constexpr int64_t kMaxGridX = INT32_MAX, kMaxGridYZ = 65535;

/// The whole file; false with "cannot read PATH".
bool readFile(const std::string &path, std::string &out, std::string &error);

/// Whether tensor `name` (elements of `type` at `base`, strides in
/// elements) meets the ABI's 16-byte rule (fa_runtime.h): the base and the
/// batch, head and sequence strides multiples of 16 bytes, as the kernels'
/// 16-byte copies and stores (cp.async, st.global.v4, TMA) need; else a
/// one-line reason (a misaligned access would fault the CUDA context).
bool isVectorAligned(const char *name, cuda::CUdeviceptr base,
                     const int64_t stride[3], ElementType type,
                     std::string &error);
/// isVectorAligned for Q, K, V (in the kernel's dtype) and O (its output
/// type) of a forward's arguments.
bool forwardTensorsAligned(const ForwardArgs &a, ElementType dtype,
                           std::string &error);

/// A manifest's JSON and the checked readers of its fields. Every reason
/// they give starts with the manifest's path.
class ManifestReader {
public:
  ManifestReader(const std::string &path, std::string &error)
      : path(path), error(error) {}

  /// Reads and parses the file.
  bool open();
  /// Checks "kind" is `kind` ("forward" when absent: manifests older than
  /// the backward kernels); a manifest of the other kind is refused with a
  /// line naming the loader that reads it.
  bool expectKind(const std::string &kind);
  /// The fields of KernelInfo: "kernel", "ptx" (the file name as written),
  /// "target", "spec", "generator", and the tile's stages and warps.
  bool readCommon(KernelInfo &info);

  bool string(const json::Value *object, const char *key, std::string &value);
  /// `v`, an integer in [min, max] (a fraction or 1e300 is refused before
  /// a cast could wrap it).
  bool integer(const json::Value *v, const char *key, int64_t min, int64_t max,
               int64_t &value);
  /// object[key], an integer in [0, INT32_MAX].
  bool number(const json::Value *object, const char *key, int64_t &value);
  /// object["block"][0]: the threads of a block, in [1, 1024].
  bool blockThreads(const json::Value *object, int64_t &threads);
  /// object["params"]: each a known name (`known`), listed once, of a type
  /// the launch can pass (i64, memref<?xf32>, memref<?xi32>, memref<?xT>
  /// for the kernel's element type or its output type (bf16 for
  /// f8E4M3FN, KernelAbi.h's outputElementTypeName), tensormap for exactly
  /// the tensor-map names).
  bool params(const json::Value *object, ElementType dtype,
              const std::function<bool(const std::string &)> &known,
              ParamList &out);
  /// Checks that each of `params` has the type `table` gives its name (for
  /// a kernel of element type `dtype`): a buffer is five launch words and
  /// an i64 one, so another type would shift every later word.
  bool matchTable(const ParamList &params, ElementType dtype,
                  const std::vector<abi::Param> &table);
  /// Makes info.ptxFile the path beside the manifest and checks that it
  /// can be read: a manifest is a promise of its PTX.
  bool locatePtx(KernelInfo &info);
  /// Sets the reason "PATH: <context>`message`" and returns false.
  /// The capture parameters of `params` are exactly captureParams of
  /// `captures`, in order (else the launch words would shift).
  bool matchCaptures(const ParamList &params,
                     const std::vector<CaptureType> &captures);
  bool fail(const std::string &message);
  /// What the reasons name after the path from now on ("step \"main\": ").
  void setContext(const std::string &text) { context = text; }

  const json::Value &root() const { return value; }

private:
  const std::string &path;
  std::string &error;
  std::string context;
  json::Value value;
};

/// A CUtensorMap's storage: 128 bytes, 64-byte aligned (cuda.h).
struct alignas(abi::kTensorMapAlignment) TensorMapStorage {
  uint64_t words[abi::kTensorMapBytes / 8];
};

/// A tensor as a TMA map sees it: 4-D [B, H, S, D] through its strides
/// (any layout), so that rows past S are out of bounds and zero-filled,
/// never the next head's.
struct TensorMapSource {
  std::string tensor; ///< "q", "k", "v", "o", "do", "dq_acc": for the reasons
  cuda::CUdeviceptr base = 0;
  const int64_t *stride = nullptr; ///< [b, h, s], in elements
  int64_t width = 0, rows = 0, heads = 0, batch = 0;
  int64_t boxRows = 0; ///< block_m, block_n or a warpgroup's rows (O)
  /// f32 elements (dq_acc), else the type the caller encodes with (the
  /// kernel's input type; O's output type, Kernel.cpp)
  bool f32 = false;
};

/// Encodes `source`'s map: boxes of one 128-byte panel row (64 16-bit
/// elements, 128 e4m3 ones: those are mapped as UINT8) by boxRows rows,
/// 128-byte swizzle, zeros out of bounds. False with a reason (a stride
/// or base TMA cannot take, or the driver's).
bool encodeTensorMap(const cuda::Driver &d, ElementType dtype,
                     const TensorMapSource &source, TensorMapStorage &map,
                     std::string &error);

/// The maps a kernel's launches encoded last, one per tensor-map parameter
/// (its index in the manifest's list): reused while the tensor is the same
/// (sizes, strides, base) and re-pointed by cuTensorMapReplaceAddress when
/// only the base moved, so that a launch-bound caller, which passes like
/// tensors call after call, does not pay cuTensorMapEncodeTiled per map
/// and launch. Safe to share between threads.
class TensorMapCache {
public:
  /// `source`'s map (as encodeTensorMap makes it) into `map`.
  bool get(const cuda::Driver &d, ElementType dtype, size_t slot,
           const TensorMapSource &source, TensorMapStorage &map,
           std::string &error);

private:
  struct Entry {
    bool valid = false;
    ElementType dtype = ElementType::BF16;
    TensorMapSource source; ///< its `stride` points at `stride` below
    int64_t stride[3] = {0, 0, 0};
    TensorMapStorage map;
  };
  std::mutex mutex;
  std::vector<Entry> entries;
};

/// One launch's kernel parameters, as cuLaunchKernel reads them: a pointer
/// per launch word, into storage this object owns (so it must outlive the
/// cuLaunchKernel call, and is neither copied nor moved).
class LaunchParams {
public:
  LaunchParams() = default;
  LaunchParams(const LaunchParams &) = delete;
  LaunchParams &operator=(const LaunchParams &) = delete;

  /// The value of a buffer (its device address) or i64 parameter, the
  /// `index`th of the list.
  using ValueOf = std::function<int64_t(size_t index, const std::string &name)>;
  /// Encodes the tensor map parameter `name`, the `index`th of the list;
  /// false with a reason.
  using MapOf = std::function<bool(size_t index, const std::string &name,
                                   TensorMapStorage &map, std::string &error)>;

  /// Packs `params` in order: a memref<?xT> is MLIR's descriptor of five
  /// words (allocated, aligned, offset, size, stride), an i64 one word, a
  /// tensormap its 128 bytes by value. `mapOf` may be empty for kernels
  /// that take no maps. False with a reason.
  bool pack(const ParamList &params, const ValueOf &valueOf, const MapOf &mapOf,
            std::string &error);
  void **data() { return pointers.data(); }

private:
  std::vector<int64_t> words;
  std::vector<TensorMapStorage> maps;
  std::vector<void *> pointers;
};

/// Loads `ptx` into `module`; false with the driver's reason and the JIT's
/// error log.
bool loadModule(cuda::Driver &d, const std::string &ptx, cuda::CUmodule &module,
                std::string &error);

/// Finds kernel `entry` in `module`, lets it use `dynamicSharedMemory`
/// bytes (more than 48 KiB must be asked for) and reads its register
/// count. False with a reason.
bool loadFunction(cuda::Driver &d, cuda::CUmodule module,
                  const std::string &entry, int64_t dynamicSharedMemory,
                  cuda::CUfunction &function, int &registers,
                  std::string &error);

/// A launch's captured values against a variant's types: one each, a
/// buffer for each tensor, with its extents (the static ones as stated).
bool checkCaptures(const Variant &variant,
                   const std::vector<ForwardArgs::Capture> &captures,
                   std::string &error);

/// The launch word of capture parameter `name`: a float scalar's f32
/// bits, else forwardParamValue's.
int64_t captureParamValue(const ForwardArgs &args, const Variant &variant,
                          const std::string &name);

} // namespace detail
} // namespace fa

#endif // FA_RUNTIME_LIB_KERNELCOMMON_H
