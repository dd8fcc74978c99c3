//===- HopperSchedule.cpp - the sm_90a kernel's schedule ------------------===//
//
// Part of fa-mlir.
//
// Warp-specialised, as FlashAttention-3 (docs/targets.md): the consumer
// warpgroups (threads 0 .. 32·warps - 1, one per 64 query rows) compute,
// and the producer warpgroup after them issues every copy from one thread.
// The producer lowers its register budget with setmaxnreg and the
// consumers raise theirs.
//
// Per Q tile t of the block (one, or a persistent block's tiles; round r,
// and n counts the KV tiles loaded before: KV tile j uses stage
// s = (n + j) mod stages with parity ((n + j) / stages) mod 2):
//
//   producer                              consumers
//   wait q_empty (parity r ^ 1)           wait q_full (parity r)
//   Q_t by TMA → q_full
//   for j: wait k_empty[s] (parity ^ 1)   wait k_full[s]; S = QKᵀ (wgmma)
//          K_j by TMA → k_full[s]         mask, online softmax (the L2 math)
//          wait v_empty[s] (parity ^ 1)   arrive k_empty[s]; wait v_full[s]
//          V_j by TMA → v_full[s]         acc += PV (wgmma); arrive v_empty[s]
//                                         arrive q_empty; epilogue
//
// (the consumers' loop is software-pipelined: buildPipelinedLoop). e4m3
// adds the producer's transpose of V (staging ring → Vᵀ ring) and, where
// O is staged in shared memory, its TMA store (OutputStaging).
// A ring's empty barriers expect every consumer thread; its full barriers
// one arrival plus the copy's bytes (TMA's complete_tx). A fresh barrier's
// "previous phase" counts as complete, so the producer's first wait on
// each empty barrier (parity 1) passes at once. Rows past M and keys past
// N arrive as TMA's out-of-bounds zeros; the L2 math masks the keys.
//
//===----------------------------------------------------------------------===//

#include "HopperPtx.h"
#include "HopperStrategy.h"

#include "fa/Conversion/FAToGPU/FragmentPatterns.h"
#include "fa/Conversion/FAToGPU/KernelSkeleton.h"
#include "fa/Dialect/FA/Utils/MaskUtils.h"
#include "fa/runtime/KernelAbi.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"

using namespace mlir;
using namespace mlir::fa;
using namespace mlir::fa::hopper;

namespace {

/// The kernel's shared memory: tile views, their addresses, the barriers.
struct SharedState {
  const AttentionKernelConfig &c;
  SharedMemoryPlan plan;
  Value base;    ///< shared-window address of the buffer (i32)
  /// memref views [(stages,) panels, rows, W]; e4m3: `value` holds Vᵀ
  /// (rows Dv, W 128 keys)
  Value query, key, value;
  /// O's staging [panels, BM, 64] of the output type, for its TMA store
  /// (null where O is stored from the registers).
  Value output;

