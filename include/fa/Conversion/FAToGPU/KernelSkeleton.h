//===- KernelSkeleton.h - what every chip's schedule is built from -*- C++ -*-===//
//
// Part of fa-mlir.
//
// The chip-neutral pieces a strategy assembles its kernel from in
// fa-gpu-distribute:
//
// * `KernelArgs`: the gpu.func, its signature made from the ABI table
//   (fa/runtime/KernelAbi.h), and the arguments by name;
// * `GridCoords`: (Q block, head, batch) from the grid, GQA's KV head, the
//   block's first query row;
// * `sharedMemoryBase`: dynamic shared memory as MLIR 22 needs it;
// * `DistributedMath`: the fused loop's tile ops, cloned into the kernel
//   with their tensors re-typed to #fa.fragment layouts. The strategy owns
//   the loop and decides where each shared-memory tile becomes readable;
//   the math itself is the L2 IR's, never rewritten per chip.
//
//===----------------------------------------------------------------------===//

#ifndef FA_CONVERSION_FATOGPU_KERNELSKELETON_H
#define FA_CONVERSION_FATOGPU_KERNELSKELETON_H

#include "fa/Conversion/FAToGPU/AttentionKernel.h"

#include "fa/runtime/KernelAbi.h"

#include "mlir/IR/IRMapping.h"

#include <functional>

namespace mlir {
namespace fa {

/// The gpu.func attribute listing the positions of by-value tensor-map
/// parameters (!llvm.ptr until fa-nvvm-grid-constant-params).
constexpr llvm::StringLiteral kGridConstantParamsAttrName =
    "fa.grid_constant_params";

/// A kernel's gpu.func and its ABI arguments.
/// `type`'s capture element name ("f32", "i32", "index", ...), or empty
/// for a type the runtime has no name for.
std::string captureElementName(Type type);

/// The runtime's statement of captured `types` (their element names and
/// shapes; an empty element name where it has none).
std::vector<::fa::CaptureType> captureTypesOf(TypeRange types);

class KernelArgs {
public:
  /// Creates `gpu.func @name` with the ABI's parameters (with the TMA
  /// tensor maps if `tensorMaps`, and O's if `outputTensorMap`) and
  /// `threads` as its block size; the builder is left at the start of its
  /// body.
  static KernelArgs create(OpBuilder &b, gpu::GPUModuleOp module,
                           const AttentionKernelConfig &c, StringRef name,
                           int64_t threads, bool tensorMaps = false,
                           bool outputTensorMap = false);
  /// The same with the parameters `params` (a backward step's, say),
  /// buffers of `elementType` or f32. A kernel with tensor maps states
  /// `blocksPerSM` resident blocks (.minnctapersm): ptxas caps its entry
  /// registers to fit them, which setmaxnreg then redistributes.
  static KernelArgs create(OpBuilder &b, gpu::GPUModuleOp module,
                           Type elementType, StringRef name, int64_t threads,
                           ArrayRef<::fa::abi::Param> params,
                           int64_t blocksPerSM = 1);
  gpu::GPUFuncOp func() const { return kernel; }
  /// The argument `name` of the ABI table (a memref or an i64).
  Value operator[](StringRef name) const;
  /// An i64 argument as an index.
  Value index(OpBuilder &b, StringRef name) const;
  /// The kernel's values for the attention's captured `captures` (L2
  /// values), built here from the capture parameters: a tensor as a
  /// memref view of its buffer with the tensor's shape (row-major; its
  /// dynamic extents from their parameters), a scalar converted to its
  /// type.
  SmallVector<Value> captureValues(OpBuilder &b, Location loc,
                                   ValueRange captures) const;

private:
  mutable gpu::GPUFuncOp kernel; // op handles are not const-correct
  std::vector<std::string> names;
};

struct GridCoords;

/// The KV tiles one Q tile visits, in the order its loop takes them: a
/// range (tile j at begin + j·block_n), or in a block-sparse kernel the
/// launch's block mask (KernelAbi.h's BlockMask): the tiles of the Q
/// block's partial KV blocks, then of its full ones, kv_block / block_n
/// tiles per block. Counts and indices read from the lists are clamped to
/// the blocks that exist, so that no list makes the kernel read past K, V
/// or the lists.
struct KeyTiles {
  Value count; ///< tiles in all (index)
  /// Range: the first key. Lists: null.
  Value begin;
  /// Lists: the first `maskedCount` tiles are partial blocks' (the mask is
  /// evaluated), the rest full blocks' (it is not). Null for a range.
  Value maskedCount;
  Value partialBlocks;          ///< lists: partial blocks (index)
  Value partialList, fullList;  ///< kv_indices, full_kv_indices
  Value listRow;                ///< lists: this Q block's row's first entry
  Value lastBlock;              ///< lists: the largest KV block index
  int64_t blockN = 0, kvBlock = 0;

