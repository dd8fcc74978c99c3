//===- HopperSchedule.cpp - the sm_90a kernel's schedule ------------------===//
//
// Part of fa-mlir.
//
// Warp-specialised, as FlashAttention-3 (TARGETS.md): the consumer
// warpgroups (threads 0 .. 32·warps - 1, one per 64 query rows) compute,
// and the producer warpgroup after them issues every copy from one thread.
// The producer lowers its register budget with setmaxnreg and the
// consumers raise theirs.
//
//   producer                              consumers (per KV tile j, stage
//                                         s = j mod stages, parity
//                                         (j / stages) mod 2)
//   Q by TMA → q_full                     wait q_full (once)
//   for j: wait k_empty[s] (parity ^ 1)   wait k_full[s]; S = QKᵀ (wgmma)
//          K_j by TMA → k_full[s]         mask, online softmax (the L2 math)
//          wait v_empty[s] (parity ^ 1)   arrive k_empty[s]; wait v_full[s]
//          V_j by TMA → v_full[s]         acc += PV (wgmma); arrive v_empty[s]
//
// A ring's empty barriers expect every consumer thread; its full barriers
// one arrival plus the copy's bytes (TMA's complete_tx). A fresh barrier's
// "previous phase" counts as complete, so the producer's first wait on
// each empty barrier (parity 1) passes at once. Rows past M and keys past
// N arrive as TMA's out-of-bounds zeros; the L2 math masks the keys.
//
//===----------------------------------------------------------------------===//

#include "HopperPtx.h"
#include "HopperStrategy.h"

#include "fa/Conversion/FAToGPU/KernelSkeleton.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"

using namespace mlir;
using namespace mlir::fa;
using namespace mlir::fa::hopper;

namespace {

/// Register budgets after setmaxnreg (FA3's for two consumer warpgroups:
/// 2·128·240 + 128·24 ≤ 64K registers).
constexpr int64_t kProducerRegisters = 24;
constexpr int64_t kConsumerRegisters = 240;

/// The kernel's shared memory: tile views, their addresses, the barriers.
struct SharedState {
  const AttentionKernelConfig &c;
  SharedMemoryPlan plan;
  Value base;    ///< shared-window address of the buffer (i32)
  Value query, key, value; ///< memref views [(stages,) panels, rows, 64]

