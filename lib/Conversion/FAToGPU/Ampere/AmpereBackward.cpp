//===- AmpereBackward.cpp - the sm_80 backward's main kernel --------------===//
//
// Part of fa-mlir.
//
// One thread block per (KV block j, KV head, batch); dK_j and dV_j live in
// registers for the whole block. K_j and V_j are copied once; then for each
// query head of the group and each Q block i that sees K_j (the mask's
// range, exactly), Q_i and dO_i stream through a two-stage cp.async ring:
//
//   wait for Q_i, dO_i; barrier; issue Q_{i+1}, dO_{i+1} into the other stage
//   the L2 step (BackwardMath), with
//     S, P (-> shared, fa.store_shared), dP, dS (-> shared)
//     dQ_i = dS K_j from dS's registers (-> shared, f32, where there is room)
//     barrier; dQ_i added into dq_acc from the fragment (red.global.add,
//     into dq_acc's MMA-block order: coalesced as a staged row-major
//     addition, without the staging); dV += Pᵀ dO_i, dK += dSᵀ Q_i
//     (ldmatrix.trans of P, dS)
//   On 64 x 128 with 8 warps (D = 64 and 128), S's keys are split over two
//   groups of four warps and dK_j's and dV_j's head dims over two groups
//   of 32 keys (ScheduleKnobs::columnGroups): dQ_i, which needs every key,
//   comes after the barrier from the shared dS (ldmatrix), each group half
//   of D's columns, added from its fragment.
//   (the next iteration's barrier orders P/dS's reuse and the ring's)
//
// After the last Q block, dK_j and dV_j are stored by the rows that exist.
//
//===----------------------------------------------------------------------===//

#include "AmpereSchedule.h"
#include "AmpereStrategy.h"

#include "fa/Conversion/FAToGPU/BackwardKernel.h"
#include "fa/Dialect/FA/Utils/MaskUtils.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"

#include <limits>

using namespace mlir;
using namespace mlir::fa;
using namespace mlir::fa::ampere;

BackwardSharedMemoryPlan::BackwardSharedMemoryPlan(int64_t elementBytes,
                                                   int64_t blockM, int64_t blockN,
                                                   int64_t headDim,
                                                   int64_t valueDim) {
  keyRow = sharedRowElements(headDim);
  valueRow = sharedRowElements(valueDim);
  probsRow = sharedRowElements(blockN);
  valueOffset = elementBytes * blockN * keyRow;
  queryOffset = valueOffset + elementBytes * blockN * valueRow;
  gradOutOffset = queryOffset + elementBytes * 2 * blockM * keyRow;
  probsOffset = gradOutOffset + elementBytes * 2 * blockM * valueRow;
  gradScoresOffset = probsOffset + elementBytes * blockM * probsRow;
  bytes = gradScoresOffset + elementBytes * blockM * probsRow;
}

BackwardSharedMemoryPlan::BackwardSharedMemoryPlan(const AttentionKernelConfig &c)
    : BackwardSharedMemoryPlan(c.elementType.getIntOrFloatBitWidth() / 8,
                               c.blockM, c.blockN, c.headDim, c.valueDim) {}

namespace {

/// The block's views of shared memory and its place in the problem.
struct BackwardBlock {
  const AttentionKernelConfig &c;
  KernelArgs &args;
  Location loc;
  Value threadId, keyStart, batch, kvHead, smem;
  Value sharedKey, sharedValue, sharedQuery, sharedGradOut, sharedProbs,
      sharedGradScores;
  BackwardSharedMemoryPlan plan;

