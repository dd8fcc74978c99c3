//===- BackwardKernel.h - the GPU backward's analysis and math ---*- C++ -*-===//
//
// Part of fa-mlir.
//
// The backward's half of the GPU lowering, on the same split as the
// forward's (AttentionKernel.h, KernelSkeleton.h): fa-recompute-backward's
// L2 loop nest is read once (`analyzeAttentionBackward`), a chip's strategy
// builds the schedule of the main kernel (KV blocks outer, one thread block
// per KV block), and `BackwardMath` clones the Q-block loop's tile ops into
// it with layouts on their tensors. The preprocess (D = rowsum(dO ∘ O)) and
// postprocess (dQ to the input type) kernels are chip-neutral
// (`buildBackwardEdgeKernels`): their math is the L2 IR's fa.row_dot and
// arith.truncf, over tiles read with fa.load_fragment.
//
// Kernels: NAME_preprocess, NAME_main, NAME_postprocess (KernelAbi.h's
// BackwardStep; the runtime launches them in that order).
//
//===----------------------------------------------------------------------===//

#ifndef FA_CONVERSION_FATOGPU_BACKWARDKERNEL_H
#define FA_CONVERSION_FATOGPU_BACKWARDKERNEL_H

#include "fa/Conversion/FAToGPU/KernelSkeleton.h"

#include "fa/runtime/KernelAbi.h"

namespace mlir {
namespace fa {

/// fa-recompute-backward's loop nest, as the GPU lowering reads it.
struct AttentionBackward {
  func::FuncOp func;
  RowDotOp rowDot;            ///< D = rowsum(dO ∘ O); null in the negative control
  arith::TruncFOp gradQueryCast; ///< dQ (f32 accumulator) to the input type
  scf::ForOp queryLoop; ///< carries (dK_j, dV_j, dQ), inside the KV loop
  QKScoresOp scores;
  TileMatmulOp gradValue;  ///< dV_j += Pᵀ dO_i     {transpose_a}
  TileMatmulOp gradProbs;  ///< dP = dO_i V_jᵀ      {transpose_b}
  TileMatmulOp gradKey;    ///< dK_j += α dSᵀ Q_i   {transpose_a}
  TileMatmulOp gradQuery;  ///< dQ_i += α dS K_j
  Value queryTile, keyTile, valueTile, gradOutTile; ///< [BM|BN, D|Dv]
  Value lseRows, rowDotRows;  ///< [BM] f32
  Value gradQueryTile;        ///< gradQuery's accumulator: dQ's slice
  SmallVector<HeadScoreInput> headInputs; ///< per head (ALiBi's slope)
  /// The score_mod / mask_mod ops' captured values (one list, as the
  /// forward's FusedAttention::captures): the main kernel's trailing
  /// parameters.
  SmallVector<Value> captures;
};

/// Finds the backward nest in `func`; a diagnostic on `func` if it is not
/// fa-recompute-backward's form.
FailureOr<AttentionBackward> analyzeAttentionBackward(func::FuncOp func);

/// The configuration of the backward nest (its block sizes, mask, scale).
AttentionKernelConfig configOf(const AttentionBackward &backward);

/// The column groups (Tuning.h's BackwardColumnGroups) that 16 rows per
/// warp give a tile: a side with fewer rows than the warps' splits its
/// columns.
inline BackwardColumnGroups backwardColumnGroups(const AttentionKernelConfig &c) {
  auto groupsOver = [&](int64_t rows) {
    return rows < 16 * c.warps ? 16 * c.warps / rows : 1;
  };
  return {groupsOver(c.blockM), groupsOver(c.blockN)};
}

/// α of dK_j += α·dSᵀQ_i and dQ_i += α·dS·K_j when they share it (the
/// softmax scale), else null. The GPU kernels apply it once at the end —
/// to dK_j before its store (BackwardMath::finalGradients) and to dQ in
/// the postprocess, as FA2 does — rather than to every dS element of every
/// step; both sums are linear in dS.
FloatAttr deferredGradientScale(const AttentionBackward &backward);

/// The Q-block loop body, placed in a kernel.
class BackwardMath {
public:
  /// `queryRows` lays out tiles of block_m rows (S, P, dP, dS, dQ_i, LSE,
  /// D), `keyRows` tiles of block_n rows (dK_j, dV_j); `gradQueryRows`,
  /// when given, dQ_i instead (only with Sources::gradQueryFromShared: its
  /// product then reads dS from shared memory, in any warp layout).
  BackwardMath(const AttentionBackward &backward, FragmentLayoutAttr queryRows,
               FragmentLayoutAttr keyRows,
               FragmentLayoutAttr gradQueryRows = FragmentLayoutAttr());