  Value idx(OpBuilder &b, Location loc, int64_t v) const {
    return arith::ConstantIndexOp::create(b, loc, v);
  }
  Value i32(OpBuilder &b, Location loc, int64_t v) const {
    return arith::ConstantIntOp::create(b, loc, v, 32);
  }
  Value toI32(OpBuilder &b, Location loc, Value index) const {
    return arith::IndexCastOp::create(b, loc, b.getI32Type(), index);
  }
  /// base + bytes + stride · stage (stage an index, or null).
  Value address(OpBuilder &b, Location loc, int64_t bytes, Value stage = Value(),
                int64_t stride = 0) const {
    Value a = arith::AddIOp::create(b, loc, base, i32(b, loc, bytes));
    if (!stage)
      return a;
    return arith::AddIOp::create(
        b, loc, a,
        arith::MulIOp::create(b, loc, toI32(b, loc, stage), i32(b, loc, stride)));
  }
  /// Barrier `which` (0 K full, 1 K empty, 2 V full, 3 V empty) of `stage`;
  /// the Q barrier comes first.
  Value barrier(OpBuilder &b, Location loc, Value stage, int64_t which) const {
    return address(b, loc, plan.barrierOffset + 8 * (1 + which), stage, 32);
  }
  Value queryFull(OpBuilder &b, Location loc) const {
    return address(b, loc, plan.barrierOffset);
  }
  /// The tile of `buffer` (behind `stage`) as a value of the math.
  Value tile(OpBuilder &b, Location loc, Value buffer, Value stage,
             int64_t rows, int64_t width) const {
    auto type = RankedTensorType::get(
        {rows, width}, c.elementType,
        TmaSharedLayoutAttr::get(b.getContext(), kPanelRowBytes));
    return SharedTileOp::create(b, loc, type, buffer, stage);
  }
};

enum Barrier { KeyFull = 0, KeyEmpty = 1, ValueFull = 2, ValueEmpty = 3 };

SharedState buildSharedState(OpBuilder &b, Location loc,
                             gpu::GPUModuleOp module,
                             const AttentionKernelConfig &c) {
  SharedState s{c, SharedMemoryPlan(c)};
  Value smem = sharedMemoryBase(b, module, loc, s.plan.bytes);
  s.base = sharedAddress(b, loc, smem);
  auto workgroup =
      gpu::AddressSpaceAttr::get(b.getContext(), gpu::AddressSpace::Workgroup);
  auto view = [&](int64_t byteOffset, ArrayRef<int64_t> shape) -> Value {
    auto type = MemRefType::get(shape, c.elementType, nullptr, workgroup);
    return memref::ViewOp::create(b, loc, type, smem, s.idx(b, loc, byteOffset),
                                  ValueRange{});
  };
  const SharedMemoryPlan &p = s.plan;
  s.query = view(0, {p.queryPanels, c.blockM, kPanelElements});
  s.key = view(p.keyOffset, {c.stages, p.keyPanels, c.blockN, kPanelElements});
  s.value =
      view(p.valueOffset, {c.stages, p.valuePanels, c.blockN, kPanelElements});
  return s;
}

/// Thread 0 initialises the barriers; the block waits for it.
void initBarriers(OpBuilder &b, Location loc, const SharedState &s, Value tid,
                  int64_t consumerThreads) {
  Value first = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, tid,
                                      s.idx(b, loc, 0));
  scf::IfOp::create(b, loc, first, [&](OpBuilder &then, Location) {
    mbarrierInit(then, loc, s.queryFull(then, loc), 1);
    for (int64_t stage = 0; stage < s.c.stages; ++stage) {
      Value st = s.idx(then, loc, stage);
      mbarrierInit(then, loc, s.barrier(then, loc, st, KeyFull), 1);
      mbarrierInit(then, loc, s.barrier(then, loc, st, KeyEmpty), consumerThreads);
      mbarrierInit(then, loc, s.barrier(then, loc, st, ValueFull), 1);
      mbarrierInit(then, loc, s.barrier(then, loc, st, ValueEmpty),
                   consumerThreads);
    }
    fenceBarrierInit(then, loc);
    scf::YieldOp::create(then, loc);
  });
  gpu::BarrierOp::create(b, loc);
}

/// Ring position of KV tile j: (stage, parity of its use of the stage).
std::pair<Value, Value> ringPosition(OpBuilder &b, Location loc,
                                     const SharedState &s, Value j) {
  Value stages = s.idx(b, loc, s.c.stages);
  Value stage = arith::RemUIOp::create(b, loc, j, stages);
  Value round = arith::DivUIOp::create(b, loc, j, stages);
  Value parity = arith::RemUIOp::create(b, loc, round, s.idx(b, loc, 2));
  return {stage, s.toI32(b, loc, parity)};
}