  Value idx(OpBuilder &b, Location loc, int64_t v) const {
    return arith::ConstantIndexOp::create(b, loc, v);
  }
  Value i32(OpBuilder &b, Location loc, int64_t v) const {
    return arith::ConstantIntOp::create(b, loc, v, 32);
  }
  /// An index or i32 value as i32.
  Value toI32(OpBuilder &b, Location loc, Value value) const {
    assert((value.getType().isIndex() || value.getType().isInteger(32)) &&
           "an index or i32 value");
    if (value.getType().isInteger(32))
      return value;
    return arith::IndexCastOp::create(b, loc, b.getI32Type(), value);
  }
  /// The constant `v` of `like`'s type (index or i32).
  Value constantLike(OpBuilder &b, Location loc, Value like, int64_t v) const {
    assert((like.getType().isIndex() || like.getType().isInteger(32)) &&
           "an index or i32 value");
    return like.getType().isIndex() ? idx(b, loc, v) : i32(b, loc, v);
  }
  /// The mbarrier phase parity (i32) of a barrier's `uses`-th use.
  Value parity(OpBuilder &b, Location loc, Value uses) const {
    return toI32(b, loc, arith::RemUIOp::create(b, loc, uses,
                                                constantLike(b, loc, uses, 2)));
  }
  /// The parity that says a slot of use `parity` was released: the phase
  /// before it (a fresh barrier's previous phase counts as complete, so
  /// use 0 passes).
  Value releasedParity(OpBuilder &b, Location loc, Value parity) const {
    return arith::XOrIOp::create(b, loc, parity, i32(b, loc, 1));
  }
  /// base + bytes + stride · stage (stage an index or i32, or null).
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
  /// Released by the consumers once their last S = QKᵀ of a tile is done.
  Value queryEmpty(OpBuilder &b, Location loc) const {
    return address(b, loc, plan.barrierOffset + 8 * (1 + 4 * c.stages));
  }
  /// e4m3: Vᵀ of `stage` written by the producer warpgroup (its 128
  /// threads arrive).
  Value valueTransposed(OpBuilder &b, Location loc, Value stage) const {
    return address(b, loc, plan.barrierOffset + 8 * (2 + 4 * c.stages), stage, 8);
  }
  /// e4m3: V_j's staging slot read by the producer's transpose (its 128
  /// threads arrive); TMA may refill it without waiting for the consumers.
  Value stagingEmpty(OpBuilder &b, Location loc, Value stage) const {
    return address(b, loc, plan.barrierOffset + 8 * (2 + 5 * c.stages), stage, 8);
  }
  /// e4m3 with O over the staging ring (outputInStaging): O's store of
  /// the tile has read it (each consumer warpgroup's first thread arrives,
  /// once a tile that has KV tiles: one phase per QueryTile::outputRound).
  /// The issuer waits for phase r - 1 before staged tile r's first V copy,
  /// and no phase goes unwaited: each arrival of tile r needs that V, so
  /// the barrier is never two phases off the wait (which a parity cannot
  /// tell apart). A tile with no KV tiles would break that (its arrivals
  /// need no V: a race compute-sanitizer's synccheck and racecheck find),
  /// so its O leaves from registers and it does not arrive.
  Value outputEmpty(OpBuilder &b, Location loc) const {
    return address(b, loc, plan.barrierOffset + 8 * (2 + 6 * c.stages));
  }
  /// The tile of `buffer` (behind `stage`) as a value of the math; a
  /// key-major one is stored transposed (Vᵀ of the e4m3 kernel).
  Value tile(OpBuilder &b, Location loc, Value buffer, Value stage,
             int64_t rows, int64_t width, bool keyMajor = false) const {
    auto type = RankedTensorType::get(
        {rows, width}, c.elementType,
        TmaSharedLayoutAttr::get(b.getContext(), kPanelRowBytes, keyMajor));
    return SharedTileOp::create(b, loc, type, buffer, stage);
  }
  /// V as the P·V reads it: the ring's tile (Vᵀ for e4m3).
  Value valueTile(OpBuilder &b, Location loc, Value stage) const {
    return tile(b, loc, value, stage, c.blockN, c.valueDim, isE4M3(c.elementType));
  }
};

enum Barrier { KeyFull = 0, KeyEmpty = 1, ValueFull = 2, ValueEmpty = 3 };

SharedState buildSharedState(OpBuilder &b, Location loc,
                             gpu::GPUModuleOp module,
                             const AttentionKernelConfig &c) {
  SharedState s{c, SharedMemoryPlan(c)};
  Value smem = sharedMemoryBase(b, module, loc, s.plan.bytes);
  s.base = sharedWindowAddress(b, loc, smem);
  auto workgroup =
      gpu::AddressSpaceAttr::get(b.getContext(), gpu::AddressSpace::Workgroup);
  auto view = [&](int64_t byteOffset, ArrayRef<int64_t> shape,
                  Type element = Type()) -> Value {
    auto type = MemRefType::get(shape, element ? element : c.elementType,
                                nullptr, workgroup);
    return memref::ViewOp::create(b, loc, type, smem, s.idx(b, loc, byteOffset),
                                  ValueRange{});
  };
  const SharedMemoryPlan &p = s.plan;
  int64_t width = panelElementsOf(c.elementType);
  int64_t valueRows = isE4M3(c.elementType) ? c.valueDim : c.blockN;
  s.query = view(0, {p.queryPanels, c.blockM, width});
  s.key = view(p.keyOffset, {c.stages, p.keyPanels, c.blockN, width});
  s.value = view(p.valueOffset, {c.stages, p.valuePanels, valueRows, width});
  if (p.outputPanels)
    s.output = view(p.outputOffset, {p.outputPanels, c.blockM, kPanelElements},
                    outputElementTypeOf(c.elementType));
  return s;
}

/// Thread 0 initialises the barriers; the block waits for it.
void initBarriers(OpBuilder &b, Location loc, const SharedState &s, Value tid,
                  int64_t consumerThreads) {
  inFirstThread(b, loc, tid, [&](OpBuilder &then) {
    mbarrierInit(then, loc, s.queryFull(then, loc), 1);
    mbarrierInit(then, loc, s.queryEmpty(then, loc), consumerThreads);
    for (int64_t stage = 0; stage < s.c.stages; ++stage) {
      Value st = s.idx(then, loc, stage);
      mbarrierInit(then, loc, s.barrier(then, loc, st, KeyFull), 1);
      mbarrierInit(then, loc, s.barrier(then, loc, st, KeyEmpty), consumerThreads);
      mbarrierInit(then, loc, s.barrier(then, loc, st, ValueFull), 1);
      mbarrierInit(then, loc, s.barrier(then, loc, st, ValueEmpty),
                   consumerThreads);
      if (isE4M3(s.c.elementType)) {
        mbarrierInit(then, loc, s.valueTransposed(then, loc, st),
                     kWarpgroupThreads);
        if (s.c.schedule.stagingReleasedByTranspose)
          mbarrierInit(then, loc, s.stagingEmpty(then, loc, st), kWarpgroupThreads);
      }
    }
    if (s.plan.outputInStaging)
      mbarrierInit(then, loc, s.outputEmpty(then, loc), consumerGroups(s.c));
    fenceBarrierInit(then, loc);
  });
  gpu::BarrierOp::create(b, loc);
}

/// Ring position of the n-th KV tile this block loads (counted over all
/// its Q tiles): (stage, parity of its use of the stage), of n's type
/// (index or i32).
std::pair<Value, Value> ringPosition(OpBuilder &b, Location loc,
                                     const SharedState &s, Value n) {
  Value stages = s.constantLike(b, loc, n, s.c.stages);
  Value stage = arith::RemUIOp::create(b, loc, n, stages);
  Value round = arith::DivUIOp::create(b, loc, n, stages);
  return {stage, s.parity(b, loc, round)};
}

/// One Q tile of the persistent loop, as a role sees it.
struct QueryTile {
  GridCoords grid;
  Value kvBegin, numBlocks; ///< the visible KV tiles (GridCoords)
  Value round;              ///< this block's tile count so far: Q's phase
  Value ringBase;           ///< KV tiles this block loaded before this one
  /// With O over V's staging ring (outputInStaging): this block's tiles
  /// so far that had KV tiles, i.e. that staged O: output empty's phase.
  Value outputRound;

  /// Whether the tile has KV tiles (i1); one with none (the paired causal
  /// tile past M, fully masked rows) stores O from registers.
  Value hasKeys(OpBuilder &b, Location loc) const {
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ugt, numBlocks,
                                 arith::ConstantIndexOp::create(b, loc, 0));
  }
};

/// Runs `body` for each of this block's tiles (BlockTiles), carrying
/// the round and the ring count both roles agree on (and, with O over
/// V's staging ring, the output round).
void forEachQueryTile(OpBuilder &b, Location loc, const SharedState &s,
                      const KernelArgs &args, const BlockTiles &tiles,
                      llvm::function_ref<void(OpBuilder &, const QueryTile &)> body) {
  Value zero = s.idx(b, loc, 0);
  bool outputRound = s.plan.outputInStaging;
  SmallVector<Value> initial(outputRound ? 3 : 2, zero);
  scf::ForOp::create(
      b, loc, tiles.first, tiles.count, tiles.step, initial,
      [&](OpBuilder &tb, Location, Value tile, ValueRange carried) {
        QueryTile q;
        q.grid = tiles.coords(tb, loc, args, s.c, tile);
        std::tie(q.kvBegin, q.numBlocks) = tiles.visibleKeyBlocks(tb, loc, s.c, q.grid);
        q.round = carried[0];
        q.ringBase = carried[1];
        if (outputRound)
          q.outputRound = carried[2];
        body(tb, q);
        SmallVector<Value> next{
            arith::AddIOp::create(tb, loc, q.round, s.idx(tb, loc, 1)),
            arith::AddIOp::create(tb, loc, q.ringBase, q.numBlocks)};
        if (outputRound)
          next.push_back(arith::AddIOp::create(
              tb, loc, q.outputRound,
              arith::IndexCastUIOp::create(tb, loc, tb.getIndexType(),
                                           q.hasKeys(tb, loc))));
        scf::YieldOp::create(tb, loc, next);
      });
}