  /// dK_j and dV_j before the first Q block: zeros.
  SmallVector<Value> initialGradients(OpBuilder &b, Location loc);
  /// dK_j and dV_j (f32) as stored, after the last Q block: dK_j times the
  /// deferred α (deferredGradientScale).
  SmallVector<Value> finalGradients(OpBuilder &b, Location loc,
                                    ValueRange gradients) const;

  /// Where the body's inputs come from and where dQ_i goes; each is called
  /// once per body, right before the first op that needs it.
  struct Sources {
    /// The shared tile (Q, dO, K, V) or the rows (LSE, D) for an L2 tile.
    std::function<Value(OpBuilder &, Value l2Tile)> tile;
    /// Writes a fragment that `matmul` reads transposed (P for dV's, dS for
    /// dK's) where it can, and returns the tile it will read once
    /// `sharedWritten` has run.
    std::function<Value(OpBuilder &, TileMatmulOp matmul, Value fragment)>
        transposedOperand;
    /// Makes every tile transposedOperand wrote readable (a barrier); called
    /// once, before the first matmul that reads one.
    std::function<void(OpBuilder &)> sharedWritten;
    /// dQ_i (f32; α applied unless deferred to the postprocess,
    /// deferredGradientScale) added into the accumulator: part `part`
    /// of gradQueryParts (its columns [part·D/n, (part+1)·D/n)).
    std::function<void(OpBuilder &, Value gradQuery, int64_t part)>
        accumulateGradQuery;
    /// dQ_i = dS·K_j reads dS from the tile transposedOperand wrote for
    /// dK (after sharedWritten, with the transposed matmuls) instead of
    /// from registers: where each thread holds only part of dS's columns
    /// (#fa.fragment's columnGroups). accumulateGradQuery follows it.
    bool gradQueryFromShared = false;
    /// dQ_i from shared dS computed in this many column parts, one after
    /// another, each added by accumulateGradQuery before the next: only
    /// one part's accumulators live beside dK_j's and dV_j's (the step's
    /// register peak at D = 256). keyColumns returns K_j's columns of a
    /// part as a shared tile.
    int64_t gradQueryParts = 1;
    std::function<Value(OpBuilder &, int64_t part)> keyColumns;
  };

  /// Clones one Q block's step at the builder: `gradients` are (dK_j,
  /// dV_j); returns their new values. Masks and biases get `grid`'s
  /// coordinates (its queryStart is this Q block's first row).
  ///
  /// Two representation choices, as the forward's (docs/gpu.md): the
  /// matmuls that read an operand transposed (dV += Pᵀ dO, dK += dSᵀ Q)
  /// come last, after every operand is written, so that one barrier
  /// serves them all and dQ_i's MMAs run while the writes land; and an
  /// α that every matmul reading dS applies (scale) is applied once at the
  /// end (deferredGradientScale), or else to dS once before it is rounded
  /// to the MMA type, instead of to each product.
  FailureOr<SmallVector<Value>> emitBody(OpBuilder &b, const GridCoords &grid,
                                         Value keyStart, ValueRange gradients,
                                         const Sources &sources);

  /// The kernel's values of the backward's per-head score inputs
  /// (AttentionBackward::headInputs, as GridCoords::headScoreInputs loads
  /// them), for the bodies emitted next.
  void setHeadScoreInputs(ValueRange values) {
    headInputValues.assign(values.begin(), values.end());
  }
  /// The kernel's values of the captured operands (KernelArgs::captureValues).
  void setCaptureValues(ValueRange values) {
    captureValues.assign(values.begin(), values.end());
  }
  /// The same, loaded here at `grid`'s batch and head.
  void loadHeadScoreInputs(OpBuilder &b, Location loc, const GridCoords &grid,
                           const KernelArgs &args) {
    setHeadScoreInputs(grid.headScoreInputs(b, loc, args, backward.headInputs));
  }