/// One thread's copies: Q, then each visible K and V tile into the rings.
void buildProducer(OpBuilder &b, Location loc, const SharedState &s,
                   const KernelArgs &args, const GridCoords &grid,
                   Value kvBegin, Value numBlocks) {
  const AttentionKernelConfig &c = s.c;
  const SharedMemoryPlan &p = s.plan;
  Value head = s.toI32(b, loc, grid.head);
  Value kvHead = s.toI32(b, loc, grid.kvHead);
  Value batch = s.toI32(b, loc, grid.batch);
  // Panel by panel: box [rows][64] at (64·panel, row, head, batch).
  auto copyTile = [&](OpBuilder &cb, StringRef map, Value dst, int64_t panels,
                      int64_t rows, Value row, Value headIndex, Value bar) {
    for (int64_t panel = 0; panel < panels; ++panel) {
      Value panelDst = arith::AddIOp::create(
          cb, loc, dst, s.i32(cb, loc, panel * rows * kPanelRowBytes));
      tmaLoad(cb, loc, panelDst, args[map],
              {s.i32(cb, loc, panel * kPanelElements), row, headIndex, batch},
              bar);
    }
  };
  Value queryBar = s.queryFull(b, loc);
  arriveExpectTx(b, loc, queryBar, p.queryBytes);
  copyTile(b, "q_tmap", s.address(b, loc, 0), p.queryPanels, c.blockM,
           s.toI32(b, loc, grid.queryStart), head, queryBar);

  scf::ForOp::create(
      b, loc, s.idx(b, loc, 0), numBlocks, s.idx(b, loc, 1), ValueRange{},
      [&](OpBuilder &lb, Location, Value j, ValueRange) {
        auto [stage, parity] = ringPosition(lb, loc, s, j);
        Value emptyParity =
            arith::XOrIOp::create(lb, loc, parity, s.i32(lb, loc, 1));
        Value keyStart = s.toI32(
            lb, loc,
            arith::AddIOp::create(
                lb, loc, kvBegin,
                arith::MulIOp::create(lb, loc, j, s.idx(lb, loc, c.blockN))));
        // Wait for the stage to be released, expect its bytes, copy.
        auto fillStage = [&](Barrier empty, Barrier full, StringRef map,
                             int64_t offset, int64_t stageBytes, int64_t panels) {
          waitParity(lb, loc, s.barrier(lb, loc, stage, empty), emptyParity);
          Value bar = s.barrier(lb, loc, stage, full);
          arriveExpectTx(lb, loc, bar, stageBytes);
          copyTile(lb, map, s.address(lb, loc, offset, stage, stageBytes),
                   panels, c.blockN, keyStart, kvHead, bar);
        };
        fillStage(KeyEmpty, KeyFull, "k_tmap", p.keyOffset, p.keyStageBytes,
                  p.keyPanels);
        fillStage(ValueEmpty, ValueFull, "v_tmap", p.valueOffset,
                  p.valueStageBytes, p.valuePanels);
        scf::YieldOp::create(lb, loc);
      });
}

/// Pingpong (FA3): each consumer warpgroup issues its MMAs only in its
/// turn, so that one's softmax runs under the other's GEMMs. Warpgroup w
/// syncs on named barrier 1 + w before issuing and arrives on the other's
/// after; warpgroup 1 gives warpgroup 0 the first turn and skips its last
/// arrive, so every barrier phase completes (no arrival left pending).
struct Pingpong {
  const SharedState &s;
  Value group; ///< this consumer warpgroup (i32), or null: no pingpong

  static constexpr int64_t kThreads = 256; // both warpgroups per phase
  Value barrierOf(OpBuilder &b, Location loc, Value g) const {
    return arith::AddIOp::create(b, loc, g, s.i32(b, loc, 1));
  }
  void start(OpBuilder &b, Location loc, Value hasBlocks) const {
    if (!group)
      return;
    Value second = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                         group, s.i32(b, loc, 1));
    namedBarrierArrive(b, loc, s.i32(b, loc, 1), kThreads,
                       arith::AndIOp::create(b, loc, second, hasBlocks));
  }
  void beforeIssue(OpBuilder &b, Location loc) const {
    if (group)
      namedBarrierSync(b, loc, barrierOf(b, loc, group), kThreads);
  }
  void afterIssue(OpBuilder &b, Location loc, Value isLast) const {
    if (!group)
      return;
    Value other = arith::SubIOp::create(b, loc, s.i32(b, loc, 1), group);
    Value skip = arith::AndIOp::create(
        b, loc, isLast,
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, group,
                              s.i32(b, loc, 1)));
    namedBarrierArrive(b, loc, barrierOf(b, loc, other), kThreads,
                       arith::XOrIOp::create(
                           b, loc, skip,
                           arith::ConstantIntOp::create(b, loc, 1, 1)));
  }
};