/// Panel by panel: box [rows][W] at (W·panel, row, head, batch) of
/// tensor map `map` into `dst`, completing on `bar`.
void copyTile(OpBuilder &b, Location loc, const SharedState &s,
              const KernelArgs &args, StringRef map, Value dst, int64_t panels,
              int64_t rows, Value row, Value headIndex, Value batch, Value bar) {
  int64_t width = panelElementsOf(s.c.elementType);
  for (int64_t panel = 0; panel < panels; ++panel) {
    Value panelDst = arith::AddIOp::create(
        b, loc, dst, s.i32(b, loc, panel * rows * kPanelRowBytes));
    tmaLoad(b, loc, panelDst, args[map],
            {s.i32(b, loc, panel * width), row, headIndex, batch}, bar);
  }
}

/// A tile's TMA coordinates (i32): its head, KV head and batch.
struct CopyCoords {
  Value head, kvHead, batch;
  CopyCoords(OpBuilder &b, Location loc, const SharedState &s,
             const GridCoords &grid)
      : head(s.toI32(b, loc, grid.head)), kvHead(s.toI32(b, loc, grid.kvHead)),
        batch(s.toI32(b, loc, grid.batch)) {}
};

/// The issuing thread's copy of a tile's Q, once the consumers released
/// the last one.
void issueQuery(OpBuilder &b, Location loc, const SharedState &s,
                const KernelArgs &args, const QueryTile &q,
                const CopyCoords &at) {
  waitParity(b, loc, s.queryEmpty(b, loc),
             s.releasedParity(b, loc, s.parity(b, loc, q.round)));
  Value queryBar = s.queryFull(b, loc);
  arriveExpectTx(b, loc, queryBar, s.plan.queryBytes);
  Value dst = s.address(b, loc, 0);
  Value row = s.toI32(b, loc, q.grid.queryStart);
  copyTile(b, loc, s, args, "q_tmap", dst, s.plan.queryPanels, s.c.blockM, row,
           at.head, at.batch, queryBar);
}

/// The issuing thread's copies of KV tile `j` into the rings: K, and V
/// (into the e4m3 kernel's staging ring, where the producer transposes
/// it), each once its stage was released: K's by the consumers, V's by
/// the consumers or (staging_released_by_transpose) by the producer's own
/// transpose, so that V_j is in flight while the consumers still read
/// Vᵀ_{j - stages}.
void issueKeyValue(OpBuilder &b, Location loc, const SharedState &s,
                   const KernelArgs &args, const QueryTile &q,
                   const CopyCoords &at, Value j) {
  const AttentionKernelConfig &c = s.c;
  const SharedMemoryPlan &p = s.plan;
  auto [stage, parity] =
      ringPosition(b, loc, s, arith::AddIOp::create(b, loc, q.ringBase, j));
  Value emptyParity = s.releasedParity(b, loc, parity);
  // In i32, as TMA takes it (j is the producer's i32 or an index).
  Value keyStart = arith::AddIOp::create(
      b, loc, s.toI32(b, loc, q.kvBegin),
      arith::MulIOp::create(b, loc, s.toI32(b, loc, j), s.i32(b, loc, c.blockN)));
  // Wait for the stage to be released, expect its bytes, copy.
  auto fillStage = [&](Value empty, Barrier full, StringRef map,
                       int64_t offset, int64_t stageBytes, int64_t panels) {
    waitParity(b, loc, empty, emptyParity);
    Value bar = s.barrier(b, loc, stage, full);
    arriveExpectTx(b, loc, bar, stageBytes);
    Value dst = s.address(b, loc, offset, stage, stageBytes);
    copyTile(b, loc, s, args, map, dst, panels, c.blockN, keyStart, at.kvHead,
             at.batch, bar);
  };
  fillStage(s.barrier(b, loc, stage, KeyEmpty), KeyFull, "k_tmap", p.keyOffset,
            p.keyStageBytes, p.keyPanels);
  if (p.outputInStaging) {
    // The tile's first V waits until the last staged O, over the staging
    // ring, has been read by its store (a fresh barrier passes round 0).
    Value first = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, j,
                                        s.constantLike(b, loc, j, 0));
    buildIf(b, loc, first, [&](OpBuilder &then) {
      waitParity(then, loc, s.outputEmpty(then, loc),
                 s.releasedParity(then, loc, s.parity(then, loc, q.outputRound)));
    });
  }
  if (isE4M3(c.elementType))
    fillStage(c.schedule.stagingReleasedByTranspose
                  ? s.stagingEmpty(b, loc, stage)
                  : s.barrier(b, loc, stage, ValueEmpty),
              ValueFull, "v_tmap", p.stagingOffset, p.stagingStageBytes,
              p.stagingPanels);
  else
    fillStage(s.barrier(b, loc, stage, ValueEmpty), ValueFull, "v_tmap",
              p.valueOffset, p.valueStageBytes, p.valuePanels);
}

/// One thread's copies, per tile (16-bit kernels): Q, then each visible
/// K and V tile into the rings.
void buildProducer(OpBuilder &b, Location loc, const SharedState &s,
                   const KernelArgs &args, const QueryTile &q) {
  CopyCoords at(b, loc, s, q.grid);
  issueQuery(b, loc, s, args, q, at);
  scf::ForOp::create(b, loc, s.idx(b, loc, 0), q.numBlocks, s.idx(b, loc, 1),
                     ValueRange{},
                     [&](OpBuilder &lb, Location, Value j, ValueRange) {
                       issueKeyValue(lb, loc, s, args, q, at, j);
                       scf::YieldOp::create(lb, loc);
                     });
}

