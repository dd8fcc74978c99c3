//===- HopperStrategy.cpp - what the sm_90a strategy builds ---------------===//
//
// Part of fa-mlir.
//
//===----------------------------------------------------------------------===//

#include "HopperStrategy.h"

#include "fa/Conversion/FAToGPU/BackwardKernel.h"

#include <algorithm>
#include <sstream>

using namespace mlir;
using namespace mlir::fa;
using namespace mlir::fa::hopper;

namespace {


class HopperStrategy : public AttentionGPUStrategy {
public:
  StringRef chip() const override { return "sm_90a"; }
  // wgmma, setmaxnreg and cp.async.bulk.tensor need PTX 8.0.
  StringRef ptxFeatures() const override { return "+ptx80"; }

  std::string unsupportedReason(const AttentionKernelConfig &c) const override {
    std::string operands = unsupported16BitOperands(chip(), c);
    if (!operands.empty())
      return operands;
    std::ostringstream os;
    if (c.blockM % kRowsPerWarpgroup ||
        c.blockM > kMaxConsumerGroups * kRowsPerWarpgroup)
      os << "sm_90a block_m must be 64, 128 or 192 (64 query rows per "
            "consumer warpgroup, at most "
         << kMaxConsumerGroups << "), got " << c.blockM;
    else if (c.warps != c.blockM / 16)
      os << "sm_90a kernels have one MMA warp per 16 query rows: warps must "
            "be block_m / 16 = "
         << c.blockM / 16 << ", got " << c.warps;
    else if (c.blockN % 16 || c.blockN > 256)
      os << "sm_90a block_n must be a multiple of 16 up to 256 (wgmma's N), got "
         << c.blockN;
    else if (c.stages < 2 || c.stages > 4)
      os << "the sm_90a K/V rings have 2 to 4 stages, got " << c.stages;
    else if (dynamicSharedMemoryBytes(c) > kMaxSharedMemoryBytes)
      os << "the tile needs " << dynamicSharedMemoryBytes(c)
         << " bytes of shared memory, more than sm_90a's "
         << kMaxSharedMemoryBytes;
    return os.str();
  }

  int64_t dynamicSharedMemoryBytes(const AttentionKernelConfig &c) const override {
    return SharedMemoryPlan(c).bytes;
  }

  int64_t blockThreads(const AttentionKernelConfig &c) const override {
    return blockThreadsFor(c);
  }

  bool usesTensorMaps() const override { return true; }
  bool persistentTiles(const AttentionKernelConfig &c) const override {
    return hopper::persistentTiles(c);
  }

  Tile tunedTile(int64_t headDim, int64_t valueDim, bool masked) const override {
    // Measured on the H100 (docs/perf-notes.md, sm_90a): D64 takes FA3's
    // three consumer warpgroups, except under a mask, where 128 rows waste
    // less on the diagonal (0.89-0.92x cuDNN at N = 2k against 0.84-0.90x,
    // 4% slower at 8k); wider block_n spills at every D.
    if (headDim <= 64 && valueDim <= 64)
      return masked ? Tile{128, 128} : Tile{192, 128};
    if (headDim <= 128 && valueDim <= 128)
      return {128, 128};
    return {128, 64};
  }

  int64_t warpsFor(int64_t blockM) const override { return blockM / 16; }

  std::string
  unsupportedBackwardReason(const AttentionKernelConfig &c) const override {
    // dK_j and dV_j stay in registers: 64 key rows of [D] and [Dv] f32 per
    // consumer warpgroup, beside S, dP and dQ_i.
    std::string operands = unsupportedBackwardOperands(chip(), c);
    if (!operands.empty())
      return operands;
    std::ostringstream os;
    if (!((c.blockM == c.blockN &&
                (c.blockM == 64 || c.blockM == 2 * kRowsPerWarpgroup)) ||
               (c.blockM == kRowsPerWarpgroup && c.blockN == 2 * kRowsPerWarpgroup)))
      os << "the sm_90a backward takes block_m x block_n 64 x 64, 128 x 128 "
            "(each consumer warpgroup 64 query rows and 64 keys) or 64 x 128 "
            "(64 keys each, S's columns split), got "
         << c.blockM << " x " << c.blockN;
    else if (c.blockN > c.blockM && c.headDim % (kPanelElements * c.blockN / c.blockM))
      os << "the sm_90a backward's 64 x 128 tile splits dQ's head dims over "
            "the warpgroups in 64-column panels: D must be a multiple of 128, got "
         << c.headDim;
    else if (c.warps != c.blockN / 16)
      os << "sm_90a kernels have one MMA warp per 16 rows: warps must be "
         << c.blockN / 16 << ", got " << c.warps;
    else if (backwardSharedMemoryBytes(c) > kMaxSharedMemoryBytes)
      os << "the backward tile needs " << backwardSharedMemoryBytes(c)
         << " bytes of shared memory, more than sm_90a's "
         << kMaxSharedMemoryBytes;
    return os.str();
  }

