//===- GPULowerFragments.cpp - fa-gpu-lower-fragments ---------------------===//
//
// Part of fa-mlir.
//
// A thin driver over the chip-neutral fragment patterns and the chip's MMA
// patterns, with SCF's structural conversions for the loop-carried and
// if-yielded fragments; then the sub-word vectors LLVM would scalarize
// where they are carried are carried as i32 words (PackCarriedPatterns).
//
//===----------------------------------------------------------------------===//

#include "fa/Conversion/FAToGPU/AttentionKernel.h"
#include "fa/Conversion/FAToGPU/FragmentPatterns.h"
#include "fa/Conversion/Passes.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/Patterns.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Interfaces/CallInterfaces.h"
#include "mlir/Interfaces/FunctionInterfaces.h"

namespace mlir {
namespace fa {
#define GEN_PASS_DEF_FAGPULOWERFRAGMENTS
#include "fa/Conversion/Passes.h.inc"
} // namespace fa
} // namespace mlir

using namespace mlir;
using namespace mlir::fa;

void mlir::fa::populateFAGPULowerFragmentsPatterns(
    const AttentionGPUStrategy &strategy, TypeConverter &converter,
    RewritePatternSet &patterns, ConversionTarget &target) {
  addFragmentTypeConversions(converter);
  populateFragmentPatterns(converter, patterns,
                           strategy.fragmentLoweringOptions());
  strategy.populateFragmentLoweringPatterns(converter, patterns);
  scf::populateSCFStructuralTypeConversionsAndLegality(converter, patterns,
                                                        target);
  target.addIllegalDialect<FADialect>();
  // The instruction ops the chip patterns build (convert-fa-gpu-to-llvm's).
  target.addLegalOp<WgmmaOp, WgmmaWaitOp>();
  target.markUnknownOpDynamicallyLegal([](Operation *op) {
    return llvm::none_of(op->getOperandTypes(), hasFragmentLayout) &&
           llvm::none_of(op->getResultTypes(), hasFragmentLayout);
  });
}

namespace {
struct FAGPULowerFragmentsPass
    : mlir::fa::impl::FAGPULowerFragmentsBase<FAGPULowerFragmentsPass> {
  using FAGPULowerFragmentsBase::FAGPULowerFragmentsBase;
  void runOnOperation() override {
    std::unique_ptr<AttentionGPUStrategy> strategy = createAttentionStrategy(chip);
    if (!strategy) {
      mlir::emitError(getOperation().getLoc()) << "unknown chip '" << chip << "' (supported: "
                                 << registeredChips() << ")";
      return signalPassFailure();
    }
    // Only fa-gpu-distribute's output can be lowered here: say so, once,
    // rather than fail to legalize op by op.
    WalkResult undistributed = getOperation().walk([&](Operation *op) {
      if (!isa<FADialect>(op->getDialect()) || isDistributed(op))
        return WalkResult::advance();
      op->emitError() << "fa-gpu-lower-fragments: '" << op->getName()
                      << "' has tiles without a GPU layout: run fa-tile, "
                         "fa-fuse-online-softmax and fa-gpu-distribute first";
      return WalkResult::interrupt();
    });
    if (undistributed.wasInterrupted())
      return signalPassFailure();
    // A tile with a GPU layout is one thread's registers or a view of the
    // block's shared memory: it has no meaning across a call.
    WalkResult crossing = getOperation().walk([&](Operation *op) {
      auto crosses = [](TypeRange types) {
        return llvm::any_of(types, hasFragmentLayout);
      };
      auto function = dyn_cast<FunctionOpInterface>(op);
      bool passes = function ? crosses(function.getArgumentTypes()) ||
                                   crosses(function.getResultTypes())
                             : isa<CallOpInterface>(op) &&
                                   (crosses(op->getOperandTypes()) ||
                                    crosses(op->getResultTypes()));
      if (!passes)
        return WalkResult::advance();
      op->emitError() << "fa-gpu-lower-fragments: '" << op->getName()
                      << "' passes tiles with a GPU layout into or out of a "
                         "function: they live inside one kernel, as "
                         "fa-gpu-distribute places them";
      return WalkResult::interrupt();
    });
    if (crossing.wasInterrupted())
      return signalPassFailure();
    TypeConverter converter;
    RewritePatternSet patterns(&getContext());
    ConversionTarget target(getContext());
    populateFAGPULowerFragmentsPatterns(*strategy, converter, patterns, target);
    if (failed(applyPartialConversion(getOperation(), target,
                                      std::move(patterns))))
      return signalPassFailure();
    SmallVector<Operation *> carriers;
    getOperation().walk([&](Operation *op) {
      if (isa<scf::ForOp, scf::IfOp>(op) &&
          llvm::any_of(op->getResultTypes(), isScalarizedSubwordVector))
        carriers.push_back(op);
    });
    if (failed(packCarriedSubwordVectors(&getContext(), carriers)))
      signalPassFailure();
  }
};
} // namespace