/// e4m3: the producer warpgroup transposes V_j from the staging ring (as
/// TMA wrote it: [BN][Dv] in 128-column panels) into Vᵀ_j of the V ring
/// ([Dv][BN] in 128-key panels, keys permuted by #fa.tma_shared keyMajor's
/// σ within each 32), the K-major B operand e4m3 wgmma needs.
///
/// sm_90 has no 8-bit ldmatrix, so the 16-bit matrix instructions move
/// byte pairs and two prmt per register pair finish the transpose (FA3's
/// form). Warp w takes the 32-key steps s = w, w + 4, ...; a task is 16
/// keys 32s + 16h .. + 15 by n = 4, 2 or 1 chunks of 16 columns (c0 ..
/// c0 + n - 1 of staging panel P; c0 a multiple of n):
///   ldmatrix.x{n}.trans, twice (keys + 0 .. 7, then + 8 .. 15): matrix q
///     = chunk c0 + q (lane L gives key row L % 8); lane T gets, of each,
///     keys 2t, 2t + 1 (t = T % 4) at columns c, c + 1 (c = 16(c0 + q) +
///     2(T / 4));
///   prmt: keys {2t, 2t + 1, 2t + 8, 2t + 9} of column c (and of c + 1),
///     which σ places at Vᵀ positions 32s + 16h + 4t .. + 3;
///   stmatrix.x4 (.x2 where n = 1), per pair of chunks q0, q0 + 1:
///     matrix j = (chunk q0 + j / 2, parity j % 2) = Vᵀ rows 16·chunk +
///     2i + (parity ^ i / 4) (i = T / 4),
///     positions 32s + 16h .. + 15: lanes T >= 16 hold their two columns'
///     words swapped (prmt's selectors), so that each matrix covers rows
///     of all eight residues mod 8 (conflict-free).
/// Every address is a per-lane base plus a constant: the reads' swizzle
/// (chunk c0 + q xor the key's row % 8 = L % 8) is c0 xor the lane's own
/// (L / 8 xor L % 8), and a step's key rows move in multiples of 8, so the
/// only run-time arithmetic is one xor per nonzero c0 (4; 2 or 6 where Dv
/// is not a multiple of 64) and h = 1's (the stores' key chunk 2w + h xor
/// the row's residue). The xors touch bits 4-6 only: the bases below them
/// are multiples of 128 (fa_smem is 1024-aligned, the plan's offsets and
/// stage sizes multiples of 1024). The per-column-group form (four key
/// groups of one chunk) needed a swizzle xor for every ldmatrix and held
/// only one load in flight: the producer, the D256 kernel's bottleneck,
/// spent its iterations on addresses. scripts/fp8-transpose-sim.py (a lit
/// test) simulates it byte by byte with these address expressions against
/// σ and counts the ways: a change here must be made there too.
void transposeValueTile(OpBuilder &b, Location loc, const SharedState &s,
                        Value stage, Value producerThread) {
  const AttentionKernelConfig &c = s.c;
  const SharedMemoryPlan &p = s.plan;
  auto cst = [&](int64_t v) { return s.i32(b, loc, v); };
  auto add = [&](Value x, Value y) { return arith::AddIOp::create(b, loc, x, y).getResult(); };
  auto mul = [&](Value x, int64_t y) { return arith::MulIOp::create(b, loc, x, cst(y)).getResult(); };
  auto div = [&](Value x, int64_t y) { return arith::DivUIOp::create(b, loc, x, cst(y)).getResult(); };
  auto rem = [&](Value x, int64_t y) { return arith::RemUIOp::create(b, loc, x, cst(y)).getResult(); };
  auto xorv = [&](Value x, Value y) { return arith::XOrIOp::create(b, loc, x, y).getResult(); };
  auto xorc = [&](Value x, int64_t y) { return y ? xorv(x, cst(y)) : x; };
  Value tid = s.toI32(b, loc, producerThread);
  Value warp = div(tid, 32), lane = rem(tid, 32);
  assert((p.stagingOffset | p.stagingStageBytes | p.valueOffset |
          p.valueStageBytes) % kPanelRowBytes == 0 &&
         "the swizzle xors below need 128-byte aligned bases");
  Value staging = s.address(b, loc, p.stagingOffset, stage, p.stagingStageBytes);
  Value transposed = s.address(b, loc, p.valueOffset, stage, p.valueStageBytes);
  constexpr int64_t kProducerWarps = kWarpgroupThreads / 32;
  // block_n is a multiple of 32 and Dv of 16 (unsupportedE4M3Operands):
  // the last round only the warps below steps % 4 when block_n is not a
  // multiple of 128 (224: 2, 2, 2, 1).
  int64_t steps = c.blockN / 32;
  int64_t stepsPerWarp = llvm::divideCeil(steps, kProducerWarps);
  // Reads: lane L gives row L % 8 of matrix L / 8: key 32w + L % 8 (+ a
  // constant), chunk (c0 + L / 8) ^ (L % 8) = c0 ^ (L / 8 ^ L % 8).
  Value rowInMatrix = rem(lane, 8), matrix = div(lane, 8);
  Value readBase =
      add(staging, add(mul(add(mul(warp, 32), rowInMatrix), kPanelRowBytes),
                       mul(xorv(matrix, rowInMatrix), 16)));
  // Writes: lane L gives row i = L % 8 of matrix j = L / 8 (chunk q0 + j /
  // 2, parity j % 2): Vᵀ row 16(j / 2) + 2i + (parity ^ i / 4) (+ 16 q0),
  // key chunk 2w (+ h) ^ row % 8.
  Value row = add(mul(rowInMatrix, 2), rem(xorv(matrix, div(lane, 4)), 2));
  Value writeBase = add(
      transposed,
      add(mul(add(mul(div(matrix, 2), 16), row), kPanelRowBytes),
          mul(xorv(mul(warp, 2), rem(row, 8)), 16)));
  // Lane T's words for columns c and c + 1 (selectors 0x6420, 0x7531),
  // swapped where T / 4 >= 4: 0x1111 apart.
  Value swapped = div(lane, 16);
  Value evenSelector = add(cst(0x6420), mul(swapped, 0x1111));
  Value oddSelector = arith::SubIOp::create(b, loc, cst(0x7531), mul(swapped, 0x1111));
  // One task's chunks: 4, then 2, then 1 (each start a multiple of its
  // count) of a panel's min(8, columns left / 16).
  auto piecesOf = [](int64_t chunks) {
    SmallVector<std::pair<int64_t, int64_t>> pieces; // (c0, n)
    for (int64_t n = 4, c0 = 0; n >= 1; n /= 2)
      for (; chunks - c0 >= n; c0 += n)
        pieces.push_back({c0, n});
    return pieces;
  };
  // The matrix instructions are inline PTX with side effects (ordered
  // after the stage's barrier wait), so nothing moves a load above an
  // earlier store: a task's two loads go first, then its stores.
  auto transposeStep = [&](int64_t a) {
    for (int64_t h = 0; h < 2; ++h) {
      Value writeAt = xorc(writeBase, 16 * h);
      for (int64_t panel = 0; panel * 128 < c.valueDim; ++panel) {
        int64_t chunks = std::min<int64_t>(8, (c.valueDim - 128 * panel) / 16);
        for (auto [c0, n] : piecesOf(chunks)) {
          Value readAt = xorc(readBase, 16 * c0);
          int64_t readOffset = panel * c.blockN * kPanelRowBytes +
                               (128 * a + 16 * h) * kPanelRowBytes;
          SmallVector<Value> low = loadMatrixTransposed(b, loc, readAt, readOffset, n);
          SmallVector<Value> high = loadMatrixTransposed(
              b, loc, readAt, readOffset + 8 * kPanelRowBytes, n);
          for (int64_t q0 = 0; q0 < n; q0 += 2) {
            // Byte k of low[q] is key (2t + k / 2)'s column c + k % 2.
            SmallVector<Value> words;
            for (int64_t q = q0; q < std::min(q0 + 2, n); ++q) {
              words.push_back(bytePermute(b, loc, low[q], high[q], evenSelector));
              words.push_back(bytePermute(b, loc, low[q], high[q], oddSelector));
            }
            storeMatrix(b, loc, writeAt,
                        16 * (8 * panel + c0 + q0) * kPanelRowBytes +
                            a * c.valueDim * kPanelRowBytes,
                        words);
          }
        }
      }
    }
  };
  for (int64_t a = 0; a < stepsPerWarp; ++a) {
    int64_t warpsInRound = std::min(kProducerWarps, steps - a * kProducerWarps);
    if (warpsInRound == kProducerWarps) {
      transposeStep(a);
      continue;
    }
    // Warp-uniform: the matrix instructions are .sync.aligned.
    Value takes = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, warp,
                                        cst(warpsInRound));
    auto round = scf::IfOp::create(b, loc, takes, /*withElseRegion=*/false);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(round.thenBlock());
    transposeStep(a);
  }
}