  int64_t backwardSharedMemoryBytes(const AttentionKernelConfig &c) const override {
    return BackwardSharedMemoryPlan(c).bytes;
  }

  int64_t backwardBlockThreads(const AttentionKernelConfig &c) const override {
    return blockThreadsFor(c);
  }

  Tile tunedBackwardTile(int64_t headDim, int64_t valueDim, bool) const override {
    // Two consumer warpgroups: on 128 query rows where their registers hold
    // dK, dV, S and dP (D <= 64); else on 64 query rows, S's 128 keys split
    // between them (D = 128: dQ's reductions are per block_n, docs/
    // perf-notes.md); one warpgroup otherwise.
    if (headDim <= 64 && valueDim <= 64)
      return {128, 128};
    if (headDim % 128 == 0)
      return {64, 128};
    return {64, 64};
  }

  int64_t backwardWarpsFor(int64_t blockM, int64_t blockN) const override {
    return std::max(blockM, blockN) / 16;
  }

  LogicalResult buildBackwardKernels(OpBuilder &builder, gpu::GPUModuleOp module,
                                     const AttentionBackward &backward,
                                     const AttentionKernelConfig &c,
                                     StringRef name) const override {
    if (failed(buildBackwardEdgeKernels(builder, module, backward, c, name)))
      return failure();
    return buildHopperBackwardMain(builder, module, backward, c, name);
  }

  LogicalResult buildForwardKernel(OpBuilder &builder, gpu::GPUModuleOp module,
                                   const FusedAttention &attention,
                                   const AttentionKernelConfig &c,
                                   StringRef name) const override {
    return buildHopperForwardKernel(builder, module, attention, c, name);
  }

  // Measured on the H100: +1-5% for causal at N = 2k (perf-notes, sm_90a
  // v3); the consumers' registers take it without a spill.
  FragmentLoweringOptions fragmentLoweringOptions() const override {
    FragmentLoweringOptions options;
    options.maskPerWarp = true;
    return options;
  }

  void populateFragmentLoweringPatterns(
      const TypeConverter &converter,
      RewritePatternSet &patterns) const override {
    populateWgmmaPatterns(converter, patterns);
  }

};

} // namespace

SharedMemoryPlan::SharedMemoryPlan(const AttentionKernelConfig &c) {
  queryPanels = panelsOf(c.headDim);
  keyPanels = panelsOf(c.headDim);
  valuePanels = panelsOf(c.valueDim);
  queryBytes = queryPanels * c.blockM * kPanelRowBytes;
  keyStageBytes = keyPanels * c.blockN * kPanelRowBytes;
  valueStageBytes = valuePanels * c.blockN * kPanelRowBytes;
  // block_m and block_n are multiples of 16: every panel is a whole number
  // of 1024-byte atoms.
  keyOffset = queryBytes;
  valueOffset = keyOffset + c.stages * keyStageBytes;
  barrierOffset = valueOffset + c.stages * valueStageBytes;
  // Q full, then per stage K full, K empty, V full, V empty, then Q empty.
  bytes = barrierOffset + 8 * (2 + 4 * c.stages);
}

bool hopper::persistentTiles(const AttentionKernelConfig &c) {
  // Without a mask every tile costs the same, and the next tile's Q and
  // first K land under this tile's last MMAs and epilogue. Under a mask
  // the tiles differ (up to N / block_n KV tiles): a static round robin
  // leaves blocks idle where the hardware's block scheduler does not
  // (docs/perf-notes.md, sm_90a v3).
  return !c.mask.isMasking();
}

std::unique_ptr<AttentionGPUStrategy> hopper::createHopperStrategy() {
  return std::make_unique<HopperStrategy>();
}
