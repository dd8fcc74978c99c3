//===- AmpereSchedule.cpp - the sm_80 kernel's schedule -------------------===//
//
// Part of fa-mlir.
//
// Prologue: Q and the first K tile in flight as one cp.async group, the
// first V tile as the next. The KV loop, per tile j, with two stages:
//   issue K_{j+1} into the other stage           (streams under S and softmax)
//   S = QK_jᵀ, mask, online softmax               (the L2 math, cloned)
//   wait for V_j; barrier; issue V_{j+1}          (streams under P·V)
//   acc += P V_j                                  (the L2 math, cloned)
//   wait for K_{j+1}; barrier
// With one stage (tiles whose second stage does not fit, FA2's D = 256
// order), each copy reuses the buffer the other matmul has just left:
//   S = QK_jᵀ, mask, online softmax
//   wait for V_j; barrier; issue K_{j+1}          (streams under P·V)
//   acc += P V_j
//   wait for K_{j+1}; barrier; issue V_{j+1}      (streams under S and softmax)
// Epilogue: the L2 epilogue (O = acc / l, LSE), stored by rows that exist.
// Groups are committed unconditionally so that wait_group counts stay
// uniform at the last tile.
//
//===----------------------------------------------------------------------===//

#include "AmpereSchedule.h"
#include "AmpereStrategy.h"

#include "fa/Conversion/FAToGPU/KernelSkeleton.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"

#include <tuple>

using namespace mlir;
using namespace mlir::fa;
using namespace mlir::fa::ampere;

namespace {

/// What the prologue leaves for the loop.
struct Pipeline {
  const AttentionKernelConfig &c;
  Value threadId;
  Value sharedQuery, sharedKey, sharedValue; ///< memref views
  GlobalTile key, value;
  KeyTiles keys;   ///< the visible KV tiles, in loop order
  Value numBlocks; ///< keys.count
  int64_t keyRow, valueRow;

  Value cst(OpBuilder &b, Location loc, int64_t v) const {
    return arith::ConstantIndexOp::create(b, loc, v);
  }
  /// cp.async of the KV tile at `keyStart` into `stage`, when `condition`.
  void copyIf(OpBuilder &b, Location loc, Value condition, const GlobalTile &src,
              Value keyStart, Value dst, Value stage, int64_t width) const {
    scf::IfOp::create(b, loc, condition, [&](OpBuilder &then, Location) {
      copyTileAsync(then, loc, src, keyStart, dst, stage, c.blockN, width,
                    32 * c.warps, threadId);
      scf::YieldOp::create(then, loc);
    });
  }
  /// The tile of `buffer` behind `stage` as a value of the math.
  Value tile(OpBuilder &b, Location loc, Value buffer, Value stage,
             int64_t rows, int64_t width, int64_t rowElements) const {
    auto type = RankedTensorType::get(
        {rows, width}, c.elementType,
        SharedLayoutAttr::get(b.getContext(), rowElements));
    return SharedTileOp::create(b, loc, type, buffer, stage);
  }
};

/// Views, global tiles, the visible KV range, and the prologue's copies.
Pipeline buildPrologue(OpBuilder &b, Location loc, gpu::GPUModuleOp module,
                       const KernelArgs &args, const GridCoords &grid,
                       const AttentionKernelConfig &c) {
  SharedMemoryPlan plan(c);
  Pipeline p{c};
  p.threadId = gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x);
  p.keyRow = plan.keyRow;
  p.valueRow = plan.valueRow;
  Value smem = sharedMemoryBase(b, module, loc, plan.bytes);
  auto workgroup =
      gpu::AddressSpaceAttr::get(b.getContext(), gpu::AddressSpace::Workgroup);
  auto view = [&](int64_t byteOffset, ArrayRef<int64_t> shape) -> Value {
    auto type = MemRefType::get(shape, c.elementType, nullptr, workgroup);
    return memref::ViewOp::create(b, loc, type, smem,
                                  p.cst(b, loc, byteOffset), ValueRange{});
  };
  p.sharedQuery = view(0, {c.blockM, plan.queryRow});
  p.sharedKey = view(plan.keyOffset, {c.stages, c.blockN, plan.keyRow});
  p.sharedValue = view(plan.valueOffset, {c.stages, c.blockN, plan.valueRow});