/// e4m3: the producer warpgroup, per tile. One thread issues the copies
/// (Q, K_j, V_j into the staging ring) one KV tile ahead of the
/// transposes; all 128 threads transpose V_{j-1} once it landed and its
/// Vᵀ slot is free, make their writes visible to wgmma (the async proxy)
/// and arrive on its Vᵀ barrier (and its staging slot's, where the
/// transpose releases it).
void buildTransposingProducer(OpBuilder &b, Location loc, const SharedState &s,
                              const KernelArgs &args, const QueryTile &q,
                              Value producerThread) {
  // In i32, as the loop below (an index compare kept a 64-bit value live).
  Value issuer = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                       s.toI32(b, loc, producerThread),
                                       s.i32(b, loc, 0));
  CopyCoords at(b, loc, s, q.grid);
  buildIf(b, loc, issuer,
          [&](OpBuilder &then) { issueQuery(then, loc, s, args, q, at); });
  // The KV loop counts in i32 (ring positions, TMA coordinates): with
  // index (i64) ones the 24-register producer reloaded its bounds from
  // local memory and compared in 64 bits every tile. The consumers count
  // in index: the two agree while a block has loaded fewer than 2^32 KV
  // tiles (hours of one launch).
  QueryTile tileI32 = q;
  tileI32.numBlocks = s.toI32(b, loc, q.numBlocks);
  tileI32.ringBase = s.toI32(b, loc, q.ringBase);
  Value one = s.i32(b, loc, 1);
  scf::ForOp::create(
      b, loc, s.i32(b, loc, 0),
      arith::AddIOp::create(b, loc, tileI32.numBlocks, one), one, ValueRange{},
      [&](OpBuilder &lb, Location, Value j, ValueRange) {
        Value issue = arith::AndIOp::create(
            lb, loc, issuer,
            arith::CmpIOp::create(lb, loc, arith::CmpIPredicate::ult, j,
                                  tileI32.numBlocks));
        buildIf(lb, loc, issue, [&](OpBuilder &then) {
          issueKeyValue(then, loc, s, args, tileI32, at, j);
        });
        Value previous = arith::CmpIOp::create(lb, loc, arith::CmpIPredicate::ugt,
                                               j, s.i32(lb, loc, 0));
        buildIf(lb, loc, previous, [&](OpBuilder &then) {
          auto [stage, parity] = ringPosition(
              then, loc, s,
              arith::SubIOp::create(
                  then, loc, arith::AddIOp::create(then, loc, tileI32.ringBase, j),
                  one));
          // V_{j-1} landed, and its Vᵀ slot is free: the consumers
          // released Vᵀ_{j-1-stages} (implied when V's copy waited for it).
          bool early = s.c.schedule.stagingReleasedByTranspose;
          waitParity(then, loc, s.barrier(then, loc, stage, ValueFull), parity);
          if (early)
            waitParity(then, loc, s.barrier(then, loc, stage, ValueEmpty),
                       s.releasedParity(then, loc, parity));
          transposeValueTile(then, loc, s, stage, producerThread);
          fenceProxyAsync(then, loc);
          arrive(then, loc, s.valueTransposed(then, loc, stage));
          if (early)
            arrive(then, loc, s.stagingEmpty(then, loc, stage));
        });
        scf::YieldOp::create(lb, loc);
      });
}

/// The forward consumers' named barriers (0 is gpu.barrier's): warpgroup
/// g's pingpong turn is 1 + g, its O staging's 1 + groups + g.
Value pingpongBarrierId(OpBuilder &b, Location loc, const SharedState &s, Value group) {
  return arith::AddIOp::create(b, loc, group, s.i32(b, loc, 1));
}
Value outputBarrierId(OpBuilder &b, Location loc, const SharedState &s, Value group) {
  return arith::AddIOp::create(b, loc, group, s.i32(b, loc, 1 + consumerGroups(s.c)));
}
static_assert(1 + 2 * kMaxConsumerGroups <= 16, "PTX has 16 named barriers");
static_assert(::fa::abi::kTensorMapWarpgroupRows == kRowsPerWarpgroup,
              "o_tmap's box is one consumer warpgroup's rows");

/// This thread's consumer warpgroup (i32).
Value consumerGroupOf(OpBuilder &b, Location loc, const SharedState &s) {
  Value tid = gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x);
  return s.toI32(b, loc,
                 arith::DivUIOp::create(b, loc, tid, s.idx(b, loc, kWarpgroupThreads)));
}

