//===- BackwardOrder.cpp - the deterministic mode's turns ------------------===//
//
// Part of fa-mlir.
//
// Built deterministic (AttentionKernelConfig::deterministic) and launched
// with `deterministic`, the KV blocks that see Q block i add their share of
// dQ_i in a fixed order: the block of KV block j waits until the Q block's
// counter (dq_semaphore, [B, Hq, ceil(M / 16)], zeroed per launch:
// KernelAbi.h) equals its rank among those blocks, adds, and increments
// it. A block only ever waits on blocks launched before it, so the waits
// cannot deadlock. Each chip's schedule decides which threads add and how
// it knows they are done.
//
// The order is the one in which the blocks would reach Q block i anyway,
// so that blocks resident together rarely wait on each other:
// - Without a mask every KV block walks the Q blocks from the first, so
//   they all reach Q block 0 together: the turns go in increasing j, and
//   KV block j's first turn comes after blocks 0 .. j-1 have each added
//   theirs (a chain of hand-offs: a reduce's completion, a fence, an
//   atomic). With KV blocks fastest in launch order a head's blocks all
//   start together, in every wave, and the chain serialises them; so the
//   (KV head, batch) pairs are fastest, and a wave holds only a few KV
//   blocks of each pair, whose predecessors ran in earlier waves.
// - Under a causal or window mask KV block j walks the Q blocks from its
//   diagonal, so at Q block i the block with the largest visible j
//   arrives first (it started there) and block j after i - diagonal(j)
//   steps: the turns go in decreasing j, and the blocks are launched last
//   KV block first. In increasing order every block's first turn waited
//   for its predecessors to walk down to its diagonal.
// The default kernel under a mask is launched in the same sections, first
// KV block first: KV block j sees Q blocks from its diagonal on, so the
// longest blocks start first and the last wave holds the shortest (in the
// grid's own order, KV blocks fastest, the last pairs' longest blocks
// would start in the last waves).
// Either way the pairs are taken in sections of as many as keep their Q,
// dO and dq_acc rows within a few tens of MB of L2 (with every pair in
// flight at once those rows are far past L2 at long sequences). A section
// trades L2 reuse against the chain: the fewer its pairs, the more KV
// blocks of one pair a wave holds, each a turn behind the one before it.
// Each chip tunes its own size (the section_mib knob, Ampere/Tuning.cpp
// and Hopper/Tuning.cpp).
//
//===----------------------------------------------------------------------===//

#include "fa/Conversion/FAToGPU/BackwardKernel.h"
#include "fa/Conversion/FAToGPU/FragmentPatterns.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;
using namespace mlir::fa;

/// Pairs per section: as many (KV head, batch) pairs as keep their Q, dO
/// and f32 dq_acc rows (the query heads of the group: M·(2D + 2Dv + 4D)
/// bytes each) within `sectionBytes` of L2, at least one, at most all.
static Value sectionPairs(OpBuilder &b, Location loc, const KernelArgs &args,
                          const AttentionKernelConfig &c, int64_t sectionBytes,
                          Value pairs) {
  auto cst = [&](int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); };
  Value group = arith::DivUIOp::create(b, loc, args.index(b, "q_heads"),
                                       args.index(b, "kv_heads"));
  Value pairBytes = arith::MulIOp::create(
      b, loc, arith::MulIOp::create(b, loc, group, args.index(b, "q_len")),
      cst(6 * c.headDim + 2 * c.valueDim));
  Value fit = arith::DivUIOp::create(
      b, loc, cst(sectionBytes), arith::MaxUIOp::create(b, loc, pairBytes, cst(1)));
  return arith::MinUIOp::create(b, loc, arith::MaxUIOp::create(b, loc, fit, cst(1)),
                                pairs);
}

