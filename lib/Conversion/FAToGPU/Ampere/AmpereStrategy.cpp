//===- AmpereStrategy.cpp - what the sm_80 strategy builds ----------------===//
//
// Part of fa-mlir.
//
//===----------------------------------------------------------------------===//

#include "AmpereStrategy.h"
#include "AmpereSchedule.h"

#include "fa/Conversion/FAToGPU/BackwardKernel.h"

#include <algorithm>
#include <sstream>

using namespace mlir;
using namespace mlir::fa;
using namespace mlir::fa::ampere;

namespace {

class AmpereStrategy : public AttentionGPUStrategy {
public:
  StringRef chip() const override { return "sm_80"; }
  // PTX 7.0 (the default 6.0 aborts the process, docs/toolchain.md).
  StringRef ptxFeatures() const override { return "+ptx70"; }

  std::string unsupportedReason(const AttentionKernelConfig &c) const override {
    std::string operands = unsupported16BitOperands(chip(), c);
    if (!operands.empty())
      return operands;
    std::ostringstream os;
    if (c.blockM & (c.blockM - 1))
      os << "sm_80 block_m must be a power of two, got " << c.blockM;
    else if (c.blockM != 16 * c.warps && c.blockM != 32 * c.warps)
      os << "block_m must be 16 * warps or 32 * warps (" << 16 * c.warps
         << " or " << 32 * c.warps << "), got " << c.blockM;
    else if (c.blockN % 16 || (c.blockN & (c.blockN - 1)))
      os << "sm_80 block_n must be a power of two, at least 16, got " << c.blockN;
    else if (c.stages != 1 && c.stages != 2)
      os << "the sm_80 pipeline has 1 or 2 stages, got " << c.stages;
    else if (dynamicSharedMemoryBytes(c) > sharedMemoryBudget(c))
      os << "the tile needs " << dynamicSharedMemoryBytes(c)
         << " bytes of shared memory with " << c.stages << " K/V stage"
         << (c.stages == 1 ? "" : "s") << ", more than the budget's "
         << sharedMemoryBudget(c) << budgetSource(c);
    return os.str();
  }

  int64_t dynamicSharedMemoryBytes(const AttentionKernelConfig &c) const override {
    return SharedMemoryPlan(c).bytes;
  }

  Tile tunedTile(int64_t, int64_t, MaskKind, bool) const override {
    // Measured on the H100 at N = 8192 (docs/perf-notes.md, v3): two m16
    // tiles per warp (128 x 64) halve the ldmatrix traffic per mma and win
    // for D <= 128. D = 256 has no registers for that: FA2's 128 x 64 on 8
    // warps of 16 rows with one K/V stage (128 KB; forwardPipeline;
    // docs/perf-notes.md, thirteenth session).
    return {128, 64};
  }

  Pipeline forwardPipeline(int64_t blockM, int64_t blockN, int64_t headDim,
                           int64_t valueDim, bool) const override {
    // Past D = 128 a warp has registers for one m16 tile (O alone is 128
    // f32 a thread at Dv = 256): 16 rows per warp. Two K/V stages where
    // they fit in sm_80's shared memory, else one.
    bool wideHead = headDim > 128 || valueDim > 128;
    int64_t warps = wideHead ? std::clamp<int64_t>(blockM / 16, 1, 8) : 4;
    bool twoFit = SharedMemoryPlan::bytesFor(/*elementBytes=*/2, blockM, blockN,
                                             headDim, valueDim, 2) <=
                  kMaxSharedMemoryBytes;
    return {warps, twoFit ? 2 : 1};
  }

  LogicalResult buildForwardKernel(OpBuilder &builder, gpu::GPUModuleOp module,
                                   const FusedAttention &attention,
                                   const AttentionKernelConfig &c,
                                   StringRef name) const override {
    return buildAmpereForwardKernel(builder, module, attention, c, name);
  }

