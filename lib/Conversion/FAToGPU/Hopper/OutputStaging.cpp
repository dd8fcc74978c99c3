//===- OutputStaging.cpp - a tile through shared memory and TMA -----------===//
//
// Part of fa-mlir.
//
//===----------------------------------------------------------------------===//

#include "OutputStaging.h"

#include "HopperPtx.h"
#include "ScheduleValues.h"

#include "fa/Conversion/FAToGPU/FragmentPatterns.h"

using namespace mlir;
using namespace mlir::fa;
using namespace mlir::fa::hopper;

static_assert(::fa::abi::kTensorMapWarpgroupRows == kRowsPerWarpgroup,
              "the output tensor map's box is one consumer warpgroup's rows");

OutputStaging::Thread OutputStaging::thread(OpBuilder &b, Location loc) const {
  Thread t;
  t.group = warpgroupIndex(b, loc);
  t.barrier = arith::AddIOp::create(b, loc, t.group,
                                    i32Constant(b, loc, layout.firstBarrier));
  Value tid = gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x);
  t.leader = arith::CmpIOp::create(
      b, loc, arith::CmpIPredicate::eq,
      arith::RemUIOp::create(b, loc, tid,
                             arith::ConstantIndexOp::create(b, loc, kWarpgroupThreads)),
      arith::ConstantIndexOp::create(b, loc, 0));
  return t;
}

void OutputStaging::awaitRead(OpBuilder &b, Location loc, Value leader) {
  buildIf(b, loc, leader, [&](OpBuilder &then) {
    bulkWait(then, loc, 0, /*readOnly=*/true);
  });
}

void OutputStaging::stage(OpBuilder &b, Location loc, Value output,
                          const GridCoords &grid) const {
  auto [group, leader, barrier] = thread(b, loc);
  if (!lent()) {
    awaitRead(b, loc, leader);
    namedBarrierSync(b, loc, barrier, kWarpgroupThreads);
  }
  StoreSharedOp::create(b, loc, output, layout.buffer);
  fenceProxyAsync(b, loc);
  namedBarrierSync(b, loc, barrier, kWarpgroupThreads);
  buildIf(b, loc, leader, [&](OpBuilder &then) {
    Value rowOffset = arith::MulIOp::create(then, loc, group,
                                            i32Constant(then, loc, kRowsPerWarpgroup));
    Value row = arith::AddIOp::create(then, loc, toI32(then, loc, grid.queryStart),
                                      rowOffset);
    Value source = arith::AddIOp::create(
        then, loc, sharedAddress(then, loc, layout.base, layout.offset),
        arith::MulIOp::create(then, loc, rowOffset, i32Constant(then, loc, kPanelRowBytes)));
    for (int64_t panel = 0; panel < layout.panels; ++panel)
      tmaStore(then, loc,
               arith::AddIOp::create(
                   then, loc, source,
                   i32Constant(then, loc, panel * layout.rows * kPanelRowBytes)),
               layout.tensorMap,
               {i32Constant(then, loc, panel * kPanelElements), row,
                toI32(then, loc, grid.head), toI32(then, loc, grid.batch)});
    bulkCommit(then, loc);
    if (lent()) {
      bulkWait(then, loc, 0, /*readOnly=*/true);
      arrive(then, loc, sharedAddress(then, loc, layout.base, *layout.readBarrier));
    }
  });
}

void OutputStaging::drain(OpBuilder &b, Location loc) const {
  if (lent())
    return;
  awaitRead(b, loc, thread(b, loc).leader);
}
