//===- KernelAbi.h - the forward kernel's parameters, once ------*- C++ -*-===//
//
// Part of fa-mlir.
//
// The one home of the kernel ABI. The compiler builds the gpu.func
// signature from `forwardKernelParams` and writes the same list into the
// manifest; the runtime reads the list back from the manifest and binds
// each name to its value with `forwardParamValue`. Nothing else states
// the parameters, their order or their count.
//
// No MLIR here: the runtime builds on machines without LLVM.
//
//===----------------------------------------------------------------------===//

#ifndef FA_RUNTIME_KERNELABI_H
#define FA_RUNTIME_KERNELABI_H

#include "fa/runtime/Cuda.h"
#include "fa/runtime/Variant.h"

#include <cstdint>
#include <string>
#include <vector>

namespace fa {

/// Where the tensors are and how they are laid out, for one launch. Strides
/// are in elements, innermost dimension contiguous; [B,S,H,D] and [B,H,S,D]
/// are both just strides.
struct ForwardArgs {
  cuda::CUdeviceptr q = 0, k = 0, v = 0, o = 0, lse = 0;
  int64_t batch = 1, queryHeads = 1, kvHeads = 1, queryLen = 1, keyLen = 1;
  int64_t qStride[3] = {0, 0, 0}; ///< batch, head, sequence
  int64_t kStride[3] = {0, 0, 0};
  int64_t vStride[3] = {0, 0, 0};
  int64_t oStride[3] = {0, 0, 0};
  int64_t lseStride[2] = {0, 0}; ///< batch, head (sequence stride is 1)
  /// ALiBi slopes (f32), [Hq] (alibiStrideB = 0) or [B, Hq] (= Hq).
  cuda::CUdeviceptr alibiSlopes = 0;
  int64_t alibiStrideB = 0;
  /// f8E4M3FN kernels: Q's, K's and V's descale factors (f32), read at
  /// [batch · descaleStride[0] + KV head · descaleStride[1]]: {0, 0} for
  /// one factor per tensor, {Hkv, 1} for [B, Hkv] (per head).
  cuda::CUdeviceptr qDescale = 0, kDescale = 0, vDescale = 0;
  int64_t descaleStride[2] = {0, 0}; ///< batch, KV head
  /// A variant kernel's captured values, in the order of its manifest's
  /// "variant" captures: a tensor's device buffer (row-major, contiguous)
  /// and its extents, or a scalar's value (an integer's, or a float's as
  /// a double).
  struct Capture {
    cuda::CUdeviceptr data = 0;
    std::vector<int64_t> extents;
    int64_t integer = 0;
    double real = 0.0;
  };
  std::vector<Capture> captures;
  /// A block-sparse kernel's block mask (FlexAttention's BlockMask: int32,
  /// contiguous): `kvNumBlocks` and `fullKvNumBlocks` [batch, heads,
  /// qBlocks], `kvIndices` and `fullKvIndices` [batch, heads, qBlocks,
  /// kvBlocks]; row (b, h, i) lists the partial (mask evaluated) and the
  /// full (every element visible) KV blocks of query block i, the first
  /// counts entries of each row. `batch` is 1 or B and `heads` 1 or Hq (1
  /// broadcasts); blocks are `qBlockSize` query rows by `kvBlockSize` keys.
  struct BlockMask {
    cuda::CUdeviceptr kvNumBlocks = 0, kvIndices = 0;
    cuda::CUdeviceptr fullKvNumBlocks = 0, fullKvIndices = 0;
    int64_t batch = 1, heads = 1, qBlocks = 0, kvBlocks = 0;
    int64_t qBlockSize = 0, kvBlockSize = 0;
    /// The kernel's strides of a row (b, h, i) = b·strideB + h·strideH + i.
    int64_t strideB() const { return batch == 1 ? 0 : heads * qBlocks; }
    int64_t strideH() const { return heads == 1 ? 0 : qBlocks; }
  };
  BlockMask blockMask;
};

/// One backward launch: the forward's tensors and sizes (Q, K, V, O and the
/// LSE the forward saved), dO, the gradients, and the workspace (below).
struct BackwardArgs {
  ForwardArgs forward;
  cuda::CUdeviceptr gradOut = 0, dq = 0, dk = 0, dv = 0;
  int64_t gradOutStride[3] = {0, 0, 0}; ///< batch, head, sequence
  int64_t dqStride[3] = {0, 0, 0};
  int64_t dkStride[3] = {0, 0, 0};
  int64_t dvStride[3] = {0, 0, 0};
  /// backwardWorkspaceBytes() bytes of device memory, 256-byte aligned.
  cuda::CUdeviceptr workspace = 0;
  /// dQ accumulated in a fixed order (KV blocks in increasing order per Q
  /// block, through dq_semaphore): bit-identical across runs, slower.
  /// Only for kernels whose manifest says "deterministic_mode": true.
  bool deterministic = false;
};

namespace abi {

/// The backward's three kernels, launched in this order (one PTX module,
/// one manifest of kind "backward").
enum class BackwardStep {
  /// delta = rowsum(dO ∘ O) per query row; grid (ceil(M / 128), Hq, B).
  Preprocess,
  /// KV blocks outer: dK, dV per KV block, dQ added into dq_acc (f32);
  /// grid (ceil(N / block_n), Hkv, B).
  Main,
  /// dQ = dq_acc in the input dtype; grid (ceil(M / 128), Hq, B).
  Postprocess,
};
/// "preprocess", "main", "postprocess": the manifest's keys.
const char *backwardStepName(BackwardStep step);

/// The backward kernel beside the forward kernel `forwardName`, as
/// fa-compile --bwd names it and fa-run --bwd looks for it: fa_fwd_X's is
/// fa_bwd_X, any other name X's is X_bwd; `deterministic` appends _det.
std::string backwardKernelNameOf(const std::string &forwardName,
                                 bool deterministic = false);
/// Query rows per block of the preprocess and postprocess kernels.
constexpr int64_t kBackwardRowsPerBlock = 128;

/// dq_acc's rows per (batch, head): M rounded up to 8. The accumulator is
/// private to one compiled backward: its main kernel and its postprocess
/// agree on the order within each 8-row band (row-major, or the MMA
/// accumulator's lane order, fa.accumulate_fragment's `mma_blocks`, so
/// that each warp's 32 additions fall on 128 contiguous bytes); the
/// runtime only sizes it and passes its strides.
constexpr int64_t kGradQueryRowBand = 8;
inline int64_t gradQueryAccumulatorRows(int64_t queryLen) {
  return (queryLen + kGradQueryRowBand - 1) / kGradQueryRowBand *
         kGradQueryRowBand;
}

/// The backward's workspace, owned by the caller (O(M) plus dQ's f32
/// accumulator, docs/design.md's memory rule): delta [B, Hq, M] f32, then
/// dq_acc [B, Hq, M', D] f32 (M' = gradQueryAccumulatorRows(M)), then
/// dq_semaphore [B, Hq, ceil(M / 16)] i32
/// (one counter per Q block of the deterministic mode; 16 rows is the
/// smallest block_m), each contiguous. The runtime zeroes
/// [zeroOffset, zeroOffset + zeroBytes) (dq_acc and the counters) before
/// the main kernel.
struct BackwardWorkspace {
  int64_t deltaOffset = 0, dqAccOffset = 0, semaphoreOffset = 0, bytes = 0;
  int64_t zeroOffset = 0, zeroBytes = 0;
  static BackwardWorkspace of(int64_t batch, int64_t queryHeads,
                              int64_t queryLen, int64_t headDim);
};

/// How a parameter is passed. A buffer is a flat memref<?xT>: five launch
/// words (allocated pointer, aligned pointer, offset, size, stride).
enum class ParamType {
  ElementBuffer, ///< memref<?xT>, T the kernel's element type (Q, K, V)
  /// memref<?xT>, T the kernel's output type (outputElementTypeName): O.
  OutputBuffer,
  F32Buffer,     ///< memref<?xf32> (LSE, ALiBi slopes)
  I32Buffer,     ///< memref<?xi32> (the backward's dQ semaphores)
  Int64,         ///< i64 (sizes and strides, in elements)
  F32,           ///< f32 (a captured float scalar)
  /// memref<?xT>, T the captured tensor's element (Param::element; an
  /// index tensor is i64): a variant kernel's captured tensor.
  CaptureBuffer,
  /// A CUtensorMap (128 bytes, 64-byte aligned) passed by value as a
  /// grid-constant parameter: a TMA map of Q, K, V, O, dO or dq_acc
  /// (tensorMapOf).
  TensorMap,
};

/// Which kernels take a parameter.
enum class ParamUse {
  Always,
  Alibi,      ///< kernels with ALiBi
  TensorMaps, ///< kernels that load through TMA (sm_90a)
  Descale,    ///< f8E4M3FN kernels (Q's, K's and V's descale factors)
  /// Kernels that store O through TMA from shared memory (sm_90a e4m3
  /// where O's tile fits beside the rings: o_tmap).
  OutputTensorMap,
  /// Block-sparse kernels (#fa.block_sparse): the block mask's lists, the
  /// strides of their rows (in rows) and the lists' length (kv_blocks).
  BlockMask,
};

struct Param {
  std::string name;
  ParamType type;
  ParamUse use;
  std::string element = ""; ///< CaptureBuffer's element type
};

/// A variant kernel's trailing parameters, one group per captured value:
/// `capture<i>` (the tensor's buffer, or the scalar: f32 for a float, i64
/// for an integer or index) then `capture<i>_extent<d>` (i64) for each
/// dynamic extent of a tensor. The kernel clamps its reads to the extents.
std::vector<Param> captureParams(const std::vector<CaptureType> &captures);
/// Whether `name` is a capture parameter: its capture and, for an extent,
/// its dimension (-1 for the value itself).
bool captureParamOf(const std::string &name, int &capture, int &dimension);

/// The forward kernel's parameters, in launch order. Tensor maps come
/// first, so that their positions survive the expansion of memrefs into
/// launch words (the compiler marks them grid-constant by position).
std::vector<Param> forwardKernelParams(bool alibi, bool tensorMaps = false,
                                       bool descale = false,
                                       bool outputTensorMap = false,
                                       const std::vector<CaptureType> &captures = {},
                                       bool blockMask = false);

/// The element type of a kernel's output (O) for its input element type,
/// both as the manifest names them: bf16 for "f8e4m3fn" (FlashAttention-3's
/// fp8 forward writes bf16), the input type otherwise.
std::string outputElementTypeName(const std::string &elementType);

/// The parameters of backward kernel `step`, in launch order (the main
/// kernel's tensor maps first, as the forward's, if `tensorMaps`).
std::vector<Param> backwardKernelParams(BackwardStep step, bool alibi,
                                        bool tensorMaps = false,
                                        const std::vector<CaptureType> &captures = {});

/// How a TensorMap parameter maps its tensor: which one ("q", "k", "v",
/// "o", "do", "dq_acc"), and the TMA box, `panelBytes` of one row by `rows`
/// rows, where `rows` is the kernel's block_m for Q, dO and dq_acc,
/// block_n for K and V, and one consumer warpgroup's rows
/// (kTensorMapWarpgroupRows) for O, which each warpgroup stores. dq_acc's
/// map is f32 (the backward adds dQ_i into it with TMA's reduce-add), O's
/// of the kernel's output type (outputElementTypeName); the others are of
/// the kernel's type. The tensor is seen as 4-D [B, H, S, D] through its
/// strides (any layout), so that rows past S are out of bounds
/// (zero-filled on loads, dropped on stores), never the next head's.
struct TensorMapInfo {
  std::string tensor;
  bool queryRows;
  bool f32 = false;
  bool warpgroupRows = false; ///< O: boxes of kTensorMapWarpgroupRows rows
};
constexpr int64_t kTensorMapWarpgroupRows = 64;
constexpr int64_t kTensorMapBytes = 128, kTensorMapAlignment = 64;
/// A box row: 128 bytes, the span of the 128-byte swizzle.
constexpr int64_t kTensorMapPanelBytes = 128;
/// False if `name` is not a TensorMap parameter.
bool tensorMapOf(const std::string &name, TensorMapInfo &info);

/// How a kernel's grid covers its tiles, one tile being block_m query rows
/// of one (batch, head); the manifest's "scheduler".
enum class TileScheduler {
  /// Grid (ceil(M / block_m), Hq, B): one tile per thread block.
  PerBlock,
  /// Grid (min(tiles, SMs · resident blocks per SM), 1, 1): block b takes
  /// tiles b, b + gridDim.x, ... of ceil(M / block_m) · Hq · B, or (masked
  /// sm_90a kernels) pairs of a head's Q blocks b, b + gridDim.x, ..., in
  /// the order the kernel decodes (KernelSkeleton.h's TileOrder; blocks
  /// past the last pair have none).
  Persistent,
};
/// "per_block" or "persistent".
const char *tileSchedulerName(TileScheduler scheduler);
/// False if `name` names no scheduler.
bool tileSchedulerOf(const std::string &name, TileScheduler &scheduler);

/// The manifest's type string of a parameter ("memref<?xbf16>", "i64")
/// of a kernel whose element type the manifest names `elementType`.
std::string paramTypeName(ParamType type, const std::string &elementType);
/// The same for a parameter of the table (a capture's own element).
std::string paramTypeName(const Param &param, const std::string &elementType);

/// The value of parameter `name` for one launch: a device pointer (buffers)
/// or an integer. False if the runtime does not know the name.
bool forwardParamValue(const ForwardArgs &args, const std::string &name,
                       int64_t &value);
/// The same in two steps, for launches: the row of `name` in the forward's
/// table (-1 if unknown; capture parameters have rows past the table's),
/// found once per kernel, then its value per launch without comparing
/// names. A scalar capture's value is Capture::integer; Kernel::forward
/// launches a float one as f32Bits(Capture::real).
int forwardParamRow(const std::string &name);
int64_t forwardParamValueAt(int row, const ForwardArgs &args);
/// `value` rounded to f32, its bits in the low word (an f32 launch word).
int64_t f32Bits(double value);
/// The same for a backward kernel (`headDim` places dq_acc's strides).
bool backwardParamValue(const BackwardArgs &args, int64_t headDim,
                        const std::string &name, int64_t &value);

} // namespace abi
} // namespace fa

#endif // FA_RUNTIME_KERNELABI_H
