//===- TestPingpong.cpp - consumer turns built on hand-written IR ---------===//
//
// Part of fa-mlir.
//
// fa-test-pingpong builds a Pingpong (Hopper/Pingpong.h) in each gpu.func
// that carries `fa.test.pingpong = {groups, first_barrier}`: the
// warpgroups' barriers at the function's start, then the first turn; each
// op marked `fa.test.issue` (the MMAs a warpgroup issues) between a wait
// for the warpgroup's turn and the next warpgroup's turn; the last
// arrival taken before each gpu.return. The markers are consumed.
//
//===----------------------------------------------------------------------===//

#include "Hopper/Pingpong.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

using namespace mlir;
using namespace mlir::fa::hopper;

namespace {

constexpr StringLiteral kPingpongAttr = "fa.test.pingpong";
constexpr StringLiteral kIssueAttr = "fa.test.issue";

struct TestPingpongPass
    : public PassWrapper<TestPingpongPass, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(TestPingpongPass)

  StringRef getArgument() const final { return "fa-test-pingpong"; }
  StringRef getDescription() const final {
    return "Put the ops a hand-written gpu.func marks in the consumer "
           "warpgroups' pingpong turns";
  }
  void getDependentDialects(DialectRegistry &registry) const override {
    registry.insert<arith::ArithDialect, gpu::GPUDialect, LLVM::LLVMDialect,
                    NVVM::NVVMDialect, scf::SCFDialect>();
  }

  void runOnOperation() override {
    getOperation().walk([&](gpu::GPUFuncOp func) {
      auto spec = func->getAttrOfType<DictionaryAttr>(kPingpongAttr);
      if (!spec)
        return;
      func->removeAttr(kPingpongAttr);
      auto groups = spec.getAs<IntegerAttr>("groups");
      auto first = spec.getAs<IntegerAttr>("first_barrier");
      if (!groups || !first || first.getInt() < 1 ||
          first.getInt() + groups.getInt() > 16) {
        func.emitError(kPingpongAttr)
            << " needs groups and first_barrier (named barriers 1 to 15)";
        return signalPassFailure();
      }
      Location loc = func.getLoc();
      OpBuilder b(func.getContext());
      b.setInsertionPointToStart(&func.front());
      Pingpong pingpong(b, loc, groups.getInt(), first.getInt());
      pingpong.start(b, loc);
      SmallVector<Operation *> issues, returns;
      func.walk([&](Operation *op) {
        if (op->removeAttr(kIssueAttr))
          issues.push_back(op);
        if (isa<gpu::ReturnOp>(op))
          returns.push_back(op);
      });
      for (Operation *op : issues) {
        b.setInsertionPoint(op);
        pingpong.beforeIssue(b, loc);
        b.setInsertionPointAfter(op);
        pingpong.afterIssue(b, loc);
      }
      for (Operation *op : returns) {
        b.setInsertionPoint(op);
        pingpong.drain(b, loc);
      }
    });
  }
};

} // namespace

namespace mlir {
namespace fa {
namespace test {
void registerTestPingpongPass() { PassRegistration<TestPingpongPass>(); }
} // namespace test
} // namespace fa
} // namespace mlir