/// Pingpong (FA3's warp scheduler barrier): the consumer warpgroups issue
/// their MMAs in turn, round robin, so that one's softmax runs under the
/// others' GEMMs. Warpgroup w syncs on named barrier 1 + w before issuing
/// and arrives on its successor's after. The turns run on across the
/// block's tiles (every warpgroup takes the same tiles, so the same number
/// of turns): the last warpgroup gives the first its first turn before
/// the tiles, and the first takes that last arrival after them, so every
/// barrier phase completes (no arrival left pending).
struct Pingpong {
  const SharedState &s;
  int64_t groups = 0; ///< consumer warpgroups taking turns (< 2: no pingpong)
  // Computed once, before the tiles (i32 barrier ids, i1 flags):
  Value ownBarrier, nextBarrier, isFirstGroup, isLastGroup;

  // The syncing and the arriving warpgroup.
  static constexpr int64_t kThreads = 2 * kWarpgroupThreads;

  Pingpong(OpBuilder &b, Location loc, const SharedState &s, int64_t groups)
      : s(s), groups(groups) {
    if (groups < 2)
      return;
    Value group = consumerGroupOf(b, loc, s);
    ownBarrier = pingpongBarrierId(b, loc, s, group);
    nextBarrier = pingpongBarrierId(
        b, loc, s, arith::RemUIOp::create(b, loc, ownBarrier, s.i32(b, loc, groups)));
    isFirstGroup = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                         group, s.i32(b, loc, 0));
    isLastGroup = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, group,
                                        s.i32(b, loc, groups - 1));
  }
  /// Before the tiles: the first turn is warpgroup 0's.
  void start(OpBuilder &b, Location loc) const {
    if (groups >= 2)
      namedBarrierArrive(b, loc, s.i32(b, loc, 1), kThreads, isLastGroup);
  }
  /// After the tiles: warpgroup 0 takes the last warpgroup's last arrival.
  void drain(OpBuilder &b, Location loc) const {
    if (groups < 2)
      return;
    scf::IfOp::create(b, loc, isFirstGroup, [&](OpBuilder &then, Location) {
      namedBarrierSync(then, loc, s.i32(then, loc, 1), kThreads);
      scf::YieldOp::create(then, loc);
    });
  }
  void beforeIssue(OpBuilder &b, Location loc) const {
    if (groups >= 2)
      namedBarrierSync(b, loc, ownBarrier, kThreads);
  }
  void afterIssue(OpBuilder &b, Location loc) const {
    if (groups >= 2)
      namedBarrierArrive(b, loc, nextBarrier, kThreads,
                         arith::ConstantIntOp::create(b, loc, 1, 1));
  }
};

/// The KV tiles of `q` (indices into its visible tiles) that need no mask:
/// [begin, end), clamped to [1, numBlocks) (tile 0 is the pipeline's
/// prologue). `begin` is null where the mask has no left edge (it is then 1).
std::pair<Value, Value> unmaskedTiles(OpBuilder &b, Location loc,
                                      const AttentionKernelConfig &c,
                                      const QueryTile &q) {
  auto [firstKey, endKey] =
      buildUnmaskedKeyRange(b, loc, c.mask, q.grid.queryStart, c.blockM,
                            q.grid.queryLen, q.grid.keyLen);
  // Tile j holds keys [kvBegin + j·block_n, kvBegin + (j + 1)·block_n).
  Value blockN = arith::ConstantIndexOp::create(b, loc, c.blockN);
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  Value last = arith::MaxSIOp::create(b, loc, q.numBlocks, one);
  Value begin;
  bool leftEdge = c.mask.getKind() == MaskKind::Window && c.mask.getLeft() >= 0;
  if (leftEdge) {
    begin = arith::CeilDivSIOp::create(
        b, loc, arith::SubIOp::create(b, loc, firstKey, q.kvBegin), blockN);
    begin = arith::MinSIOp::create(b, loc, arith::MaxSIOp::create(b, loc, begin, one),
                                   last);
  }
  Value end = arith::FloorDivSIOp::create(
      b, loc, arith::SubIOp::create(b, loc, endKey, q.kvBegin), blockN);
  end = arith::MinSIOp::create(b, loc, end, q.numBlocks);
  end = arith::MaxSIOp::create(b, loc, end, begin ? begin : one);
  return {begin, end};
}