  auto globalTile = [&](StringRef name, Value head, Value limit) {
    return GlobalTile{args[name], grid.tensorBase(b, loc, args, name, head),
                      args.index(b, (name + "_stride_s").str()), limit};
  };
  GlobalTile query = globalTile("q", grid.head, grid.queryLen);
  p.key = globalTile("k", grid.kvHead, grid.keyLen);
  p.value = globalTile("v", grid.kvHead, grid.keyLen);

  p.keys = KeyTiles::build(b, loc, args, c, grid);
  p.numBlocks = p.keys.count;
  Value begin = p.keys.keyStart(b, loc, p.cst(b, loc, 0));
  Value hasBlocks = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sgt,
                                          p.numBlocks, p.cst(b, loc, 0));
  // G0 = {Q, K_0}, G1 = {V_0}; wait for G0.
  Value stage0 = p.cst(b, loc, 0);
  copyTileAsync(b, loc, query, grid.queryStart, p.sharedQuery, Value(),
                c.blockM, c.headDim, 32 * c.warps, p.threadId);
  p.copyIf(b, loc, hasBlocks, p.key, begin, p.sharedKey, stage0, c.headDim);
  commitGroup(b, loc);
  p.copyIf(b, loc, hasBlocks, p.value, begin, p.sharedValue, stage0, c.valueDim);
  commitGroup(b, loc);
  waitUntilPending(b, loc, 1);
  gpu::BarrierOp::create(b, loc);
  return p;
}

/// The KV loop over tiles [from, to) of `p.keys`, each tile's K and V
/// from the cp.async pipeline, the next tile's copies issued under it;
/// `unmasked`: a block mask's full blocks (DistributedMath::setTilesUnmasked).
/// Returns the loop's values.
FailureOr<SmallVector<Value>>
buildKeyTileLoop(OpBuilder &b, Location loc, const Pipeline &p,
                 DistributedMath &math, const GridCoords &grid, Value query,
                 Value from, Value to, ValueRange init, bool unmasked) {
  const AttentionKernelConfig &c = p.c;
  LogicalResult result = success();
  math.setTilesUnmasked(unmasked);
  auto loop = scf::ForOp::create(
      b, loc, from, to, p.cst(b, loc, 1), init,
      [&](OpBuilder &lb, Location, Value j, ValueRange carried) {
        // Invariant: K_j has landed and is visible; V_j may be in flight.
        Value keyStart = p.keys.keyStart(lb, loc, j);
        bool twoStages = c.stages == 2;
        Value stage = twoStages
                          ? arith::RemUIOp::create(lb, loc, j, p.cst(lb, loc, 2))
                                .getResult()
                          : p.cst(lb, loc, 0);
        Value next = arith::AddIOp::create(lb, loc, j, p.cst(lb, loc, 1));
        Value hasNext = arith::CmpIOp::create(lb, loc, arith::CmpIPredicate::slt,
                                              next, p.numBlocks);
        Value nextStart =
            p.keys.listed()
                ? p.keys.keyStart(lb, loc, next)
                : arith::AddIOp::create(lb, loc, keyStart, p.cst(lb, loc, c.blockN))
                      .getResult();
        Value nextStage =
            twoStages ? arith::RemUIOp::create(lb, loc, next, p.cst(lb, loc, 2))
                            .getResult()
                      : stage;
        if (twoStages) {
          p.copyIf(lb, loc, hasNext, p.key, nextStart, p.sharedKey, nextStage,
                   c.headDim);
          commitGroup(lb, loc);
        }
        auto keyTile = [&](OpBuilder &tb) {
          return p.tile(tb, loc, p.sharedKey, stage, c.blockN, c.headDim, p.keyRow);
        };
        auto valueTile = [&](OpBuilder &tb) {
          // V_j must have landed (K_{j+1} may still stream); every warp is
          // past S_j. Then the next tile streams in under P·V: V_{j+1} into
          // the other stage, or K_{j+1} into the one K stage S_j has left.
          if (twoStages) {
            commitGroup(tb, loc);
            waitUntilPending(tb, loc, 2);
          } else {
            waitUntilPending(tb, loc, 0);
          }
          gpu::BarrierOp::create(tb, loc);
          if (twoStages)
            p.copyIf(tb, loc, hasNext, p.value, nextStart, p.sharedValue,
                     nextStage, c.valueDim);
          else
            p.copyIf(tb, loc, hasNext, p.key, nextStart, p.sharedKey, nextStage,
                     c.headDim);
          commitGroup(tb, loc);
          return p.tile(tb, loc, p.sharedValue, stage, c.blockN, c.valueDim,
                        p.valueRow);
        };
        FailureOr<SmallVector<Value>> yielded = math.emitLoopBody(
            lb, grid, keyStart, carried, query, keyTile, valueTile);
        if (failed(yielded)) {
          result = failure();
          scf::YieldOp::create(lb, loc, carried);
          return;
        }
        // K_{j+1} must have landed before the next S (V_{j+1} may stream);
        // with one stage, V_{j+1} follows once every warp is past P·V_j.
        if (twoStages) {
          commitGroup(lb, loc);
          waitUntilPending(lb, loc, 2);
        } else {
          waitUntilPending(lb, loc, 0);
        }
        gpu::BarrierOp::create(lb, loc);
        if (!twoStages) {
          p.copyIf(lb, loc, hasNext, p.value, nextStart, p.sharedValue, stage,
                   c.valueDim);
          commitGroup(lb, loc);
        }
        scf::YieldOp::create(lb, loc, *yielded);
      });
  math.setTilesUnmasked(false);
  if (failed(result))
    return failure();
  return SmallVector<Value>(loop.getResults());
}

} // namespace

