//===- AttentionKernel.h - the GPU lowering's contracts ---------*- C++ -*-===//
//
// Part of fa-mlir.
//
// The GPU lowering is split the way docs/design.md states ("a schedule per chip,
// the math from the IR"):
//
//   fa-gpu-distribute{chip}       the chip's strategy builds the kernel's
//                                 schedule (grid, shared memory, the K/V
//                                 pipeline, barriers, the loop) and places
//                                 the fused L2 loop's tile ops in it, their
//                                 tensors re-typed with layout encodings
//                                 (#fa.fragment, #fa.operand, #fa.shared);
//   fa-gpu-lower-fragments{chip}  per-op conversion patterns turn the tile
//                                 ops into per-thread code: the chip-neutral
//                                 ones over #fa.fragment (FragmentPatterns.h),
//                                 the MMA ones from the strategy.
//
// This header holds what every chip shares: the analysis of the fused loop
// nest, the kernel configuration, and the strategy interface and registry.
//
//===----------------------------------------------------------------------===//

#ifndef FA_CONVERSION_FATOGPU_ATTENTIONKERNEL_H
#define FA_CONVERSION_FATOGPU_ATTENTIONKERNEL_H

#include "fa/Conversion/FAToGPU/FragmentPatterns.h"
#include "fa/Conversion/FAToGPU/Tuning.h"
#include "fa/Dialect/FA/IR/FAOps.h"
#include "fa/Dialect/FA/Utils/MaskUtils.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Transforms/DialectConversion.h"

#include <memory>
#include <string>
#include <vector>

