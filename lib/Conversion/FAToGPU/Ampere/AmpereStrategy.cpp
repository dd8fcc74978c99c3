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

  Tile tunedTile(int64_t headDim, int64_t valueDim, MaskKind mask,
                 bool e4m3) const override {
    return ampere::tunedTile(headDim, valueDim, mask, e4m3);
  }

  Pipeline forwardPipeline(int64_t blockM, int64_t blockN, int64_t headDim,
                           int64_t valueDim, bool) const override {
    return ampere::forwardPipeline(blockM, blockN, headDim, valueDim);
  }

  ArrayRef<ScheduleKnob> scheduleKnobs(KernelKind kind) const override {
    return ampere::scheduleKnobs(kind);
  }
  ScheduleKnobs tunedSchedule(const AttentionKernelConfig &c,
                              KernelKind kind) const override {
    return ampere::tunedSchedule(c, kind);
  }
  std::string unsupportedSchedule(const AttentionKernelConfig &c,
                                  KernelKind kind) const override {
    return ampere::unsupportedSchedule(c, kind);
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
    // columns over four groups (columnGroupsFor): 32 or 64
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
    return ampere::backwardWarpsFor(blockM, blockN, headDim);
  }

  int64_t defaultSharedMemoryBudget() const override { return kMaxSharedMemoryBytes; }

  /// Where the budget a refusal names comes from.
  static const char *budgetSource(const AttentionKernelConfig &c) {
    return c.sharedMemoryBudget ? " bytes (--shared-memory-budget)"
                                : " bytes (sm_80's default, an A100's opt-in "
                                  "maximum; --shared-memory-budget raises it)";
  }

  Tile tunedBackwardTile(int64_t headDim, int64_t valueDim, bool, bool,
                         int64_t budget) const override {
    return ampere::tunedBackwardTile(headDim, valueDim, budget);
  }

  LogicalResult buildBackwardKernels(OpBuilder &builder, gpu::GPUModuleOp module,
                                     const AttentionBackward &backward,
                                     const AttentionKernelConfig &c,
                                     StringRef name) const override {
    // dQ_i is added from its fragment, into MMA-block order, so that each
    // warp's additions are coalesced without staging them.
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