LogicalResult ampere::buildAmpereForwardKernel(OpBuilder &b,
                                               gpu::GPUModuleOp module,
                                               const FusedAttention &attention,
                                               const AttentionKernelConfig &c,
                                               StringRef name) {
  OpBuilder::InsertionGuard guard(b);
  Location loc = attention.kvLoop->getLoc();
  KernelArgs args = KernelArgs::create(b, module, c, name, 32 * c.warps);
  GridCoords grid = GridCoords::build(b, loc, args, c);
  Pipeline p = buildPrologue(b, loc, module, args, grid, c);
  SmallVector<Value> headInputs =
      grid.headScoreInputs(b, loc, args, attention.headInputs);

  // Each warp owns m_tiles m16 tiles: two per warp share every K and V
  // fragment, halving the ldmatrix traffic per mma.
  int64_t mTiles = c.blockM / (16 * c.warps);
  auto layout = FragmentLayoutAttr::get(b.getContext(), c.warps, mTiles);
  // Q's A fragments stay in registers for the whole loop
  // (query_in_registers); otherwise they are re-read from shared memory
  // per KV tile.
  Value query = p.tile(b, loc, p.sharedQuery, Value(), c.blockM, c.headDim,
                       sharedRowElements(c.headDim));
  if (c.schedule.queryInRegisters)
    query = LoadOperandOp::create(
        b, loc,
        RankedTensorType::get({c.blockM, c.headDim}, c.elementType,
                              OperandLayoutAttr::get(b.getContext(), c.warps,
                                                     mTiles)),
        query);

  DistributedMath math(attention, layout);
  math.setHeadScoreInputs(headInputs);
  math.setCaptureValues(args.captureValues(b, loc, attention.captures));
  math.setUnmaskedTilesListed(p.keys.listed());
  SmallVector<Value> results = math.initialLoopValues(b, loc);
  Value zero = p.cst(b, loc, 0);
  // A block mask's partial blocks' tiles, then its full ones'.
  if (p.keys.listed()) {
    auto partial = buildKeyTileLoop(b, loc, p, math, grid, query, zero,
                                    p.keys.maskedCount, results, /*unmasked=*/false);
    if (failed(partial))
      return failure();
    results = *partial;
  }
  auto rest = buildKeyTileLoop(b, loc, p, math, grid, query,
                               p.keys.listed() ? p.keys.maskedCount : zero,
                               p.numBlocks, results, /*unmasked=*/p.keys.listed());
  if (failed(rest))
    return failure();

  if (failed(emitEpilogueAndStore(b, loc, math, *rest, args, grid)))
    return failure();
  gpu::ReturnOp::create(b, loc);
  return success();
}