/// The consumers' loop over one Q tile's KV tiles, software-pipelined
/// (DistributedMath::emitPipelinedBody): tile 0's S and softmax peeled;
/// then per tile j ≥ 1 S_j and P_{j-1}·V_{j-1} in flight together, the
/// softmax of j under the P·V; the last P·V after the loop. Returns the
/// loop's values.
FailureOr<SmallVector<Value>>
buildPipelinedLoop(OpBuilder &b, Location loc, const SharedState &s,
                   DistributedMath &math, const QueryTile &q, Value query,
                   const Pingpong &pingpong) {
  const AttentionKernelConfig &c = s.c;
  const GridCoords &grid = q.grid;
  Value one = s.idx(b, loc, 1);
  Value hasBlocks = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sgt,
                                          q.numBlocks, s.idx(b, loc, 0));
  Value lastTile = arith::SubIOp::create(b, loc, q.numBlocks, one);
  auto positionOf = [&](OpBuilder &pb, Value j) {
    return ringPosition(pb, loc, s, arith::AddIOp::create(pb, loc, q.ringBase, j));
  };
  auto keyTileAt = [&](Value stage, Value parity) {
    return [&, stage, parity](OpBuilder &tb) {
      waitParity(tb, loc, s.barrier(tb, loc, stage, KeyFull), parity);
      return s.tile(tb, loc, s.key, stage, c.blockN, c.headDim);
    };
  };
  auto valueTileAt = [&](Value stage, Value parity) {
    return [&, stage, parity](OpBuilder &tb) {
      // e4m3: Vᵀ, once the producer wrote it; else V as TMA landed it.
      waitParity(tb, loc,
                 isE4M3(c.elementType) ? s.valueTransposed(tb, loc, stage)
                                       : s.barrier(tb, loc, stage, ValueFull),
                 parity);
      return s.valueTile(tb, loc, stage);
    };
  };
  auto hooksFor = [&](Value keyStage, Value valueStage) {
    DistributedMath::PipelineHooks hooks;
    hooks.beforeIssue = [&](OpBuilder &hb) { pingpong.beforeIssue(hb, loc); };
    hooks.afterIssue = [&](OpBuilder &hb) { pingpong.afterIssue(hb, loc); };
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
        auto [stage, parity] = positionOf(tb, s.idx(tb, loc, 0));
        auto body = math.emitPipelinedBody(
            tb, grid, q.kvBegin, init, query, keyTileAt(stage, parity),
            DistributedMath::DeferredProduct{}, hooksFor(stage, Value()));
        if (failed(body))
          result = failure();
        scf::YieldOp::create(tb, loc, succeeded(body) ? ValueRange(*body) : ValueRange(init));
      },
      [&](OpBuilder &eb, Location) { scf::YieldOp::create(eb, loc, init); });
  // Tiles [from, to) in one loop; `unmasked`: tiles every key of which
  // every query sees, emitted without the mask (splits_unmasked_tiles).
  auto tilesIn = [&](Value from, Value to, ValueRange init, bool unmasked) {
    math.setTilesUnmasked(unmasked);
    auto loop = scf::ForOp::create(
        b, loc, from, to, one, init,
        [&](OpBuilder &lb, Location, Value j, ValueRange carried) {
          auto [stage, parity] = positionOf(lb, j);
          auto [valueStage, valueParity] =
              positionOf(lb, arith::SubIOp::create(lb, loc, j, one));
          Value keyStart = arith::AddIOp::create(
              lb, loc, q.kvBegin,
              arith::MulIOp::create(lb, loc, j, s.idx(lb, loc, c.blockN)));
          DistributedMath::DeferredProduct deferred{
              carried.back(), valueTileAt(valueStage, valueParity)};
          auto body = math.emitPipelinedBody(
              lb, grid, keyStart, carried, query, keyTileAt(stage, parity),
              deferred, hooksFor(stage, valueStage));
          if (failed(body))
            result = failure();
          scf::YieldOp::create(lb, loc, succeeded(body) ? ValueRange(*body) : carried);
        });
    math.setTilesUnmasked(false);
    return loop.getResults();
  };
  ValueRange carried = first.getResults();
  Value maskedFrom = one; // the tiles after the unmasked ones
  if (c.schedule.splitsUnmaskedTiles) {
    auto [unmaskedBegin, unmaskedEnd] = unmaskedTiles(b, loc, c, q);
    if (unmaskedBegin) // a window's left edge: its tiles come first
      carried = tilesIn(one, unmaskedBegin, carried, /*unmasked=*/false);
    carried = tilesIn(unmaskedBegin ? unmaskedBegin : one, unmaskedEnd, carried,
                      /*unmasked=*/true);
    maskedFrom = unmaskedEnd;
  }
  auto loopResults = tilesIn(maskedFrom, q.numBlocks, carried, /*unmasked=*/false);
  if (failed(result))
    return failure();
  SmallVector<Value> loopValues(loopResults.drop_back());
  auto last = scf::IfOp::create(
      b, loc, hasBlocks,
      [&](OpBuilder &tb, Location) {
        auto [stage, parity] = positionOf(tb, lastTile);
        DistributedMath::PipelineHooks hooks = hooksFor(Value(), stage);
        hooks.beforeIssue = hooks.afterIssue = nullptr; // outside the turns
        scf::YieldOp::create(
            tb, loc,
            math.emitDeferredProduct(
                tb, loopResults, {loopResults.back(), valueTileAt(stage, parity)},
                hooks));
      },
      [&](OpBuilder &eb, Location) { scf::YieldOp::create(eb, loc, loopValues); });
  return SmallVector<Value>(last.getResults());
}

/// O through shared memory and TMA (storesOutputThroughShared), each
/// consumer warpgroup its own 64 rows; LSE keeps its stores from the
/// registers. Per tile: the warpgroup writes O (swizzled as TMA reads
/// it), fences it for the async proxy and syncs on its named barrier; the
/// leader, its first thread, stores one box per 64-column panel (rows
/// past M are outside the map and not written). In O's own region the
/// leader does not wait: the store drains under the next tile, and the
/// next write waits (leader, then sync) for its read. Over V's staging
/// ring (outputInStaging) it waits for the read at once and arrives on
/// output empty, which the next staged tile's first V copy waits for; a
/// tile with no KV tiles stores O from registers (SharedState::outputEmpty
/// says why).
struct OutputStaging {
  const SharedState &s;

  /// This thread's warpgroup (i32), whether it is its leader (i1), and the
  /// warpgroup's named barrier (i32), computed where they are used
  /// (hoisted before the tiles, ptxas would schedule the consumers
  /// differently).
  struct Thread {
    Value group, leader, barrier;
  };
  Thread thread(OpBuilder &b, Location loc) const {
    Thread t;
    t.group = consumerGroupOf(b, loc, s);
    t.barrier = outputBarrierId(b, loc, s, t.group);
    Value tid = gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x);
    t.leader = arith::CmpIOp::create(
        b, loc, arith::CmpIPredicate::eq,
        arith::RemUIOp::create(b, loc, tid, s.idx(b, loc, kWarpgroupThreads)),
        s.idx(b, loc, 0));
    return t;
  }
  /// The leader's wait until its stores have read the staging.
  static void awaitRead(OpBuilder &b, Location loc, Value leader) {
    buildIf(b, loc, leader, [&](OpBuilder &then) {
      bulkWait(then, loc, 0, /*readOnly=*/true);
    });
  }
  void store(OpBuilder &b, Location loc, Value output, const KernelArgs &args,
             const QueryTile &q) const {
    if (!s.plan.outputInStaging)
      return stage(b, loc, output, args, q.grid);
    buildIfElse(
        b, loc, q.hasKeys(b, loc),
        [&](OpBuilder &then) { stage(then, loc, output, args, q.grid); },
        [&](OpBuilder &otherwise) {
          storeOutputFromRegisters(otherwise, loc, output, args, q.grid);
        });
  }
  /// O through the staging and the leader's TMA store. In O's own region
  /// the warpgroup syncs first, behind its leader's wait for the last
  /// read. Over V's staging ring that wait is behind every thread already:
  /// a staged tile's threads waited for its Vᵀ, transposed from V copied
  /// after the issuer's wait for the last staged tile's arrivals. That
  /// invariant spans the roles: a change that let a tile with KV tiles
  /// (hasKeys) skip its last P·V's Vᵀ wait, or its issuer skip V_0's
  /// copy, must bring the sync back.
  void stage(OpBuilder &b, Location loc, Value output, const KernelArgs &args,
             const GridCoords &grid) const {
    bool inStaging = s.plan.outputInStaging;
    auto [group, leader, barrier] = thread(b, loc);
    if (!inStaging) {
      awaitRead(b, loc, leader);
      namedBarrierSync(b, loc, barrier, kWarpgroupThreads);
    }
    StoreSharedOp::create(b, loc, output, s.output);
    fenceProxyAsync(b, loc);
    namedBarrierSync(b, loc, barrier, kWarpgroupThreads);
    buildIf(b, loc, leader, [&](OpBuilder &then) {
      Value rowOffset = arith::MulIOp::create(then, loc, group,
                                              s.i32(then, loc, kRowsPerWarpgroup));
      Value row = arith::AddIOp::create(
          then, loc, s.toI32(then, loc, grid.queryStart), rowOffset);
      Value source = arith::AddIOp::create(
          then, loc, s.address(then, loc, s.plan.outputOffset),
          arith::MulIOp::create(then, loc, rowOffset, s.i32(then, loc, kPanelRowBytes)));
      for (int64_t panel = 0; panel < s.plan.outputPanels; ++panel)
        tmaStore(then, loc,
                 arith::AddIOp::create(
                     then, loc, source,
                     s.i32(then, loc, panel * s.c.blockM * kPanelRowBytes)),
                 args["o_tmap"],
                 {s.i32(then, loc, panel * kPanelElements), row,
                  s.toI32(then, loc, grid.head), s.toI32(then, loc, grid.batch)});
      bulkCommit(then, loc);
      if (inStaging) {
        bulkWait(then, loc, 0, /*readOnly=*/true);
        arrive(then, loc, s.outputEmpty(then, loc));
      }
    });
  }
  /// After the tiles: the last stores must have read the staging before
  /// the block exits (over V's staging ring each tile waited already).
  void drain(OpBuilder &b, Location loc) const {
    if (!s.output || s.plan.outputInStaging)
      return;
    awaitRead(b, loc, thread(b, loc).leader);
  }
};

