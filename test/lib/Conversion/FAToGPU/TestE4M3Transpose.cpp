//===- TestE4M3Transpose.cpp - the e4m3 transpose on hand-written IR ------===//
//
// Part of fa-mlir.
//
// fa-test-e4m3-transpose emits the e4m3 tile transpose
// (Hopper/E4M3Transpose.h) at the start of each gpu.func that carries
// `fa.test.e4m3_transpose = {keys, columns}`, with the function's
// arguments as the thread in the warpgroup (index or i32), the source and
// the destination shared addresses (i32). The marker is consumed.
//
//===----------------------------------------------------------------------===//

#include "Hopper/E4M3Transpose.h"

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

constexpr StringLiteral kTransposeAttr = "fa.test.e4m3_transpose";

struct TestE4M3TransposePass
    : public PassWrapper<TestE4M3TransposePass, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(TestE4M3TransposePass)

  StringRef getArgument() const final { return "fa-test-e4m3-transpose"; }
  StringRef getDescription() const final {
    return "Emit the e4m3 tile transpose at the start of a hand-written gpu.func";
  }
  void getDependentDialects(DialectRegistry &registry) const override {
    registry.insert<arith::ArithDialect, gpu::GPUDialect, LLVM::LLVMDialect,
                    NVVM::NVVMDialect, scf::SCFDialect>();
  }

  void runOnOperation() override {
    getOperation().walk([&](gpu::GPUFuncOp func) {
      auto spec = func->getAttrOfType<DictionaryAttr>(kTransposeAttr);
      if (!spec)
        return;
      func->removeAttr(kTransposeAttr);
      auto keys = spec.getAs<IntegerAttr>("keys");
      auto columns = spec.getAs<IntegerAttr>("columns");
      auto isI32 = [&](unsigned i) {
        return func.getArgument(i).getType().isInteger(32);
      };
      if (!keys || !columns || keys.getInt() <= 0 || keys.getInt() % 32 ||
          columns.getInt() <= 0 || columns.getInt() % 16 ||
          func.getNumArguments() != 3 || !isI32(1) || !isI32(2)) {
        func.emitError(kTransposeAttr)
            << " needs keys (a multiple of 32), columns (of 16) and the "
               "arguments (thread, source: i32, destination: i32)";
        return signalPassFailure();
      }
      OpBuilder b(func.getContext());
      b.setInsertionPointToStart(&func.front());
      transposeValueTile(b, func.getLoc(), func.getArgument(0), func.getArgument(1),
                         func.getArgument(2), keys.getInt(), columns.getInt());
    });
  }
};

} // namespace

namespace mlir {
namespace fa {
namespace test {
void registerTestE4M3TransposePass() { PassRegistration<TestE4M3TransposePass>(); }
} // namespace test
} // namespace fa
} // namespace mlir