  /// The tiles of Q tile `grid` (GridCoords::visibleKeyBlocks for a
  /// range).
  static KeyTiles build(OpBuilder &b, Location loc, const KernelArgs &args,
                        const AttentionKernelConfig &c, const GridCoords &grid);
  bool listed() const { return static_cast<bool>(partialList); }
  /// The first key of tile `j` (index).
  Value keyStart(OpBuilder &b, Location loc, Value j) const;
  /// The same tiles, none where `keep` (i1) is false.
  KeyTiles onlyIf(OpBuilder &b, Location loc, Value keep) const;
};

/// Where this thread block is in the problem.
struct GridCoords {
  Value queryBlock, head, batch, kvHead;
  Value queryStart; ///< q0 = queryBlock · block_m
  Value queryLen, keyLen;
  /// Reads the grid (Q block, head, batch). Masked kernels take the Q
  /// blocks in reverse order: the last blocks see the most keys, so they
  /// should not form the tail of the grid.
  static GridCoords build(OpBuilder &b, Location loc, const KernelArgs &args,
                          const AttentionKernelConfig &c);
  /// Tile `tile` (an index in [0, tiles)) of a persistent kernel, in the
  /// grid's order: Q blocks fastest (the last first when masked), then
  /// heads, then batches. The blocks resident at once then share a few
  /// heads' K and V in L2; ordering by sections of heads that fit L2 (FA3's
  /// swizzle) was slower.
  static GridCoords forTile(OpBuilder &b, Location loc, const KernelArgs &args,
                            const AttentionKernelConfig &c, Value tile);
  /// Member `member` (0 or 1, i32) of Q-block pair `pair` (an index in
  /// [0, ceil(T / 2) · Hq · B), T = ceil(M / block_m)): pairs fastest
  /// within a head, then heads, then batches; pair k is Q blocks T - 1 - k
  /// (member 0, the one that sees most keys) and k. Where T is odd, the
  /// middle pair's second member is past the last Q block (queryStart >=
  /// M: a tile with no rows, which the schedule gives no KV tiles).
  static GridCoords forPairedTile(OpBuilder &b, Location loc, const KernelArgs &args,
                                  const AttentionKernelConfig &c, Value pair,
                                  Value member);
  /// The KV tiles this Q block sees under the mask: the first key (a
  /// multiple of block_n) and the number of block_n tiles from it.
  std::pair<Value, Value> visibleKeyBlocks(OpBuilder &b, Location loc,
                                           const AttentionKernelConfig &c) const;
  /// The transpose, for the backward: the Q blocks of this head that see
  /// the KV block at `keyStart`: the first query row and the number of
  /// block_m blocks from it.
  std::pair<Value, Value> visibleQueryBlocks(OpBuilder &b, Location loc,
                                             const AttentionKernelConfig &c,
                                             Value keyStart) const;
  /// Each per-head score input of this block's head, loaded from its
  /// parameter: values[batch · strideB + head] (ALiBi's slope).
  SmallVector<Value> headScoreInputs(OpBuilder &b, Location loc,
                                     const KernelArgs &args,
                                     ArrayRef<HeadScoreInput> inputs) const;
  /// e4m3: (Q's · K's, V's) descale of this block's (batch, KV head):
  /// each X_descale[batch · descale_stride_b + kvHead · descale_stride_h].
  std::pair<Value, Value> descales(OpBuilder &b, Location loc,
                                   const KernelArgs &args) const;
  /// batch · stride_b + head · stride_h for tensor `prefix` ("q", "o", ...).
  Value tensorBase(OpBuilder &b, Location loc, const KernelArgs &args,
                   StringRef prefix, Value headIndex) const;
};

/// The tiles one thread block computes: the loop `for n = first; n <
/// count; n += step` and where its n-th tile is.
struct BlockTiles {
  TileOrder order = TileOrder::PerBlock;
  Value count, first, step; ///< the loop's bounds (index)
  Value pairFirst, pairStep; ///< Paired: blockIdx.x, gridDim.x (index)
  static BlockTiles build(OpBuilder &b, Location loc, const KernelArgs &args,
                          const AttentionKernelConfig &c, TileOrder order);
  bool persistent() const { return order != TileOrder::PerBlock; }
  /// Where the loop's tile `n` is (GridCoords::forTile, forPairedTile or
  /// build).
  GridCoords coords(OpBuilder &b, Location loc, const KernelArgs &args,
                    const AttentionKernelConfig &c, Value n) const;
  /// `grid`'s KV tiles (KeyTiles::build), none for a Paired null tile
  /// (no rows: queryStart >= M).
  KeyTiles keyTiles(OpBuilder &b, Location loc, const KernelArgs &args,
                    const AttentionKernelConfig &c, const GridCoords &grid) const;
};

/// Runs `body` (an scf.if) where `condition` (i1) holds, and in thread 0
/// of the block (`threadId` the block's thread index).
void buildIf(OpBuilder &b, Location loc, Value condition,
             function_ref<void(OpBuilder &)> body);
/// `then` where `condition` holds, `otherwise` where it does not.
void buildIfElse(OpBuilder &b, Location loc, Value condition,
                 function_ref<void(OpBuilder &)> then,
                 function_ref<void(OpBuilder &)> otherwise);
void inFirstThread(OpBuilder &b, Location loc, Value threadId,
                   function_ref<void(OpBuilder &)> body);

/// `bytes` of dynamic shared memory as an i8 memref at a 1024-byte aligned
/// base (docs/toolchain.md: gpu.dynamic_shared_memory is misaligned in MLIR 22).
Value sharedMemoryBase(OpBuilder &b, gpu::GPUModuleOp module, Location loc,
                       int64_t bytes);

/// The splat value of a constant or filled (linalg.fill) tile, or null:
/// the distributed math rebuilds such tiles with their layout instead of
/// cloning them.
Attribute splatOf(Value value);

/// An fa.apply_mask cloned into a loop whose tiles need no mask (every
/// pair visible: the schedules' unmasked loops): its result maps to the
/// scores' clone `scores` as they are. A diagnostic on `mask` if the
/// scores could not be placed (null).
LogicalResult mapUnmaskedScores(Operation *mask, Value scores, IRMapping &mapping);

/// Places a tile op cloned into a kernel (forward or backward) at the
/// kernel's coordinates: a mask, a bias or a variant at `grid`'s Q rows,
/// the KV tile at `keyStart` and M, N; a variant also at the grid's batch
/// and query head, its captures the kernel's values `mapping` holds. Other
/// ops are left as they are. A diagnostic on `original` where a capture
/// has no kernel value.
LogicalResult placeInKernel(Operation *clone, const GridCoords &grid,
                            Value keyStart, const IRMapping &mapping,
                            Operation *original);

/// `tile` (a ranked f32 tensor, any layout) times the constant `factor`,
/// one multiply per element: how the backward applies a deferred scale.
Value scaleTile(OpBuilder &b, Location loc, Value tile, FloatAttr factor);

/// S (`scores`) and its masked forms, if besides fa.apply_mask (which
/// keeps -inf, whatever the scale) only uses `mayRead` accepts read them:
/// the values a kernel may hold as q·k, their scale deferred to where it
/// folds into other work (the exponent's FFMA). Empty if another op reads
/// one.
llvm::DenseSet<Value>
scoresHeldUnscaled(QKScoresOp scores,
                   llvm::function_ref<bool(OpOperand &)> mayRead);

/// The fused loop's math, placed in a kernel.
class DistributedMath {
public:
  /// `layout` is the accumulators' #fa.fragment layout.
  DistributedMath(const FusedAttention &attention, FragmentLayoutAttr layout);