  BackwardBlock(OpBuilder &b, gpu::GPUModuleOp module, KernelArgs &args,
                const AttentionKernelConfig &c, Location loc)
      : c(c), args(args), loc(loc), plan(c) {
    threadId = gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x);
    KeyBlockPlace place = KeyBlockPlace::build(b, loc, args, c,
                                               c.schedule.sectionMiB << 20);
    keyStart = place.keyStart;
    kvHead = place.kvHead;
    batch = place.batch;
    smem = sharedMemoryBase(b, module, loc, plan.bytes);
    auto view = [&](int64_t offset, ArrayRef<int64_t> shape) {
      return this->view(b, offset, shape);
    };
    sharedKey = view(0, {c.blockN, plan.keyRow});
    sharedValue = view(plan.valueOffset, {c.blockN, plan.valueRow});
    sharedQuery = view(plan.queryOffset, {2, c.blockM, plan.keyRow});
    sharedGradOut = view(plan.gradOutOffset, {2, c.blockM, plan.valueRow});
    sharedProbs = view(plan.probsOffset, {c.blockM, plan.probsRow});
    sharedGradScores = view(plan.gradScoresOffset, {c.blockM, plan.probsRow});
  }

  Value cst(OpBuilder &b, int64_t v) const {
    return arith::ConstantIndexOp::create(b, loc, v);
  }
  /// Shared memory from byte `offset` as a [shape] buffer of the input type.
  Value view(OpBuilder &b, int64_t offset, ArrayRef<int64_t> shape) const {
    auto workgroup = gpu::AddressSpaceAttr::get(b.getContext(),
                                                gpu::AddressSpace::Workgroup);
    auto type = MemRefType::get(shape, c.elementType, nullptr, workgroup);
    return memref::ViewOp::create(b, loc, type, smem, cst(b, offset), ValueRange{});
  }
  /// Tensor `name`'s rows of head `head` as a copy source.
  GlobalTile global(OpBuilder &b, const GridCoords &grid, StringRef name,
                    Value head, Value limit) const {
    return GlobalTile{args[name], grid.tensorBase(b, loc, args, name, head),
                      args.index(b, (name + "_stride_s").str()), limit};
  }
  /// The tile of `buffer` (behind `stage` when non-null) as a math value.
  Value tile(OpBuilder &b, Value buffer, Value stage, int64_t rows,
             int64_t width) const {
    auto bufferType = cast<MemRefType>(buffer.getType());
    auto type = RankedTensorType::get(
        {rows, width}, c.elementType,
        SharedLayoutAttr::get(b.getContext(), bufferType.getShape().back()));
    return SharedTileOp::create(b, loc, type, buffer, stage);
  }
  void copy(OpBuilder &b, const GlobalTile &src, Value rowStart, Value dst,
            Value stage, int64_t rows, int64_t width) const {
    // copies_interior_fast: every tile but a ragged last one copied without
    // row checks.
    copyTileAsync(b, loc, src, rowStart, dst, stage, rows, width, 32 * c.warps,
                  threadId, c.schedule.copiesInteriorFast);
  }
};

/// The coordinates of query head `head` of the group at KV block j.
GridCoords memberCoords(OpBuilder &b, const BackwardBlock &block, Value head) {
  GridCoords g;
  g.batch = block.batch;
  g.head = head;
  g.kvHead = block.kvHead;
  g.queryLen = block.args.index(b, "q_len");
  g.keyLen = block.args.index(b, "kv_len");
  return g;
}

/// Deterministic: thread 0 reads this step's turn counter at the step's
/// start (GradQueryTurn::peek), the rest -1; null otherwise.
Value peekTurn(OpBuilder &b, const BackwardBlock &block, const GridCoords &at) {
  const AttentionKernelConfig &c = block.c;
  if (!c.deterministic)
    return Value();
  Location loc = block.loc;
  GradQueryTurn turn = GradQueryTurn::build(b, loc, block.args, c, at, block.keyStart);
  Value first = arith::AndIOp::create(
      b, loc, turn.enabled,
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, block.threadId,
                            block.cst(b, 0)));
  Type i32 = b.getI32Type();
  auto ifOp = scf::IfOp::create(
      b, loc, first,
      [&](OpBuilder &tb, Location) { scf::YieldOp::create(tb, loc, turn.peek(tb, loc)); },
      [&](OpBuilder &eb, Location) {
        scf::YieldOp::create(eb, loc, ValueRange{arith::ConstantOp::create(
                                          eb, loc, eb.getIntegerAttr(i32, -1))});
      });
  return ifOp.getResult(0);
}