/// The consumers' loop, software-pipelined (DistributedMath::
/// emitPipelinedBody): tile 0's S and softmax peeled; then per tile j ≥ 1
/// S_j and P_{j-1}·V_{j-1} in flight together, the softmax of j under the
/// P·V; the last P·V after the loop. Returns the loop's values.
FailureOr<SmallVector<Value>>
buildPipelinedLoop(OpBuilder &b, Location loc, const SharedState &s,
                   DistributedMath &math, const GridCoords &grid, Value query,
                   Value slope, Value kvBegin, Value numBlocks,
                   const Pingpong &pingpong) {
  const AttentionKernelConfig &c = s.c;
  Value one = s.idx(b, loc, 1);
  Value hasBlocks = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sgt,
                                          numBlocks, s.idx(b, loc, 0));
  Value lastTile = arith::SubIOp::create(b, loc, numBlocks, one);
  pingpong.start(b, loc, hasBlocks);
  auto keyTileAt = [&](Value stage, Value parity) {
    return [&, stage, parity](OpBuilder &tb) {
      waitParity(tb, loc, s.barrier(tb, loc, stage, KeyFull), parity);
      return s.tile(tb, loc, s.key, stage, c.blockN, c.headDim);
    };
  };
  auto valueTileAt = [&](Value stage, Value parity) {
    return [&, stage, parity](OpBuilder &tb) {
      waitParity(tb, loc, s.barrier(tb, loc, stage, ValueFull), parity);
      return s.tile(tb, loc, s.value, stage, c.blockN, c.valueDim);
    };
  };
  auto hooksFor = [&](Value j, Value keyStage, Value valueStage) {
    DistributedMath::PipelineHooks hooks;
    hooks.beforeIssue = [&](OpBuilder &hb) { pingpong.beforeIssue(hb, loc); };
    hooks.afterIssue = [&, j](OpBuilder &hb) {
      pingpong.afterIssue(hb, loc,
                          arith::CmpIOp::create(hb, loc, arith::CmpIPredicate::eq,
                                                j, lastTile));
    };
    if (keyStage)
      hooks.scoresDone = [&, keyStage](OpBuilder &hb) {
        arrive(hb, loc, s.barrier(hb, loc, keyStage, KeyEmpty));
      };
    if (valueStage)
      hooks.productDone = [&, valueStage](OpBuilder &hb) {
        arrive(hb, loc, s.barrier(hb, loc, valueStage, ValueEmpty));
      };
    return hooks;
  };

  SmallVector<Value> init = math.initialLoopValues(b, loc);
  RankedTensorType probsType = math.deferredProbsType();
  init.push_back(arith::ConstantOp::create(
      b, loc, DenseElementsAttr::get(probsType, b.getZeroAttr(probsType.getElementType()))));
  LogicalResult result = success();
  auto first = scf::IfOp::create(
      b, loc, hasBlocks,
      [&](OpBuilder &tb, Location) {
        Value zero = s.idx(tb, loc, 0);
        auto [stage, parity] = ringPosition(tb, loc, s, zero);
        auto body = math.emitPipelinedBody(
            tb, grid, kvBegin, init, query, keyTileAt(stage, parity),
            DistributedMath::DeferredProduct{}, slope,
            hooksFor(zero, stage, Value()));
        if (failed(body))
          result = failure();
        scf::YieldOp::create(tb, loc, succeeded(body) ? ValueRange(*body) : ValueRange(init));
      },
      [&](OpBuilder &eb, Location) { scf::YieldOp::create(eb, loc, init); });
  auto loop = scf::ForOp::create(
      b, loc, one, numBlocks, one, first.getResults(),
      [&](OpBuilder &lb, Location, Value j, ValueRange carried) {
        auto [stage, parity] = ringPosition(lb, loc, s, j);
        Value previous = arith::SubIOp::create(lb, loc, j, one);
        auto [valueStage, valueParity] = ringPosition(lb, loc, s, previous);
        Value keyStart = arith::AddIOp::create(
            lb, loc, kvBegin,
            arith::MulIOp::create(lb, loc, j, s.idx(lb, loc, c.blockN)));
        DistributedMath::DeferredProduct deferred{
            carried.back(), valueTileAt(valueStage, valueParity)};
        auto body = math.emitPipelinedBody(
            lb, grid, keyStart, carried, query, keyTileAt(stage, parity),
            deferred, slope, hooksFor(j, stage, valueStage));
        if (failed(body))
          result = failure();
        scf::YieldOp::create(lb, loc, succeeded(body) ? ValueRange(*body) : carried);
      });
  if (failed(result))
    return failure();
  SmallVector<Value> loopValues(loop.getResults().drop_back());
  auto last = scf::IfOp::create(
      b, loc, hasBlocks,
      [&](OpBuilder &tb, Location) {
        auto [stage, parity] = ringPosition(tb, loc, s, lastTile);
        DistributedMath::PipelineHooks hooks = hooksFor(lastTile, Value(), stage);
        hooks.beforeIssue = hooks.afterIssue = nullptr; // outside the turns
        scf::YieldOp::create(
            tb, loc,
            math.emitDeferredProduct(
                tb, loop.getResults(),
                {loop.getResults().back(), valueTileAt(stage, parity)}, hooks));
      },
      [&](OpBuilder &eb, Location) { scf::YieldOp::create(eb, loc, loopValues); });
  return SmallVector<Value>(last.getResults());
}