/// The consumers, per Q tile: the L2 math over the rings, Q released, the
/// epilogue (under the producer's next Q and K).
LogicalResult buildConsumers(OpBuilder &b, Location loc, const SharedState &s,
                             const FusedAttention &attention,
                             const KernelArgs &args,
                             const BlockTiles &tiles) {
  const AttentionKernelConfig &c = s.c;
  // wgmma's accumulator is mma.sync's per warp: one m16 tile per warp.
  auto layout = FragmentLayoutAttr::get(b.getContext(), c.warps, /*mTiles=*/1);
  DistributedMath math(attention, layout);
  Pingpong pingpong(b, loc, s, consumerGroups(c));
  OutputStaging outputStaging{s};
  pingpong.start(b, loc);
  LogicalResult result = success();
  forEachQueryTile(b, loc, s, args, tiles, [&](OpBuilder &tb, const QueryTile &q) {
    waitParity(tb, loc, s.queryFull(tb, loc), s.parity(tb, loc, q.round));
    Value query = s.tile(tb, loc, s.query, Value(), c.blockM, c.headDim);
    math.loadHeadScoreInputs(tb, loc, q.grid, args);
    if (isE4M3(c.elementType)) {
      auto [scoreDescale, valueDescale] = q.grid.descales(tb, loc, args);
      math.setDescales(scoreDescale, valueDescale);
    }
    auto values = buildPipelinedLoop(tb, loc, s, math, q, query, pingpong);
    if (failed(values)) {
      result = failure();
      return;
    }
    // Every S = QKᵀ of the tile has been waited for: Q may be overwritten.
    arrive(tb, loc, s.queryEmpty(tb, loc));
    auto storeOutput = [&](OpBuilder &sb, Value output) {
      outputStaging.store(sb, loc, output, args, q);
    };
    if (failed(emitEpilogueAndStore(tb, loc, math, *values, args, q.grid,
                                    s.output ? storeOutput
                                             : llvm::function_ref<void(OpBuilder &, Value)>())))
      result = failure();
  });
  pingpong.drain(b, loc);
  outputStaging.drain(b, loc);
  return result;
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
  KernelArgs args = KernelArgs::create(b, module, c, name, blockThreadsFor(c),
                                       /*tensorMaps=*/true,
                                       storesOutputThroughShared(c));
  SharedState s = buildSharedState(b, loc, module, c);
  Value tid = gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x);
  initBarriers(b, loc, s, tid, consumerThreads);
  BlockTiles tiles = BlockTiles::build(b, loc, args, c, c.schedule.tileOrder);

  // One if/else, one role per branch: what setmaxnreg needs.
  Value isProducer = arith::CmpIOp::create(
      b, loc, arith::CmpIPredicate::uge, tid, s.idx(b, loc, consumerThreads));
  auto roles = scf::IfOp::create(b, loc, isProducer, /*withElseRegion=*/true);
  {
    OpBuilder::InsertionGuard roleGuard(b);
    b.setInsertionPointToStart(roles.thenBlock());
    RegisterBudget budget = c.schedule.registerBudget;
    if (failed(checkRegisterBudget(loc, budget, consumerThreads, /*blocksPerSM=*/1)))
      return failure();
    setMaxRegisters(b, loc, budget.producer, /*increase=*/false);
    if (isE4M3(c.elementType)) {
      // Every producer thread transposes V; one issues the copies.
      Value producerThread = arith::SubIOp::create(
          b, loc, tid, s.idx(b, loc, consumerThreads));
      forEachQueryTile(b, loc, s, args, tiles,
                       [&](OpBuilder &tb, const QueryTile &q) {
                         buildTransposingProducer(tb, loc, s, args, q,
                                                  producerThread);
                       });
    } else {
      Value issuer = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                           tid, s.idx(b, loc, consumerThreads));
      buildIf(b, loc, issuer, [&](OpBuilder &then) {
        forEachQueryTile(then, loc, s, args, tiles,
                         [&](OpBuilder &tb, const QueryTile &q) {
                           buildProducer(tb, loc, s, args, q);
                         });
      });
    }
    b.setInsertionPointToStart(roles.elseBlock());
    setMaxRegisters(b, loc, budget.consumer, /*increase=*/true);
    if (failed(buildConsumers(b, loc, s, attention, args, tiles)))
      return failure();
  }
  gpu::ReturnOp::create(b, loc);
  return success();
}