/// dQ_i (`gradQuery`'s fragment) added into dq_acc; built deterministic (`peeked`: peekTurn) and launched so, in
/// the order of GradQueryTurn. Called right after a barrier: thread 0 passes the
/// previous Q block's turn (a step late, its additions long issued) and
/// waits for this one while the others wait at a second barrier. No thread
/// fences its own additions: they precede this step's first barrier, and
/// the release is cumulative over what a barrier ordered before it (the
/// PTX memory model; CUTLASS's Semaphore::release is the same pattern).
/// passTurnAfterLoop passes the last turn.
void emitGradQueryAdd(OpBuilder &b, const BackwardBlock &block,
                      const GridCoords &at, Value gradQuery, Value afterFirst,
                      Value peeked) {
  const AttentionKernelConfig &c = block.c;
  Location loc = block.loc;
  KernelArgs &args = block.args;
  Value base = at.tensorBase(b, loc, args, "dq_acc", at.head);
  Value stride = args.index(b, "dq_acc_stride_s");
  // In dq_acc's MMA-block order (GradQueryOrder::MmaBlocks): each warp's
  // additions of an element slot fill 128 contiguous bytes.
  auto add = [&](OpBuilder &ab) {
    AccumulateFragmentOp::create(ab, loc, gradQuery, args["dq_acc"], base,
                                 at.queryStart, at.queryLen, stride,
                                 /*mma_blocks=*/true);
  };
  if (!peeked) {
    add(b);
    return;
  }
  // Built here again rather than kept from peekTurn: built at the step's
  // start, the masked kernels' turn arithmetic moves into the step and
  // slows it.
  GradQueryTurn turn = GradQueryTurn::build(b, loc, args, c, at, block.keyStart);
  turn.whenEnabled(b, loc, [&](OpBuilder &wb) {
    inFirstThread(wb, loc, block.threadId, [&](OpBuilder &tb) {
      turn.awaitPeeked(tb, loc, peeked, afterFirst, c.blockM);
    });
    gpu::BarrierOp::create(wb, loc);
  });
  add(b);
}

/// After a query head's Q-block loop (`blocks` steps from row `begin`), the
/// deterministic mode's last turn: every thread's additions ordered by a
/// barrier before thread 0's release.
void passTurnAfterLoop(OpBuilder &b, const BackwardBlock &block, const GridCoords &at,
                       Value begin, Value blocks) {
  const AttentionKernelConfig &c = block.c;
  if (!c.deterministic)
    return;
  Location loc = block.loc;
  auto [turn, ran] =
      GradQueryTurn::buildLast(b, loc, block.args, c, at, block.keyStart, begin, blocks);
  turn.whenEnabled(b, loc, [&](OpBuilder &wb) {
    buildIf(wb, loc, ran, [&](OpBuilder &ab) {
      gpu::BarrierOp::create(ab, loc);
      inFirstThread(ab, loc, block.threadId, [&](OpBuilder &tb) { turn.pass(tb, loc); });
    });
  });
}