KeyBlockPlace KeyBlockPlace::build(OpBuilder &b, Location loc,
                                   const KernelArgs &args,
                                   const AttentionKernelConfig &c,
                                   int64_t sectionBytes) {
  auto cst = [&](int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); };
  auto blockId = [&](gpu::Dimension d) { return gpu::BlockIdOp::create(b, loc, d); };
  auto gridDim = [&](gpu::Dimension d) { return gpu::GridDimOp::create(b, loc, d); };
  KeyBlockPlace p;
  // Without a mask every KV block walks every Q block: the grid's own
  // order (KV blocks fastest) keeps a head's Q and dO rows shared in L2.
  if (!c.deterministic && !c.mask.isMasking()) {
    p.keyStart = arith::MulIOp::create(b, loc, blockId(gpu::Dimension::x),
                                       cst(c.blockN));
    p.kvHead = blockId(gpu::Dimension::y);
    p.batch = blockId(gpu::Dimension::z);
    return p;
  }
  // The launch's linear block index x + X (y + Y z), read in sections of S
  // (KV head, batch) pairs (the last may hold fewer), the pairs fastest
  // within a section: in 32 bits, as the grid's size is.
  Type i32 = b.getI32Type();
  auto narrow = [&](Value v) { return arith::IndexCastUIOp::create(b, loc, i32, v); };
  auto widen = [&](Value v) {
    return arith::IndexCastUIOp::create(b, loc, b.getIndexType(), v);
  };
  Value keyBlocks = narrow(gridDim(gpu::Dimension::x));
  Value heads = narrow(gridDim(gpu::Dimension::y));
  Value pairs = arith::MulIOp::create(b, loc, heads, narrow(gridDim(gpu::Dimension::z)));
  Value linear = arith::AddIOp::create(
      b, loc, narrow(blockId(gpu::Dimension::x)),
      arith::MulIOp::create(
          b, loc, keyBlocks,
          arith::AddIOp::create(
              b, loc, narrow(blockId(gpu::Dimension::y)),
              arith::MulIOp::create(b, loc, heads, narrow(blockId(gpu::Dimension::z))))));
  Value perSection = narrow(sectionPairs(b, loc, args, c, sectionBytes, widen(pairs)));
  Value sectionBlocks = arith::MulIOp::create(b, loc, perSection, keyBlocks);
  Value section = arith::DivUIOp::create(b, loc, linear, sectionBlocks);
  Value firstPair = arith::MulIOp::create(b, loc, section, perSection);
  Value size = arith::MinUIOp::create(
      b, loc, perSection, arith::SubIOp::create(b, loc, pairs, firstPair));
  Value within = arith::SubIOp::create(
      b, loc, linear, arith::MulIOp::create(b, loc, section, sectionBlocks));
  Value pair = arith::AddIOp::create(b, loc, firstPair,
                                     arith::RemUIOp::create(b, loc, within, size));
  Value launched = arith::DivUIOp::create(b, loc, within, size);
  // Deterministic, the last KV block first (the turns' order); otherwise
  // the first, which sees the most Q blocks under a causal mask.
  if (c.mask.isMasking() && c.deterministic)
    launched = arith::SubIOp::create(
        b, loc,
        arith::SubIOp::create(b, loc, keyBlocks,
                              arith::ConstantOp::create(b, loc, b.getI32IntegerAttr(1))),
        launched);
  Value keyBlock = widen(launched);
  p.kvHead = widen(arith::RemUIOp::create(b, loc, pair, heads));
  p.batch = widen(arith::DivUIOp::create(b, loc, pair, heads));
  p.keyStart = arith::MulIOp::create(b, loc, keyBlock, cst(c.blockN));
  return p;
}

GradQueryTurn GradQueryTurn::build(OpBuilder &b, Location loc,
                                   const KernelArgs &args,
                                   const AttentionKernelConfig &c,
                                   const GridCoords &at, Value keyStart) {
  auto cst = [&](int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); };
  GradQueryTurn turn;
  turn.semaphores = args["dq_semaphore"];
  turn.enabled = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne,
                                       args.index(b, "deterministic"), cst(0));
  // Counter (b, h, q0 / 16) of [B, Hq, ceil(M / 16)].
  Value perHead = arith::CeilDivUIOp::create(b, loc, at.queryLen, cst(16));
  Value head = arith::AddIOp::create(
      b, loc, arith::MulIOp::create(b, loc, at.batch, args.index(b, "q_heads")),
      at.head);
  turn.counter = arith::AddIOp::create(
      b, loc, arith::MulIOp::create(b, loc, head, perHead),
      arith::DivUIOp::create(b, loc, at.queryStart, cst(16)));
  auto [firstKey, visible] = at.visibleKeyBlocks(b, loc, c);
  Value keyBlock = arith::DivUIOp::create(b, loc, keyStart, cst(c.blockN));
  Value firstBlock = arith::DivUIOp::create(b, loc, firstKey, cst(c.blockN));
  Value rank;
  if (c.mask.isMasking()) { // decreasing j from the last visible KV block
    Value lastBlock = arith::SubIOp::create(
        b, loc, arith::AddIOp::create(b, loc, firstBlock, visible), cst(1));
    rank = arith::SubIOp::create(b, loc, lastBlock, keyBlock);
  } else {
    rank = arith::SubIOp::create(b, loc, keyBlock, firstBlock);
  }
  turn.expected = arith::IndexCastOp::create(b, loc, b.getI32Type(), rank);
  return turn;
}

std::pair<GradQueryTurn, Value>
GradQueryTurn::buildLast(OpBuilder &b, Location loc, const KernelArgs &args,
                         const AttentionKernelConfig &c, GridCoords at, Value keyStart,
                         Value begin, Value blocks) {
  auto cst = [&](int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); };
  at.queryStart = arith::AddIOp::create(
      b, loc, begin,
      arith::MulIOp::create(b, loc, arith::SubIOp::create(b, loc, blocks, cst(1)),
                            cst(c.blockM)));
  GradQueryTurn turn = build(b, loc, args, c, at, keyStart);
  Value ran = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, blocks, cst(0));
  return {turn, ran};
}