  /// The bodies emitted next cover Q blocks that see every key of the KV
  /// block (a schedule's interior steps): their masks are not emitted.
  void setTilesUnmasked(bool unmasked) { tilesUnmasked = unmasked; }

  /// The distributed type of an L2 value.
  Type distribute(Value l2Value) const;

  /// The LSE or D rows (`l2Rows`: backward.lseRows or rowDotRows) of the Q
  /// block at `at`, read from the kernel's "lse" or "delta" with rows past
  /// M padded (LSE +inf, so P = 0; D 0): the tile source both chips use.
  /// `predicated` (for rows loaded a step before their use): fa.load_fragment's
  /// flag, the padding in the register and a missing row's load not issued.
  Value loadQueryRows(OpBuilder &b, Location loc, const KernelArgs &args,
                      const GridCoords &at, Value l2Rows,
                      bool predicated = false) const;

private:
  Value lookup(OpBuilder &b, Value l2Value);
  LogicalResult cloneOp(OpBuilder &b, Operation *op);
  /// The deferred dQ_i = dS·K_j as Sources::gradQueryParts matmuls over
  /// K_j's column parts, each handed to accumulateGradQuery.
  LogicalResult emitGradQueryParts(OpBuilder &b, Operation *op,
                                   const IRMapping &operands);
  void findUnscaledScores();
  /// Whether the clone of `matmul` drops its α (folded into its left
  /// operand, or deferred to the end).
  bool dropsAlpha(TileMatmulOp matmul) const;