/// The Q-block loop of one query head: returns (dK_j, dV_j).
FailureOr<SmallVector<Value>>
emitQueryLoop(OpBuilder &b, const BackwardBlock &block, BackwardMath &math,
              const AttentionBackward &backward, GridCoords grid,
              ValueRange gradients) {
  const AttentionKernelConfig &c = block.c;
  Location loc = block.loc;
  auto [begin, blocks] = grid.visibleQueryBlocks(b, loc, c, block.keyStart);
  GlobalTile query = block.global(b, grid, "q", grid.head, grid.queryLen);
  GlobalTile gradOut = block.global(b, grid, "do", grid.head, grid.queryLen);
  auto copyQueryBlock = [&](OpBuilder &ib, Value condition, Value q0, Value stage) {
    scf::IfOp::create(ib, loc, condition, [&](OpBuilder &then, Location) {
      block.copy(then, query, q0, block.sharedQuery, stage, c.blockM, c.headDim);
      block.copy(then, gradOut, q0, block.sharedGradOut, stage, c.blockM,
                 c.valueDim);
      scf::YieldOp::create(then, loc);
    });
    commitGroup(ib, loc);
  };
  Value any = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sgt, blocks,
                                    block.cst(b, 0));
  // The previous query head's last step may still read stage 0 (its dK
  // reads Q_i, dV dO_i): every warp is past it before the copy overwrites.
  gpu::BarrierOp::create(b, loc);
  copyQueryBlock(b, any, begin, block.cst(b, 0));
  math.loadHeadScoreInputs(b, loc, grid, block.args);
  // loads_query_rows_ahead: LSE_i and D_i loaded a Q block ahead and carried
  // (FA2's order), each step's loads issued after its barrier and first
  // used by the next step; otherwise loaded where the step first uses them.
  bool ahead = c.schedule.loadsQueryRowsAhead;
  auto loadRows = [&](OpBuilder &rb, Value q0) {
    GridCoords at = grid;
    at.queryStart = q0;
    return SmallVector<Value>{
        math.loadQueryRows(rb, loc, block.args, at, backward.lseRows,
                           /*predicated=*/true),
        math.loadQueryRows(rb, loc, block.args, at, backward.rowDotRows,
                           /*predicated=*/true)};
  };
  SmallVector<Value> initial(gradients);
  if (ahead)
    llvm::append_range(initial, loadRows(b, begin));

  LogicalResult result = success();
  auto loop = scf::ForOp::create(
      b, loc, block.cst(b, 0), blocks, block.cst(b, 1), initial,
      [&](OpBuilder &lb, Location, Value i, ValueRange loopCarried) {
        ValueRange carried = loopCarried.take_front(gradients.size());
        ValueRange rows = loopCarried.drop_front(gradients.size());
        Value stage = arith::RemUIOp::create(lb, loc, i, block.cst(lb, 2));
        Value q0 = arith::AddIOp::create(
            lb, loc, begin, arith::MulIOp::create(lb, loc, i, block.cst(lb, c.blockM)));
        // Q_i and dO_i have landed, and every warp is done with the last
        // step's shared tiles; then Q_{i+1}, dO_{i+1} stream in under it.
        waitUntilPending(lb, loc, 0);
        gpu::BarrierOp::create(lb, loc);
        Value next = arith::AddIOp::create(lb, loc, i, block.cst(lb, 1));
        Value nextStart = arith::AddIOp::create(lb, loc, q0, block.cst(lb, c.blockM));
        copyQueryBlock(lb,
                       arith::CmpIOp::create(lb, loc, arith::CmpIPredicate::slt,
                                             next, blocks),
                       nextStart,
                       arith::SubIOp::create(lb, loc, block.cst(lb, 1), stage));
        SmallVector<Value> rowsAhead;
        GridCoords at = grid;
        at.queryStart = q0;
        Value afterFirst =
            arith::CmpIOp::create(lb, loc, arith::CmpIPredicate::ne, i, block.cst(lb, 0));
        Value peeked = peekTurn(lb, block, at);
        BackwardMath::Sources sources;
        sources.tile = [&](OpBuilder &tb, Value l2Tile) -> Value {
          if (l2Tile == backward.queryTile)
            return block.tile(tb, block.sharedQuery, stage, c.blockM, c.headDim);
          if (l2Tile == backward.gradOutTile)
            return block.tile(tb, block.sharedGradOut, stage, c.blockM, c.valueDim);
          if (l2Tile == backward.keyTile)
            return block.tile(tb, block.sharedKey, Value(), c.blockN, c.headDim);
          if (l2Tile == backward.valueTile)
            return block.tile(tb, block.sharedValue, Value(), c.blockN, c.valueDim);
          if (!ahead)
            return math.loadQueryRows(tb, loc, block.args, at, l2Tile);
          return l2Tile == backward.lseRows ? rows[0] : rows[1];
        };
        sources.transposedOperand = [&](OpBuilder &tb, TileMatmulOp matmul,
                                        Value fragment) -> Value {
          Value buffer = matmul == backward.gradValue ? block.sharedProbs
                                                      : block.sharedGradScores;
          StoreSharedOp::create(tb, loc, fragment, buffer);
          return block.tile(tb, buffer, Value(), c.blockM, c.blockN);
        };
        // dQ_i: added after the body's barrier, in KV-block order when
        // deterministic. With S's keys split over warp groups, dQ_i =
        // dS·K_j reads dS from shared memory and so comes after that
        // barrier: added at once.
        sources.gradQueryFromShared = c.schedule.columnGroups.queryRows > 1;
        Value pending;
        sources.accumulateGradQuery = [&](OpBuilder &tb, Value gradQuery, int64_t) {
          if (sources.gradQueryFromShared)
            emitGradQueryAdd(tb, block, at, gradQuery, afterFirst, peeked);
          else
            pending = gradQuery;
        };
        sources.sharedWritten = [&](OpBuilder &tb) {
          gpu::BarrierOp::create(tb, loc);
          // The next step's LSE / D among the transposed MMAs (FA2's
          // place): issued at the step's head, they would make this
          // step's first use of the carried LSE wait on their scoreboard.
          if (ahead)
            rowsAhead = loadRows(tb, nextStart);
          if (!sources.gradQueryFromShared)
            emitGradQueryAdd(tb, block, at, pending, afterFirst, peeked);
        };
        FailureOr<SmallVector<Value>> yielded =
            math.emitBody(lb, at, block.keyStart, carried, sources);
        if (failed(yielded)) {
          result = failure();
          scf::YieldOp::create(lb, loc, loopCarried);
          return;
        }
        // dV's and dK's operands are always read transposed: sharedWritten ran.
        assert(rowsAhead.size() == (ahead ? 2u : 0u) && "the next rows were loaded");
        llvm::append_range(*yielded, rowsAhead);
        scf::YieldOp::create(lb, loc, *yielded);
      });
  if (failed(result))
    return failure();
  passTurnAfterLoop(b, block, grid, begin, blocks);
  return SmallVector<Value>(loop.getResults().take_front(gradients.size()));
}