  std::string
  unsupportedBackwardReason(const AttentionKernelConfig &c) const override {
    // dK_j and dV_j stay in registers: [block_n, D] and [block_n, Dv] f32.
    std::string operands = unsupportedBackwardOperands(chip(), c, /*maxHeadDim=*/256);
    if (!operands.empty())
      return operands;
    std::ostringstream os;
    // 16 rows per warp on both sides, or 64 x 128 on 8 warps: S's keys
    // split over two groups of four warps (BackwardColumnGroups), dQ_i's
    // head dims in 64-column spans of K (ldmatrix.trans).
    bool rowsFit = c.blockM % (16 * c.warps) == 0 && c.blockN % (16 * c.warps) == 0;
    bool splitKeys = c.warps == 8 && c.blockM == 64 && c.blockN == 128;
    // D = 256: 32 x 64 or 64 x 64 on 8 warps, dK_j's, dV_j's and dQ_i's
    // columns over four groups (ampereBackwardColumnGroups): 32 or 64
    // columns a group.
    bool wideHead = c.headDim > 128 || c.valueDim > 128;
    if (wideHead && (c.headDim != 256 || (c.valueDim != 128 && c.valueDim != 256)))
      os << "the sm_80 backward takes D and Dv up to 128, or D = 256 with Dv = "
            "128 or 256, got D="
         << c.headDim << " Dv=" << c.valueDim;
    else if (wideHead && (c.warps != 8 || c.blockN != 64 ||
                          (c.blockM != 32 && c.blockM != 64)))
      os << "the sm_80 backward at D = 256 runs on 32 x 64 or 64 x 64 with 8 "
            "warps, got "
         << c.blockM << " x " << c.blockN << " (" << c.warps << " warps)";
    else if (!rowsFit && !splitKeys && !wideHead)
      os << "the sm_80 backward needs block_m and block_n multiples of "
         << 16 * c.warps << " (16 rows per warp), or 64 x 128 on 8 warps, got "
         << c.blockM << " x " << c.blockN << " (" << c.warps << " warps)";
    else if (splitKeys && !isSplitTileHeadDim(c.headDim))
      os << "the sm_80 backward on 64 x 128 splits dQ's head dims over two warp "
            "groups of 32 or 64 columns: D must be 64 or 128, got "
         << c.headDim;
    else if (c.blockN > 128)
      os << "the sm_80 backward takes block_n up to 128, got " << c.blockN;
    else if (backwardSharedMemoryBytes(c) > sharedMemoryBudget(c))
      os << "the backward tile needs " << backwardSharedMemoryBytes(c)
         << " bytes of shared memory, more than the budget's "
         << sharedMemoryBudget(c) << budgetSource(c);
    return os.str();
  }

  int64_t backwardSharedMemoryBytes(const AttentionKernelConfig &c) const override {
    return BackwardSharedMemoryPlan(c).bytes;
  }

  int64_t backwardWarpsFor(int64_t blockM, int64_t blockN, int64_t headDim,
                           int64_t) const override {
    // D = 64 or 128 on 64 x 128: 8 warps in FA2's 2-D layout
    // (ampereBackwardColumnGroups, docs/perf-notes.md); every other tile
    // on 4.
    // D = 64 on 128 x 128: 8 warps in FA2's D64 layout; D = 256 on 32 x 64
    // (dK_j's, dV_j's head dims over four groups).
    bool splitTile = blockM == 64 && blockN == 128 && isSplitTileHeadDim(headDim);
    bool wideTile = blockM == 128 && blockN == 128 && headDim == 64;
    return splitTile || wideTile || headDim > 128 ? 8 : 4;
  }

  int64_t defaultSharedMemoryBudget() const override { return kMaxSharedMemoryBytes; }

  /// Where the budget a refusal names comes from.
  static const char *budgetSource(const AttentionKernelConfig &c) {
    return c.sharedMemoryBudget ? " bytes (--shared-memory-budget)"
                                : " bytes (sm_80's default, an A100's opt-in "
                                  "maximum; --shared-memory-budget raises it)";
  }

