//===- TestIrMotion.cpp - the IR-motion helpers on hand-written IR --------===//
//
// Part of fa-mlir.
//
// fa-test-ir-motion runs the helpers of Hopper/IrMotion.h in each block
// that holds an op marked `fa.test.anchor`: an op marked
// `fa.test.hoist_after` moves with what it depends on after the anchor to
// right after it (hoistAfter), one marked `fa.test.move_before` to right
// before it (moveBeforeWithOperands); an op marked `fa.test.await` with an
// integer `pending` gets an fa.mma_wait of its result before its first
// user (awaitAt). The markers stay, for the test to find the ops by.
//
//===----------------------------------------------------------------------===//

#include "Hopper/IrMotion.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

using namespace mlir;
using namespace mlir::fa;
using namespace mlir::fa::hopper;

namespace {

struct TestIrMotionPass
    : public PassWrapper<TestIrMotionPass, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(TestIrMotionPass)

  StringRef getArgument() const final { return "fa-test-ir-motion"; }
  StringRef getDescription() const final {
    return "Move the ops a hand-written block marks around its anchor, with "
           "what they depend on; await marked MMAs at their first use";
  }
  void getDependentDialects(DialectRegistry &registry) const override {
    registry.insert<FADialect>();
  }

  void runOnOperation() override {
    SmallVector<std::pair<Operation *, Operation *>> hoists, moves; // (op, anchor)
    SmallVector<Operation *> awaits;
    getOperation().walk([&](Block *block) {
      Operation *anchor = nullptr;
      for (Operation &op : *block)
        if (op.hasAttr("fa.test.anchor"))
          anchor = &op;
      for (Operation &op : *block) {
        if (op.hasAttr("fa.test.await"))
          awaits.push_back(&op);
        if (!anchor)
          continue;
        if (op.hasAttr("fa.test.hoist_after"))
          hoists.push_back({&op, anchor});
        if (op.hasAttr("fa.test.move_before"))
          moves.push_back({&op, anchor});
      }
    });
    for (auto [op, anchor] : hoists)
      hoistAfter(op, anchor);
    for (auto [op, anchor] : moves)
      moveBeforeWithOperands(op, anchor);
    for (Operation *op : awaits) {
      auto pending = op->getAttrOfType<IntegerAttr>("fa.test.await");
      Operation *user = op->getNumResults() == 1 ? firstUser(op) : nullptr;
      if (!pending || !user || user->getBlock() != op->getBlock()) {
        op->emitError("fa.test.await needs an integer, one result and a user "
                      "in the op's block");
        return signalPassFailure();
      }
      awaitAt(op, user, pending.getInt());
    }
  }
};

} // namespace

namespace mlir {
namespace fa {
namespace test {
void registerTestIrMotionPass() { PassRegistration<TestIrMotionPass>(); }
} // namespace test
} // namespace fa
} // namespace mlir