/// dK_j, dV_j (f32, `gradients`) in the input type, by the rows that exist:
/// from the fragments (32-bit stores), or with stores_gradients_through_shared
/// staged in the Q and dO rings, which the last step has finished with, and
/// stored 16 bytes a thread (FA2's epilogue).
void storeGradients(OpBuilder &b, const BackwardBlock &block,
                    const GridCoords &kv, ArrayRef<Value> gradients) {
  const AttentionKernelConfig &c = block.c;
  Location loc = block.loc;
  KernelArgs &args = block.args;
  static constexpr StringLiteral kGradients[] = {"dk", "dv"};
  bool staged = c.schedule.storesGradientsThroughShared;
  assert((!staged || c.blockN <= 2 * c.blockM) &&
         "dK_j and dV_j fit the Q and dO rings' two stages");
  // No copy is in flight here: each step waits for all of its group, and
  // the last step issues none. A barrier puts every warp past the last
  // step's reads of Q_i and dO_i.
  if (staged)
    gpu::BarrierOp::create(b, loc);
  SmallVector<Value> stagedTiles;
  for (auto [i, name] : llvm::enumerate(kGradients)) {
    Value grad = gradients[i];
    auto type = cast<RankedTensorType>(grad.getType());
    Value cast = arith::TruncFOp::create(b, loc, type.clone(c.elementType), grad);
    if (staged) {
      bool key = i == 0;
      Value buffer = block.view(b, key ? block.plan.queryOffset : block.plan.gradOutOffset,
                                {c.blockN, key ? block.plan.keyRow : block.plan.valueRow});
      StoreSharedOp::create(b, loc, cast, buffer);
      stagedTiles.push_back(buffer);
      continue;
    }
    StoreFragmentOp::create(b, loc, cast, args[name],
                            kv.tensorBase(b, loc, args, name, block.kvHead),
                            block.keyStart, kv.keyLen,
                            args.index(b, (name + "_stride_s").str()));
  }
  if (!staged)
    return;
  gpu::BarrierOp::create(b, loc);
  for (auto [i, name] : llvm::enumerate(kGradients)) {
    GlobalTile dst{args[name], kv.tensorBase(b, loc, args, name, block.kvHead),
                   args.index(b, (name + "_stride_s").str()), kv.keyLen};
    storeTileFromShared(b, loc, stagedTiles[i], dst, block.keyStart, c.blockN,
                        i == 0 ? c.headDim : c.valueDim, 32 * c.warps, block.threadId);
  }
}

} // namespace