  /// The KV loop's carried values at the distributed level (layouts set;
  /// the running sum stays quad-partial) and their initial values.
  SmallVector<Value> initialLoopValues(OpBuilder &b, Location loc);

  /// Produces a tile the math reads (K or V): called once, right before the
  /// first op that reads it, so the strategy can wait for it there.
  using TileSource = std::function<Value(OpBuilder &)>;

  /// Clones one iteration of the KV loop body at the builder: `keyStart` is
  /// the tile's first key, `carried` the loop's values; returns the values
  /// to yield. Mask and bias ops get the kernel's coordinates.
  FailureOr<SmallVector<Value>>
  emitLoopBody(OpBuilder &b, const GridCoords &grid, Value keyStart,
               ValueRange carried, Value queryTile, TileSource keyTile,
               TileSource valueTile);

  /// The P·V a pipelined body leaves for the next one: P (16-bit) and
  /// where its V tile comes from. `probs` null: none (the first body).
  struct DeferredProduct {
    Value probs;
    TileSource valueTile;
  };
  /// Hooks a pipelined body calls between its steps.
  struct PipelineHooks {
    /// Before the first MMA is issued, and after the last (pingpong).
    std::function<void(OpBuilder &)> beforeIssue, afterIssue;
    /// After S is waited for (its K tile can be released), and after the
    /// deferred P·V is (its V tile can).
    std::function<void(OpBuilder &)> scoresDone, productDone;
  };

