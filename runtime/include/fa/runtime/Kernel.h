//===- Kernel.h - a generated kernel: manifest, load, launch ----*- C++ -*-===//
//
// Part of fa-mlir.
//
//===----------------------------------------------------------------------===//

#ifndef FA_RUNTIME_KERNEL_H
#define FA_RUNTIME_KERNEL_H

#include "fa/runtime/Cuda.h"
#include "fa/runtime/KernelAbi.h"
#include "fa/runtime/Variant.h"
#include "fa/runtime/Spec.h"

#include <memory>
#include <string>
#include <vector>

namespace fa {
namespace detail {
class TensorMapCache;
} // namespace detail

/// A kernel's parameters in launch order, as the compiler wrote them from
/// the ABI table (KernelAbi.h): name and type.
using ParamList = std::vector<std::pair<std::string, std::string>>;

/// What every manifest states, forward or backward ("kernel", "ptx",
/// "target", "spec", "tile", "generator").
struct KernelInfo {
  std::string kernelName, ptxFile, target, generator, dtypeName;
  AttentionSpec spec; ///< d, dv, dtype, mask, softcap, scale, block_m/n
  int64_t stages = 2, warps = 4;
};

/// What fa-compile wrote in NAME.json for a forward kernel.
struct Manifest : KernelInfo {
  int64_t blockThreads = 128;
  int64_t dynamicSharedMemory = 0;
  /// How the grid covers the tiles ("scheduler"; per_block when absent,
  /// as in manifests older than the persistent kernels).
  abi::TileScheduler scheduler = abi::TileScheduler::PerBlock;
  ParamList params;
  /// A kernel compiled from score_mod / mask_mod regions: its captures
  /// (the trailing parameters, KernelAbi.h's captureParams) and the
  /// regions as written ("variant"; empty for a spec's kernel).
  Variant variant;
  /// A block-sparse kernel's block sizes ("block_sparse"; 0 for a dense
  /// kernel): it takes a block mask (ForwardArgs::BlockMask) of them.
  int64_t sparseQBlock = 0, sparseKvBlock = 0;
  bool blockSparse() const { return sparseKvBlock != 0; }

  /// Reads and checks a manifest (its numbers integers in range, each
  /// parameter of the ABI table's type, its PTX file readable); false with
  /// a reason. A backward manifest is refused
  /// with a line that says so (BackwardManifest reads it).
  static bool read(const std::string &path, Manifest &out, std::string &error);

  /// ceil(queryLen / block_m): the Q blocks of one (batch, head).
  int64_t queryBlocks(int64_t queryLen) const {
    return queryLen / spec.blockM + (queryLen % spec.blockM != 0);
  }

  /// Whether the kernel takes parameter `name` (its manifest lists it).
  bool takesParam(const std::string &name) const;
  /// Whether the kernel takes ALiBi slopes (its parameters name them).
  bool takesAlibiSlopes() const { return takesParam("alibi_slopes"); }
  /// Whether the kernel takes Q's, K's and V's descale factors (an
  /// f8E4M3FN kernel: its parameters name them).
  bool takesDescales() const { return takesParam("q_descale"); }

  /// Checks that a problem of `size` fits one launch of this kernel: per
  /// block, grid x = ceil(M / block_m) <= 2^31 - 1, y = Hq and z = B <=
  /// 65535 (CUDA's limits); persistent, ceil(M / block_m) · Hq · B <=
  /// 2^31 - 1 tiles (decoded in 32 bits). False with a reason.
  bool checkLaunch(const ProblemSize &size, std::string &error) const;
  /// Checks a launch's block mask (ForwardArgs::BlockMask): none for a
  /// dense kernel; for a block-sparse one all four lists, of its block
  /// sizes, with batch and heads 1 or the problem's and q_blocks and
  /// kv_blocks those of M and N, so that every row a Q tile reads exists
  /// (the kernel clamps the counts and indices it reads). False with a
  /// reason.
  bool checkBlockMask(const ForwardArgs &args, std::string &error) const;
};

/// A loaded forward kernel.
class Kernel {
public:
  /// Loads `manifestPath` and the PTX next to it; null with a reason.
  /// `noDevice` is set when there is no GPU at all.
  static std::unique_ptr<Kernel> load(const std::string &manifestPath,
                                      std::string &error, bool &noDevice);
  ~Kernel();

  /// Launches on `stream` (null: the default stream). False with a reason
  /// (bad sizes, a driver error); nothing aborts.
  bool forward(const ForwardArgs &args, cuda::CUstream stream,
               std::string &error) const;

  const Manifest &manifest() const { return info; }
  int registers() const { return numRegisters; }
  cuda::Driver &driver() const { return *cu; }

private:
  Kernel() = default;
  Manifest info;
  cuda::Driver *cu = nullptr;
  cuda::CUmodule module = nullptr;
  cuda::CUfunction function = nullptr;
  int numRegisters = 0;
  /// A persistent kernel's grid bound: SMs · resident blocks per SM.
  int64_t residentBlocks = 0;
  /// Each manifest parameter's row of the ABI table (KernelAbi.h), looked
  /// up once here rather than by name on every launch.
  std::vector<int> paramRows;
  /// Per manifest parameter: the capture it passes if that is a float
  /// scalar (launched as its f32 bits), else -1.
  std::vector<int> floatCaptureOf;
  /// The tensor maps of the last launches (KernelCommon.h).
  std::unique_ptr<detail::TensorMapCache> mapCache;
};

} // namespace fa

#endif // FA_RUNTIME_KERNEL_H