LogicalResult ampere::buildAmpereBackwardMain(OpBuilder &b, gpu::GPUModuleOp module,
                                              const AttentionBackward &backward,
                                              const AttentionKernelConfig &c,
                                              StringRef name) {
  OpBuilder::InsertionGuard guard(b);
  Location loc = backward.queryLoop->getLoc();
  KernelArgs args = KernelArgs::create(
      b, module, c.elementType,
      backwardEntryName(name, ::fa::abi::BackwardStep::Main), 32 * c.warps,
      ::fa::abi::backwardKernelParams(::fa::abi::BackwardStep::Main, c.alibi,
                                      /*tensorMaps=*/false,
                                      captureTypesOf(c.captures)));
  BackwardBlock block(b, module, args, c, loc);
  GridCoords kv = memberCoords(b, block, Value());
  // K_j and V_j, once: the first Q block's wait covers them.
  block.copy(b, block.global(b, kv, "k", block.kvHead, kv.keyLen), block.keyStart,
             block.sharedKey, Value(), c.blockN, c.headDim);
  block.copy(b, block.global(b, kv, "v", block.kvHead, kv.keyLen), block.keyStart,
             block.sharedValue, Value(), c.blockN, c.valueDim);
  commitGroup(b, loc);

  // 16 rows per warp; a side with fewer rows than the warps splits its
  // columns over groups of them (64 x 128 on 8 warps: S's keys).
  auto layoutFor = [&](int64_t rows, int64_t columnGroups) {
    return FragmentLayoutAttr::get(b.getContext(), c.warps,
                                   rows * columnGroups / (16 * c.warps), columnGroups);
  };
  BackwardColumnGroups groups = c.schedule.columnGroups;
  BackwardMath math(backward, layoutFor(c.blockM, groups.queryRows),
                    layoutFor(c.blockN, groups.keyRows),
                    layoutFor(c.blockM, groups.gradQueryGroups()));
  math.setCaptureValues(args.captureValues(b, loc, backward.captures));
  // GQA: every query head of the group adds into dK_j, dV_j.
  Value group = arith::DivUIOp::create(b, loc, args.index(b, "q_heads"),
                                       args.index(b, "kv_heads"));
  LogicalResult result = success();
  auto members = scf::ForOp::create(
      b, loc, block.cst(b, 0), group, block.cst(b, 1),
      math.initialGradients(b, loc),
      [&](OpBuilder &gb, Location, Value member, ValueRange gradients) {
        Value head = arith::AddIOp::create(
            gb, loc, arith::MulIOp::create(gb, loc, block.kvHead, group), member);
        FailureOr<SmallVector<Value>> updated = emitQueryLoop(
            gb, block, math, backward, memberCoords(gb, block, head), gradients);
        if (failed(updated))
          result = failure();
        scf::YieldOp::create(gb, loc,
                             succeeded(updated) ? ValueRange(*updated) : gradients);
      });
  if (failed(result))
    return failure();
  storeGradients(b, block, kv, math.finalGradients(b, loc, members.getResults()));
  gpu::ReturnOp::create(b, loc);
  return success();
}