  /// The loop body software-pipelined for asynchronous MMAs (sm_90a), as
  /// FlashAttention-3 orders it: issue S_j = Q·K_jᵀ, then `previous`'s P·V
  /// (acc + P_{j-1}·V_{j-1}); wait for S_j with one MMA group in flight;
  /// the mask and softmax of j under that P·V; wait for it; rescale by
  /// j's factor. P_j is not multiplied: the values to carry are the loop's
  /// (acc holding the rescaled sum without P_j·V_j), then P_j.
  FailureOr<SmallVector<Value>>
  emitPipelinedBody(OpBuilder &b, const GridCoords &grid, Value keyStart,
                    ValueRange carried, Value queryTile, TileSource keyTile,
                    const DeferredProduct &previous,
                    const PipelineHooks &hooks);

  /// The last tile's deferred acc + P·V, waited for: the loop's values
  /// with acc complete (`carried` without the trailing P).
  SmallVector<Value> emitDeferredProduct(OpBuilder &b, ValueRange carried,
                                         const DeferredProduct &last,
                                         const PipelineHooks &hooks);

  /// The type P is carried in between pipelined bodies (the MMA's input
  /// type, with the accumulator layout).
  RankedTensorType deferredProbsType() const;

  /// e4m3: the kernel's values of the attention's descales
  /// (FusedAttention::scoreDescale, valueDescale), for the bodies and the
  /// epilogue that follow.
  void setDescales(Value score, Value value) {
    scoreDescale = score;
    valueDescale = value;
  }

  /// The kernel's values of the attention's per-head score inputs
  /// (FusedAttention::headInputs, as GridCoords::headScoreInputs loads
  /// them), for the bodies that follow.
  void setHeadScoreInputs(ValueRange values) {
    headInputValues.assign(values.begin(), values.end());
  }
  /// The kernel's values of the attention's captures
  /// (FusedAttention::captures, as KernelArgs::captureValues builds them).
  void setCaptureValues(ValueRange values) {
    captureValues.assign(values.begin(), values.end());
  }
  /// The same, loaded here at `grid`'s batch and head.
  void loadHeadScoreInputs(OpBuilder &b, Location loc, const GridCoords &grid,
                           const KernelArgs &args) {
    setHeadScoreInputs(grid.headScoreInputs(b, loc, args, attention.headInputs));
  }