  Tile tunedBackwardTile(int64_t headDim, int64_t valueDim, bool,
                         bool deterministic, int64_t budget) const override {
    // D = 64 and 128: 64 x 128 on 8 warps (S's keys split over two groups
    // of four): dK_j and dV_j over 8 warps instead of 4 (at D = 128 the
    // 64 x 64 kernel spills 344 B under the H100's JIT), and half the dQ
    // atomics of block_n 64 (D = 64: 5% faster forward + backward,
    // docs/perf-notes.md). D = 64 on 128 x 128 (FA2's D64 tile and 2-D
    // layout, ampereBackwardColumnGroups): 72 ldmatrix per 64 x 128 of
    // work against 88. Otherwise 16 rows per warp of 4 warps on both sides.
    if (headDim == 64)
      return {128, 128};
    // D = Dv = 256: 64 x 64 on 8 warps (FA2's tile on the H100) where the
    // budget holds its 208 KB (two Q/dO stages): forward + backward B4 H16
    // N4k on the H100, none -2.8%, causal -5.5% beside 32 x 64 (twentieth
    // session, calls 2 and 3); deterministic, none -5.1%, causal -2.8%
    // (one round, twenty-first session). Otherwise (an A100's 163 KB, the
    // default) 32 x 64. Dv = 128 (whose 64 x 64 fits 160 KB) stays on
    // 32 x 64: 64 x 64 is unmeasured there. The backward's operands are
    // 16-bit.
    if (headDim > 128) {
      int64_t wideBytes =
          BackwardSharedMemoryPlan(/*elementBytes=*/2, 64, 64, headDim, valueDim).bytes;
      bool wide = valueDim == 256 &&
                  wideBytes <= (budget ? budget : defaultSharedMemoryBudget());
      return wide ? Tile{64, 64} : Tile{32, 64};
    }
    if (isSplitTileHeadDim(headDim))
      return {64, 128};
    return {64, 64};
  }

  LogicalResult buildBackwardKernels(OpBuilder &builder, gpu::GPUModuleOp module,
                                     const AttentionBackward &backward,
                                     const AttentionKernelConfig &c,
                                     StringRef name) const override {
    // dQ_i is added from its fragment, into MMA-block order (so that each
    // warp's additions are coalesced; 20% faster forward + backward at
    // D = 128 than row-major, and 10% at D = 64 than staging it for
    // row-major additions: docs/perf-notes.md).
    if (failed(buildBackwardEdgeKernels(builder, module, backward, c, name,
                                        GradQueryOrder::MmaBlocks)))
      return failure();
    return buildAmpereBackwardMain(builder, module, backward, c, name);
  }

  void populateFragmentLoweringPatterns(
      const TypeConverter &converter,
      RewritePatternSet &patterns) const override {
    populateAmpereMmaPatterns(converter, patterns);
  }
};

} // namespace

SharedMemoryPlan::SharedMemoryPlan(int64_t elementBytes, int64_t blockM,
                                   int64_t blockN, int64_t headDim,
                                   int64_t valueDim, int64_t stages) {
  queryRow = sharedRowElements(headDim);
  keyRow = sharedRowElements(headDim);
  valueRow = sharedRowElements(valueDim);
  keyOffset = elementBytes * blockM * queryRow;
  valueOffset = keyOffset + elementBytes * stages * blockN * keyRow;
  bytes = valueOffset + elementBytes * stages * blockN * valueRow;
}

SharedMemoryPlan::SharedMemoryPlan(const AttentionKernelConfig &c)
    : SharedMemoryPlan(c.elementType.getIntOrFloatBitWidth() / 8, c.blockM,
                       c.blockN, c.headDim, c.valueDim, c.stages) {}

std::unique_ptr<AttentionGPUStrategy> ampere::createAmpereStrategy() {
  return std::make_unique<AmpereStrategy>();
}