  AttentionBackward backward; // op handles: cheap to copy, not const-correct
  FragmentLayoutAttr queryRows, keyRows, gradQueryRows;
  /// The body's ops that compute dK_j, dV_j and dQ_i from the tiles.
  llvm::DenseSet<Operation *> math;
  /// L2 values of block_n rows (dK_j, dV_j and their updates).
  llvm::DenseSet<Value> keyRowValues;
  /// S and its masked form, held as q·k: the scale folds into the
  /// exponent's FFMA (the layout's deferredScale), where only the mask and
  /// fa.exp_shifted read them (no softcap, no ALiBi).
  llvm::DenseSet<Value> unscaledScores;
  FloatAttr scoreScale;
  IRMapping mapping;
  /// P and dS rounded to the MMA type (times the α folded into them), once
  /// per body.
  DenseMap<Value, Value> roundedOf;
  /// The α each rounded L2 value carries (FloatAttr() if none).
  DenseMap<Value, FloatAttr> foldedAlpha;
  /// deferredGradientScale(backward): applied at the end, not per step.
  FloatAttr gradientScale;
  /// Matmuls whose transposed operand is written, to be cloned last.
  SmallVector<std::pair<Operation *, IRMapping>> deferred;
  /// The shared tile transposedOperand returned, per L2 left operand.
  DenseMap<Value, Value> sharedOf;
  const Sources *sources = nullptr;
  const GridCoords *grid = nullptr;
  Value keyStart;
  SmallVector<Value> headInputValues; ///< setHeadScoreInputs
  SmallVector<Value> captureValues;   ///< setCaptureValues
  bool tilesUnmasked = false; ///< setTilesUnmasked
};

/// The main kernel block's place in the problem: its first key, KV head and
/// batch, from the grid (ceil(N / block_n), Hkv, B). Built deterministic
/// or under a mask, the blocks are taken in launch order with the (KV
/// head, batch) pairs fastest within sections of as many pairs as keep
/// their Q, dO and dq_acc rows within `sectionBytes` of L2 (the chip's
/// section_mib knob); under a mask the last KV block first when
/// deterministic, else the first (BackwardOrder.cpp says why).
struct KeyBlockPlace {
  Value keyStart, kvHead, batch;
  static KeyBlockPlace build(OpBuilder &b, Location loc, const KernelArgs &args,
                             const AttentionKernelConfig &c, int64_t sectionBytes);
};

/// The deterministic mode's order of dQ_i's additions (BackwardOrder.cpp):
/// this KV block's turn at Q block `at` (its counter in dq_semaphore and
/// the value it waits for), and whether the launch asked for it.
struct GradQueryTurn {
  Value semaphores, counter, expected; ///< memref<?xi32>, index, i32
  Value enabled;                       ///< i1: the launch's `deterministic`
  static GradQueryTurn build(OpBuilder &b, Location loc, const KernelArgs &args,
                             const AttentionKernelConfig &c, const GridCoords &at,
                             Value keyStart);
  /// The turn at the last of a Q-block loop's `blocks` Q blocks (block_m
  /// rows each from row `begin` of `at`'s head), whose pass the loop leaves
  /// to after it; and whether the loop ran at all (blocks > 0).
  static std::pair<GradQueryTurn, Value>
  buildLast(OpBuilder &b, Location loc, const KernelArgs &args,
            const AttentionKernelConfig &c, GridCoords at, Value keyStart, Value begin,
            Value blocks);
  /// This block's turn at the Q block `rows` rows above (a multiple of 16:
  /// the counters' rows), whose pass a step late is due now.
  GradQueryTurn before(OpBuilder &b, Location loc, int64_t rows) const;
  /// The calling thread spins (acquire loads) until the turn is this
  /// block's: the earlier blocks' additions are then visible to it.
  void await(OpBuilder &b, Location loc) const;
  /// Passes the turn on with a release increment: the caller must have
  /// ordered this block's additions before it (their completion, and a
  /// barrier or a proxy fence).
  void pass(OpBuilder &b, Location loc) const;
  /// The counter now (a relaxed load, i32): read a step ahead of the
  /// turn, so that the wait at the turn is, once the blocks settle a step
  /// apart, a fence instead of a load's round trip (awaitPeeked).
  Value peek(OpBuilder &b, Location loc) const;
  /// The calling thread waits for the turn given the count `peeked`
  /// earlier, and where `passEarlier` (i1) holds first passes on its turn
  /// `rows` rows above (before). If the peeked count was already this
  /// block's, one acq_rel fence makes the relaxed load an acquire and
  /// releases what came before, so the earlier turn takes a relaxed
  /// increment; else the earlier turn is passed (release) and the thread
  /// spins as await does.
  void awaitPeeked(OpBuilder &b, Location loc, Value peeked, Value passEarlier,
                   int64_t rows) const;
  /// Runs `body` only when the launch asked for the order.
  void whenEnabled(OpBuilder &b, Location loc,
                   function_ref<void(OpBuilder &)> body) const {
    buildIf(b, loc, enabled, body);
  }
};

/// How the main kernel orders dq_acc's 8-row bands (KernelAbi.h's
/// gradQueryAccumulatorRows): row-major (what a TMA reduce-add or a staged,
/// coalesced addition writes), or the MMA accumulator's lane order for
/// additions straight from the fragment (fa.accumulate_fragment's
/// `mma_blocks`). The postprocess reads it back the same way.
enum class GradQueryOrder { RowMajor, MmaBlocks };

/// The preprocess and postprocess kernels (chip-neutral): NAME_preprocess
/// writes D = rowsum(dO ∘ O) (the L2 fa.row_dot) for kBackwardRowsPerBlock
/// query rows per block, NAME_postprocess dQ = the accumulator (in the
/// main kernel's `order`) in the input type (the L2 arith.truncf).
LogicalResult buildBackwardEdgeKernels(OpBuilder &b, gpu::GPUModuleOp module,
                                       const AttentionBackward &backward,
                                       const AttentionKernelConfig &c,
                                       StringRef name, GradQueryOrder order);

/// Threads of the preprocess and postprocess blocks: 16 rows per warp.
constexpr int64_t kBackwardEdgeThreads =
    2 * ::fa::abi::kBackwardRowsPerBlock;

/// The name of backward step `step`'s kernel: NAME_preprocess, ...
std::string backwardEntryName(StringRef name, ::fa::abi::BackwardStep step);

} // namespace fa
} // namespace mlir

#endif // FA_CONVERSION_FATOGPU_BACKWARDKERNEL_H