  /// The bodies emitted next cover tiles every key of which every query
  /// sees (a schedule's interior tiles): their masks are not emitted.
  void setTilesUnmasked(bool unmasked) { tilesUnmasked = unmasked; }
  /// The unmasked tiles are a block mask's full blocks (a block-sparse
  /// kernel): the mask_mod is skipped there too, and fa.apply_mask keeps
  /// only the sequence bound (one uniform test per tile: a full block may
  /// end past N).
  void setUnmaskedTilesListed(bool listed) { unmaskedTilesListed = listed; }

  /// Clones the epilogue after the loop; returns (O tile, LSE rows).
  FailureOr<std::pair<Value, Value>> emitEpilogue(OpBuilder &b,
                                                  ValueRange loopResults);

  /// The distributed type of an L2 value: rank 2 and rank 1 tiles get the
  /// fragment layout (rows quad-partial, scores with a deferred scale,
  /// where the analysis found them so).
  Type distribute(Value l2Value) const;

private:
  Value lookup(OpBuilder &b, Value l2Value);
  /// Sets up the mapping for one body (coordinates, tiles, carried values).
  void beginBody(const GridCoords &coords, Value tileStart, ValueRange carried,
                 Value queryTile);
  /// Index of the accumulator among the loop's carried values.
  unsigned accumulatorIndex() const;
  Value fullRows(OpBuilder &b, Value value);
  LogicalResult cloneOp(OpBuilder &b, Operation *op);

  FusedAttention attention; // op handles: cheap to copy, not const-correct
  FragmentLayoutAttr layout;
  void findQuadPartialRows();
  void findDeferredScores();

  /// L2 values whose row sums stay quad-partial (the running sum).
  llvm::DenseSet<Value> quadPartial;
  /// Score tiles held unscaled (S / c), and c.
  llvm::DenseSet<Value> deferredScale;
  FloatAttr scoreScale;
  /// The deferred scores also leave their run-time descale (e4m3) to the
  /// consumers.
  bool scoreDescaleDeferred = false;
  /// Ops of the loop body that only compute the K/V tiles (slices, pads).
  llvm::DenseSet<Operation *> tileFeeders;
  IRMapping mapping;
  DenseMap<Value, Value> fullRowsOf;
  // Per emitted body: where tiles and coordinates come from.
  std::function<Value(OpBuilder &, Value)> tileFor;
  const GridCoords *grid = nullptr;
  Value keyStart;
  Value scoreDescale, valueDescale; ///< the kernel's (setDescales)
  SmallVector<Value> headInputValues; ///< setHeadScoreInputs
  SmallVector<Value> captureValues;   ///< setCaptureValues
  bool tilesUnmasked = false;       ///< setTilesUnmasked
  bool unmaskedTilesListed = false; ///< setUnmaskedTilesListed
  /// Maps the attention's run-time scalars to the kernel's.
  void mapRunTimeScalars();
};

/// O's element type for inputs of `input`: bf16 for e4m3 (KernelAbi.h's
/// outputElementTypeName, FlashAttention-3's fp8 forward), `input` otherwise.
Type outputElementTypeOf(Type input);

/// O's fragment stored from the registers by the rows that exist
/// (`fa.store_fragment`).
void storeOutputFromRegisters(OpBuilder &b, Location loc, Value output,
                              const KernelArgs &args, const GridCoords &grid);

/// The epilogue after the KV loop (`math.emitEpilogue`), then O and LSE
/// stored by the rows that exist (`fa.store_fragment`): every chip's end.
/// `storeOutput`, if given, stores O instead (sm_90a's TMA store).
LogicalResult emitEpilogueAndStore(
    OpBuilder &b, Location loc, DistributedMath &math, ValueRange loopResults,
    const KernelArgs &args, const GridCoords &grid,
    llvm::function_ref<void(OpBuilder &, Value)> storeOutput = nullptr);

} // namespace fa
} // namespace mlir

#endif // FA_CONVERSION_FATOGPU_KERNELSKELETON_H