/// The consumers: the L2 math over the rings, then the epilogue.
LogicalResult buildConsumers(OpBuilder &b, Location loc, const SharedState &s,
                             const FusedAttention &attention,
                             const KernelArgs &args, const GridCoords &grid,
                             Value kvBegin, Value numBlocks) {
  const AttentionKernelConfig &c = s.c;
  waitParity(b, loc, s.queryFull(b, loc), s.i32(b, loc, 0));
  Value query = s.tile(b, loc, s.query, Value(), c.blockM, c.headDim);
  Value slope = c.alibi ? grid.alibiSlope(b, loc, args) : Value();
  // wgmma's accumulator is mma.sync's per warp: one m16 tile per warp.
  auto layout = FragmentLayoutAttr::get(b.getContext(), c.warps, /*mTiles=*/1,
                                        /*quadPartial=*/false,
                                        /*deferredScale=*/FloatAttr());
  DistributedMath math(attention, layout);
  Pingpong pingpong{s, Value()};
  if (c.warps == 2 * kRowsPerWarpgroup / 16) {
    Value tid = gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x);
    pingpong.group = s.toI32(
        b, loc, arith::DivUIOp::create(b, loc, tid, s.idx(b, loc, 128)));
  }
  auto values = buildPipelinedLoop(b, loc, s, math, grid, query, slope,
                                   kvBegin, numBlocks, pingpong);
  if (failed(values))
    return failure();
  return emitEpilogueAndStore(b, loc, math, *values, args, grid);
}

} // namespace

LogicalResult hopper::buildHopperForwardKernel(OpBuilder &b,
                                               gpu::GPUModuleOp module,
                                               const FusedAttention &attention,
                                               const AttentionKernelConfig &c,
                                               StringRef name) {
  OpBuilder::InsertionGuard guard(b);
  Location loc = attention.kvLoop->getLoc();
  int64_t consumerThreads = 32 * c.warps;
  KernelArgs args = KernelArgs::create(b, module, c, name,
                                       consumerThreads + 128,
                                       /*tensorMaps=*/true);
  GridCoords grid = GridCoords::build(b, loc, args, c);
  SharedState s = buildSharedState(b, loc, module, c);
  Value tid = gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x);
  initBarriers(b, loc, s, tid, consumerThreads);
  auto [kvBegin, numBlocks] = grid.visibleKeyBlocks(b, loc, c);

  // One if/else, one role per branch: what setmaxnreg needs.
  Value isProducer = arith::CmpIOp::create(
      b, loc, arith::CmpIPredicate::uge, tid, s.idx(b, loc, consumerThreads));
  auto roles = scf::IfOp::create(b, loc, isProducer, /*withElseRegion=*/true);
  {
    OpBuilder::InsertionGuard roleGuard(b);
    b.setInsertionPointToStart(roles.thenBlock());
    setMaxRegisters(b, loc, kProducerRegisters, /*increase=*/false);
    Value issuer = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, tid,
                                         s.idx(b, loc, consumerThreads));
    scf::IfOp::create(b, loc, issuer, [&](OpBuilder &then, Location) {
      buildProducer(then, loc, s, args, grid, kvBegin, numBlocks);
      scf::YieldOp::create(then, loc);
    });
    b.setInsertionPointToStart(roles.elseBlock());
    setMaxRegisters(b, loc, kConsumerRegisters, /*increase=*/true);
    if (failed(buildConsumers(b, loc, s, attention, args, grid, kvBegin,
                              numBlocks)))
      return failure();
  }
  gpu::ReturnOp::create(b, loc);
  return success();
}