namespace mlir {
namespace fa {

/// A per-head input of the score modification (ALiBi's slope today): an
/// f32 scalar of the L2 loop nest, defined outside its loops, that a kernel
/// loads once per (batch, query head) from a parameter, as
/// values[batch · strideB + head]. No chip schedule names one: the grid
/// loads them all (GridCoords::headScoreInputs) where a schedule has its
/// coordinates, and the math maps them into each body. A new input touches
/// findHeadScoreInputs, the kernel ABI table and its op's lowering.
struct HeadScoreInput {
  Value l2Value;
  StringRef values;  ///< the kernel parameter holding the values
  StringRef strideB; ///< the one holding their batch stride (0: shared)
};

/// The per-head score inputs the ops of `body` read, in the order of
/// their ops (fa.alibi_bias's slope).
SmallVector<HeadScoreInput> findHeadScoreInputs(Block *body);

/// The values the variant ops of `body` (fa.score_mod, fa.mask_mod) capture
/// into `captures`: one list for all of them, as the tiling passes make
/// it (the kernel's trailing parameters). A diagnostic on the op whose list
/// differs.
LogicalResult findVariantCaptures(Block *body, SmallVectorImpl<Value> &captures);

/// Whether `inputs` include ALiBi's slopes (the kernel takes them).
bool readsAlibiSlopes(ArrayRef<HeadScoreInput> inputs);

/// One fused online-softmax attention, as fa-tile + fa-fuse-online-softmax
/// left it: the KV loop (carrying m, l, acc), the tiles it reads, and the
/// epilogue values the Q-block loop stores.
struct FusedAttention {
  func::FuncOp func;
  scf::ForOp kvLoop;      ///< iter_args (m, l, acc)
  QKScoresOp scores;      ///< S = QKᵀ of the loop
  TileMatmulOp probsTimesValue; ///< acc += P·V
  Value queryTile;        ///< [BM, D], defined outside the KV loop
  Value keyTile;          ///< [BN, D], defined in the loop
  Value valueTile;        ///< [BN, Dv], defined in the loop
  Value outputTile;       ///< [BM, Dv] in the output dtype, stored to O
  Value lseRows;          ///< [BM] f32, stored to LSE (null without LSE)
  SmallVector<HeadScoreInput> headInputs; ///< loop-invariant, per head
  /// The values fa.score_mod / fa.mask_mod capture, defined outside the
  /// Q-block loop: the kernel's trailing parameters (KernelAbi.h's
  /// captureParams), in the order of the attention's captures.
  SmallVector<Value> captures;
  /// f8E4M3FN: Q's · K's descale on S (fa.qk_scores' operand) and V's on
  /// O (the epilogue's splat), f32 scalars defined outside the Q-block
  /// loop; null for 16-bit inputs.
  Value scoreDescale, valueDescale;
};

/// Finds the fused loop nest in `func`; a diagnostic on `func` if there is
/// none or more than one.
FailureOr<FusedAttention> analyzeFusedAttention(func::FuncOp func);

struct AttentionBackward; // BackwardKernel.h

/// The facts a strategy needs to plan a kernel.
struct AttentionKernelConfig {
  Type elementType;     ///< f16 or bf16
  int64_t headDim = 0;  ///< D
  int64_t valueDim = 0; ///< Dv
  int64_t blockM = 0;   ///< query rows per thread block
  int64_t blockN = 0;   ///< key rows per pipeline stage
  int64_t stages = 2;   ///< K/V shared-memory buffers
  int64_t warps = 4;
  MaskAttr mask;
  double scale = 0.0;   ///< natural units
  double softcap = 0.0;
  bool alibi = false;
  /// The score_mod / mask_mod captures' types (FusedAttention::captures):
  /// the kernel takes one parameter group per capture.
  SmallVector<Type> captures;
  /// The keys the mask_mod lets a query see (MaskUtils' interval analysis
  /// of the region): the KV loop visits only those, on top of `mask`'s.
  MaskModKeyBand keyBand;
  /// The block mask's block sizes (#fa.block_sparse on the nest), 0
  /// without one: the KV loop then walks the launch's lists of partial and
  /// full KV blocks (KeyTiles) instead of a range.
  int64_t sparseQBlock = 0, sparseKvBlock = 0;
  bool blockSparse() const { return sparseKvBlock != 0; }
  /// Whether a Q block's keys can differ with its place (a built-in mask,
  /// or a band bounded by the query): the schedules order such tiles so
  /// that the heavy ones do not form the grid's tail.
  bool tileWorkVaries() const {
    return mask.isMasking() || keyBand.fromQueryUpper || keyBand.fromQueryLower;
  }
  /// Backward: dQ added in a fixed order when the launch asks (KernelAbi.h's
  /// "deterministic"); without it the kernel has no ordering code at all,
  /// which would slow the default path.
  bool deterministic = false;
  /// Bytes of shared memory a block may take (fa-compile
  /// --shared-memory-budget); 0: the chip's default
  /// (AttentionGPUStrategy::defaultSharedMemoryBudget).
  int64_t sharedMemoryBudget = 0;
  /// The schedule's knobs (Tuning.h), set by resolveSchedule: the chip's
  /// tuned ones, then `scheduleOverrides`.
  ScheduleKnobs schedule;
  /// The knobs the build names (#fa.tile's schedule, fa-compile
  /// --schedule), as text.
  ScheduleOverrides scheduleOverrides;
};

/// `c`'s shared-memory budget in bytes: its own, or `chipDefault` where it
/// names none (AttentionGPUStrategy::sharedMemoryBudget).
inline int64_t sharedMemoryBudgetOf(const AttentionKernelConfig &c,
                                    int64_t chipDefault) {
  return c.sharedMemoryBudget ? c.sharedMemoryBudget : chipDefault;
}

/// The largest shared-memory budget a kernel may be built for: the opt-in
/// maximum per block of the largest chip the kernels run on (the H100's
/// and H200's 227 KB). The runtime refuses a kernel past its device's own
/// maximum at load (fa::detail::loadFunction).
constexpr int64_t kLargestSharedMemoryBudget = 227 * 1024;

/// Empty if `kilobytes` is a budget a kernel can be built for (0, the
/// chip's default, or 1 to kLargestSharedMemoryBudget / 1024); otherwise
/// the reason, one line.
std::string unsupportedSharedMemoryBudget(int64_t kilobytes);

/// What a loop body's tiles state, forward or backward: the element type,
/// block sizes and head dims (S's operands and V's tile), the mask of its
/// fa.apply_mask, the score scale and softcap, whether there is ALiBi.
AttentionKernelConfig configOfTiles(QKScoresOp scores, Value valueTile,
                                    Block *body, bool alibi);

/// The stages, warps and schedule overrides of the #fa.tile its tiling pass
/// recorded on `loop` or an enclosing op (fa-tile, fa-recompute-backward),
/// if any.
void readNestTiling(Operation *loop, AttentionKernelConfig &c);

/// The configuration of a fused attention (the tile from `fa.tile` on the
/// loop nest, defaults 2 stages and 4 warps without one).
AttentionKernelConfig configOf(FusedAttention attention);

/// A hardware strategy: the schedule of one chip.
class AttentionGPUStrategy {
public:
  virtual ~AttentionGPUStrategy();
  /// The chip this strategy targets ("sm_80").
  virtual StringRef chip() const = 0;
  /// The PTX ISA the kernel needs, as nvvm-attach-target's features.
  virtual StringRef ptxFeatures() const = 0;
  /// Empty if the config can be built; otherwise the reason, one line.
  virtual std::string unsupportedReason(const AttentionKernelConfig &c) const = 0;
  /// Bytes of dynamic shared memory the kernel needs.
  virtual int64_t dynamicSharedMemoryBytes(const AttentionKernelConfig &c) const = 0;
  /// The shared memory a block may take where the build names no budget:
  /// what the chip's kernels must fit to run on every part of the chip.
  virtual int64_t defaultSharedMemoryBudget() const = 0;
  /// `c`'s budget: its own, or the chip's default.
  int64_t sharedMemoryBudget(const AttentionKernelConfig &c) const {
    return sharedMemoryBudgetOf(c, defaultSharedMemoryBudget());
  }
  /// Threads per block: the MMA warps (c.warps), plus any the schedule
  /// adds (a producer warpgroup).
  virtual int64_t blockThreads(const AttentionKernelConfig &c) const {
    return 32 * c.warps;
  }
  /// Whether the kernel takes TMA tensor maps (KernelAbi.h's TensorMaps
  /// parameters).
  virtual bool usesTensorMaps() const { return false; }
  /// Whether the forward kernel of `c` stores O through a TMA map of its
  /// own (KernelAbi.h's OutputTensorMap parameter, o_tmap).
  virtual bool storesOutputByTensorMap(const AttentionKernelConfig &c) const {
    return false;
  }
  /// Whether the kernel is persistent (KernelAbi.h's TileScheduler): a
  /// grid of resident blocks, each looping over tiles.
  virtual bool persistentTiles(const AttentionKernelConfig &c) const {
    return false;
  }
  /// The tuned tile (block_m, block_n) for a head dim pair under `mask`
  /// (of e4m3 inputs if `e4m3`), used when the user names none.
  struct Tile {
    int64_t blockM, blockN;
  };
  virtual Tile tunedTile(int64_t headDim, int64_t valueDim, MaskKind mask,
                         bool e4m3) const = 0;
  /// The MMA warps and copy-pipeline stages of a forward kernel of a tile
  /// and head dims (D, Dv), of e4m3 inputs if `e4m3` (the tools write them
  /// into #fa.tile).
  struct Pipeline {
    int64_t warps, stages;
  };
  virtual Pipeline forwardPipeline(int64_t blockM, int64_t blockN,
                                   int64_t headDim, int64_t valueDim,
                                   bool e4m3) const {
    return {4, 2};
  }
  /// Builds `gpu.func @name` in `module`: the schedule, with the math of
  /// `attention` placed in it at the distributed level (fa-gpu-distribute).
  virtual LogicalResult buildForwardKernel(OpBuilder &builder,
                                           gpu::GPUModuleOp module,
                                           const FusedAttention &attention,
                                           const AttentionKernelConfig &c,
                                           StringRef name) const = 0;
  /// Empty if the chip builds the backward of `c`; otherwise the reason,
  /// one line.
  virtual std::string unsupportedBackwardReason(const AttentionKernelConfig &c) const {
    return (chip() + " has no GPU backward yet").str();
  }
  /// The MMA warps of the backward's main kernel for a tile and the head
  /// dims (D, Dv) it is built for.
  virtual int64_t backwardWarpsFor(int64_t blockM, int64_t blockN,
                                   int64_t headDim, int64_t valueDim) const {
    return forwardPipeline(blockM, blockN, headDim, valueDim, /*e4m3=*/false)
        .warps;
  }
  /// Threads per block of the backward's main kernel.
  virtual int64_t backwardBlockThreads(const AttentionKernelConfig &c) const {
    return 32 * c.warps;
  }
  /// Bytes of dynamic shared memory of the backward's main kernel.
  virtual int64_t backwardSharedMemoryBytes(const AttentionKernelConfig &c) const {
    return 0;
  }
  /// The tuned backward tile (block_m, block_n) for a head dim pair, of a
  /// kernel built `deterministic` (its dQ order) or not, within
  /// `sharedMemoryBudget` bytes (0: the chip's default).
  virtual Tile tunedBackwardTile(int64_t headDim, int64_t valueDim,
                                 bool masked, bool deterministic,
                                 int64_t sharedMemoryBudget) const {
    return {64, 64};
  }
  /// Builds the backward's NAME_preprocess, NAME_main and NAME_postprocess
  /// (KernelAbi.h's BackwardStep) in `module` (fa-gpu-distribute).
  virtual LogicalResult buildBackwardKernels(OpBuilder &builder,
                                             gpu::GPUModuleOp module,
                                             const AttentionBackward &backward,
                                             const AttentionKernelConfig &c,
                                             StringRef name) const;
  /// How the chip-neutral patterns of fa-gpu-lower-fragments should lower
  /// for this chip (FragmentPatterns.h); a kernel whose mask_per_warp knob
  /// differs says so on its fa.apply_mask ops (kMaskPerWarpAttrName).
  virtual FragmentLoweringOptions fragmentLoweringOptions() const {
    return {};
  }
  /// The knobs of the chip's `kind` kernels (Tuning.h), in manifest order.
  virtual ArrayRef<ScheduleKnob> scheduleKnobs(KernelKind kind) const {
    return {};
  }
  /// The tuned knobs of the `kind` kernel of `c` (the chip's Tuning.cpp).
  virtual ScheduleKnobs tunedSchedule(const AttentionKernelConfig &c,
                                      KernelKind kind) const {
    ScheduleKnobs knobs;
    knobs.maskPerWarp = fragmentLoweringOptions().maskPerWarp;
    return knobs;
  }
  /// Empty if the chip builds the `kind` kernel of `c` with c.schedule;
  /// otherwise the reason, one line, naming the knob.
  virtual std::string unsupportedSchedule(const AttentionKernelConfig &c,
                                          KernelKind kind) const {
    return "";
  }
  /// The chip's patterns for fa-gpu-lower-fragments: the MMAs, the
  /// shared-memory operands.
  virtual void populateFragmentLoweringPatterns(
      const TypeConverter &converter, RewritePatternSet &patterns) const = 0;
};

/// The strategy for a chip name, or null.
std::unique_ptr<AttentionGPUStrategy> createAttentionStrategy(StringRef chip);

/// The chips with a strategy, for diagnostics and --help ("sm_80").
std::string registeredChips();

/// The chip the tools target when none is named (the registry's first).
StringRef defaultChip();

/// The operand rule the 16-bit MMAs share (f16 or bf16; D and Dv multiples
/// of 8 from 8 to 256): the first line of a strategy's unsupportedReason,
/// "" when `c` keeps it.
std::string unsupported16BitOperands(StringRef chip,
                                     const AttentionKernelConfig &c);

/// The same for a backward, which also keeps dK and dV in registers: D
/// and Dv up to `maxHeadDim`. The first line of unsupportedBackwardReason.
std::string unsupportedBackwardOperands(StringRef chip,
                                        const AttentionKernelConfig &c,
                                        int64_t maxHeadDim);

/// Sets c.schedule to `strategy`'s tuned knobs for the `kind` kernel of
/// `c`, then to c.scheduleOverrides. Empty, or why not (one line): an
/// unknown knob, a bad value, one that means nothing for `c`, or one the
/// chip cannot build (unsupportedSchedule).
std::string resolveSchedule(const AttentionGPUStrategy &strategy,
                            AttentionKernelConfig &c, KernelKind kind);

/// Why `chip` cannot build `config` ("" if it can): an unknown chip, or the
/// strategy's reason. The one check fa-compile and the passes share.
std::string checkAttentionKernel(StringRef chip,
                                 const AttentionKernelConfig &config);

} // namespace fa
} // namespace mlir

#endif // FA_CONVERSION_FATOGPU_ATTENTIONKERNEL_H
