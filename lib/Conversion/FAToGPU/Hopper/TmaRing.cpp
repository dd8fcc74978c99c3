//===- TmaRing.cpp - a ring of shared buffers and its mbarriers -----------===//
//
// Part of fa-mlir.
//
//===----------------------------------------------------------------------===//

#include "TmaRing.h"

#include "HopperPtx.h"
#include "ScheduleValues.h"

using namespace mlir;
using namespace mlir::fa;
using namespace mlir::fa::hopper;

RingPosition TmaRing::position(OpBuilder &b, Location loc, Value n) const {
  Value stages = constantLike(b, loc, n, numStages);
  Value stage = arith::RemUIOp::create(b, loc, n, stages);
  Value round = arith::DivUIOp::create(b, loc, n, stages);
  return {stage, parityOf(b, loc, round)};
}

Value TmaRing::parityOf(OpBuilder &b, Location loc, Value uses) {
  return toI32(b, loc, arith::RemUIOp::create(b, loc, uses,
                                              constantLike(b, loc, uses, 2)));
}

Value TmaRing::releasedParity(OpBuilder &b, Location loc, Value parity) {
  return arith::XOrIOp::create(b, loc, parity, i32Constant(b, loc, 1));
}

Value TmaRing::barrier(OpBuilder &b, Location loc, const RingBarriers &kind,
                       Value stage) const {
  return sharedAddress(b, loc, base, kind.offset, stage, kind.stride);
}

Value TmaRing::slot(OpBuilder &b, Location loc, Value stage) const {
  return sharedAddress(b, loc, base, offset, stage, slotBytes);
}

Value TmaRing::fullBarrier(OpBuilder &b, Location loc, Value stage) const {
  return barrier(b, loc, full, stage);
}

Value TmaRing::emptyBarrier(OpBuilder &b, Location loc, Value stage) const {
  return barrier(b, loc, empty, stage);
}

void TmaRing::initFull(OpBuilder &b, Location loc, Value stage) const {
  mbarrierInit(b, loc, fullBarrier(b, loc, stage), full.arrivals);
}

void TmaRing::initEmpty(OpBuilder &b, Location loc, Value stage) const {
  mbarrierInit(b, loc, emptyBarrier(b, loc, stage), empty.arrivals);
}

void TmaRing::init(OpBuilder &b, Location loc, Value stage) const {
  initFull(b, loc, stage);
  initEmpty(b, loc, stage);
}

void TmaRing::init(OpBuilder &b, Location loc) const {
  if (numStages == 1)
    return init(b, loc, Value());
  for (int64_t stage = 0; stage < numStages; ++stage)
    init(b, loc, arith::ConstantIndexOp::create(b, loc, stage));
}

void TmaRing::acquire(OpBuilder &b, Location loc, Value stage,
                      Value released) const {
  waitParity(b, loc, emptyBarrier(b, loc, stage), released);
}

Value TmaRing::commit(OpBuilder &b, Location loc, Value stage,
                      int64_t bytes) const {
  Value bar = fullBarrier(b, loc, stage);
  arriveExpectTx(b, loc, bar, bytes);
  return bar;
}

void TmaRing::commitWrites(OpBuilder &b, Location loc, Value stage) const {
  arrive(b, loc, fullBarrier(b, loc, stage));
}

void TmaRing::copy(OpBuilder &b, Location loc, Value stage, Value tensorMap,
                   const TmaBox &box, Value barrier) const {
  copyBox(b, loc, slot(b, loc, stage), tensorMap, box, barrier);
}

void TmaRing::wait(OpBuilder &b, Location loc, Value stage, Value parity) const {
  waitParity(b, loc, fullBarrier(b, loc, stage), parity);
}

void TmaRing::release(OpBuilder &b, Location loc, Value stage) const {
  arrive(b, loc, emptyBarrier(b, loc, stage));
}

void hopper::copyBox(OpBuilder &b, Location loc, Value dst, Value tensorMap,
                     const TmaBox &box, Value barrier) {
  for (int64_t panel = 0; panel < box.panels; ++panel) {
    Value panelDst = arith::AddIOp::create(
        b, loc, dst, i32Constant(b, loc, panel * box.rows * kPanelRowBytes));
    tmaLoad(b, loc, panelDst, tensorMap,
            {i32Constant(b, loc, panel * box.panelElements), box.row, box.head,
             box.batch},
            barrier);
  }
}
