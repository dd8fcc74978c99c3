//===- IrMotion.cpp - moving ops and placing MMA waits in a block ---------===//
//
// Part of fa-mlir.
//
//===----------------------------------------------------------------------===//

#include "IrMotion.h"

#include "mlir/IR/Builders.h"

#include "llvm/ADT/SetVector.h"

using namespace mlir;
using namespace mlir::fa;

SmallVector<Operation *> hopper::operandsAfter(Operation *op, Operation *anchor) {
  Block *block = anchor->getBlock();
  llvm::SetVector<Operation *> moved;
  SmallVector<Operation *> worklist = {op};
  while (!worklist.empty()) {
    Operation *next = worklist.pop_back_val();
    if (next->getBlock() != block || !anchor->isBeforeInBlock(next) ||
        !moved.insert(next))
      continue;
    for (Value operand : next->getOperands())
      if (Operation *def = operand.getDefiningOp())
        worklist.push_back(def);
  }
  SmallVector<Operation *> ordered(moved.begin(), moved.end());
  llvm::sort(ordered, [](Operation *a, Operation *b) { return a->isBeforeInBlock(b); });
  return ordered;
}

void hopper::hoistAfter(Operation *op, Operation *anchor) {
  Operation *after = anchor;
  for (Operation *m : operandsAfter(op, anchor)) {
    m->moveAfter(after);
    after = m;
  }
}

void hopper::moveBeforeWithOperands(Operation *op, Operation *anchor) {
  for (Operation *m : operandsAfter(op, anchor))
    m->moveBefore(anchor);
}

Operation *hopper::firstUser(Operation *op) {
  Operation *first = nullptr;
  for (Operation *user : op->getUsers())
    if (!first || user->isBeforeInBlock(first))
      first = user;
  return first;
}

void hopper::readThroughWait(Operation *mma, MmaWaitOp wait) {
  mma->getResult(0).replaceAllUsesExcept(wait.getResult(), wait);
}

MmaWaitOp hopper::awaitAt(Operation *mma, Operation *before, int64_t pending) {
  OpBuilder b(before);
  auto wait = MmaWaitOp::create(b, mma->getLoc(), mma->getResult(0).getType(),
                                mma->getResult(0), b.getI64IntegerAttr(pending));
  readThroughWait(mma, wait);
  return wait;
}

bool hopper::readsBuffer(TileMatmulOp mma, Value buffer) {
  return llvm::any_of(mma->getOperands(), [&](Value operand) {
    auto tile = operand.getDefiningOp<SharedTileOp>();
    return tile && tile.getBuffer() == buffer;
  });
}