GradQueryTurn GradQueryTurn::before(OpBuilder &b, Location loc, int64_t rows) const {
  assert(rows % 16 == 0 && "a counter covers 16 query rows");
  GradQueryTurn earlier = *this;
  earlier.counter = arith::SubIOp::create(
      b, loc, counter, arith::ConstantIndexOp::create(b, loc, rows / 16));
  return earlier;
}

/// The 64-bit address of the turn's counter in dq_semaphore.
static Value counterAddress(OpBuilder &b, Location loc, const GradQueryTurn &turn) {
  return arith::AddIOp::create(
      b, loc, globalElementAddress(b, loc, turn.semaphores),
      arith::MulIOp::create(
          b, loc, arith::IndexCastUIOp::create(b, loc, b.getI64Type(), turn.counter),
          arith::ConstantOp::create(b, loc, b.getI64IntegerAttr(4))));
}

/// The counter as a gpu-scope atomic load with `ordering` (ld.acquire.gpu,
/// ld.relaxed.gpu).
static Value loadCounter(OpBuilder &b, Location loc, Value address,
                         LLVM::AtomicOrdering ordering) {
  return LLVM::LoadOp::create(b, loc, b.getI32Type(), globalPointer(b, loc, address),
                              /*alignment=*/4, /*isVolatile=*/false,
                              /*isNonTemporal=*/false, /*isInvariant=*/false,
                              /*isInvariantGroup=*/false, ordering, "device");
}

void GradQueryTurn::await(OpBuilder &b, Location loc) const {
  // Acquire loads: once the count is ours, the earlier blocks' additions
  // (released with their increments) are visible to this thread; no
  // separate fence, and no atomic round trip per poll.
  Value address = counterAddress(b, loc, *this);
  scf::WhileOp::create(
      b, loc, TypeRange{}, ValueRange{},
      [&](OpBuilder &cb, Location, ValueRange) {
        Value now = loadCounter(cb, loc, address, LLVM::AtomicOrdering::acquire);
        Value waiting =
            arith::CmpIOp::create(cb, loc, arith::CmpIPredicate::ne, now, expected);
        scf::ConditionOp::create(cb, loc, waiting, ValueRange{});
      },
      [&](OpBuilder &db, Location, ValueRange) { scf::YieldOp::create(db, loc); });
}

void GradQueryTurn::pass(OpBuilder &b, Location loc) const {
  // A release reduction: this thread's earlier writes (and those ordered
  // before it by a barrier or, for the async proxy, by a completed bulk
  // group and a proxy fence) are visible before the next block sees the
  // count; nothing waits for the increment itself.
  // Asm: LLVM 22 selects atomicrmw release as a relaxed atom (the
  // ordering is dropped).
  LLVM::InlineAsmOp::create(b, loc, Type(), ValueRange{counterAddress(b, loc, *this)},
                            "red.release.gpu.global.add.u32 [$0], 1;", "l",
                            /*has_side_effects=*/true, /*is_align_stack=*/false,
                            LLVM::tailcallkind::TailCallKind::None,
                            /*asm_dialect=*/LLVM::AsmDialectAttr(),
                            /*operand_attrs=*/ArrayAttr());
}

Value GradQueryTurn::peek(OpBuilder &b, Location loc) const {
  return loadCounter(b, loc, counterAddress(b, loc, *this),
                     LLVM::AtomicOrdering::monotonic);
}

/// Passes `turn` on with a relaxed increment, after a fence that released
/// this block's additions.
static void passAfterFence(OpBuilder &b, Location loc, const GradQueryTurn &turn) {
  LLVM::AtomicRMWOp::create(
      b, loc, LLVM::AtomicBinOp::add,
      globalPointer(b, loc, counterAddress(b, loc, turn)),
      arith::ConstantIntOp::create(b, loc, 1, 32), LLVM::AtomicOrdering::monotonic,
      "device", /*alignment=*/4);
}

void GradQueryTurn::awaitPeeked(OpBuilder &b, Location loc, Value peeked,
                                Value passEarlier, int64_t rows) const {
  auto passEarlierTurn = [&](OpBuilder &pb, bool fenced) {
    buildIf(pb, loc, passEarlier, [&](OpBuilder &ib) {
      GradQueryTurn earlier = before(ib, loc, rows);
      if (fenced)
        passAfterFence(ib, loc, earlier);
      else
        earlier.pass(ib, loc);
    });
  };
  Value arrived = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, peeked, expected);
  scf::IfOp::create(
      b, loc, arrived,
      [&](OpBuilder &tb, Location) {
        // A relaxed load that saw the count, then a fence: an acquire
        // pattern (PTX memory model); the fence also releases this
        // thread's earlier writes and what a barrier ordered before it.
        LLVM::FenceOp::create(tb, loc, LLVM::AtomicOrdering::acq_rel, "device");
        passEarlierTurn(tb, /*fenced=*/true);
        scf::YieldOp::create(tb, loc);
      },
      [&](OpBuilder &eb, Location) {
        passEarlierTurn(eb, /*fenced=*/false);
        await(eb, loc);
        scf::YieldOp::create(eb, loc);
      });
}
