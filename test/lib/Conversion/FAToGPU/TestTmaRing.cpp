//===- TestTmaRing.cpp - a TMA ring built on hand-written IR --------------===//
//
// Part of fa-mlir.
//
// fa-test-tma-ring builds a TmaRing (Hopper/TmaRing.h) in each gpu.func
// that carries `fa.test.tma_ring = {stages, panels, rows, consumers}`:
// shared memory for `stages` slots of `panels` 128-byte panels of `rows`
// rows, then a full and an empty mbarrier per slot (16 bytes a slot);
// thread 0's init; and, in the function's marked loops (induction
// variable j):
//
// * `fa.test.producer`: at the top of the body, acquire slot j mod
//   stages, commit its bytes and copy a box of the tensor map (the
//   function's first argument, !llvm.ptr) at row j · rows, head and batch
//   0 into it;
// * `fa.test.consumer`: wait for slot j mod stages at the top of the body,
//   release it at the end.
//
// The full barriers expect one arrival (and the copies' bytes), the empty
// ones `consumers`. The markers are consumed.
//
//===----------------------------------------------------------------------===//

#include "Hopper/HopperPtx.h"
#include "Hopper/ScheduleValues.h"
#include "Hopper/TmaRing.h"

#include "fa/Conversion/FAToGPU/FragmentPatterns.h"
#include "fa/Conversion/FAToGPU/KernelSkeleton.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Pass/Pass.h"

using namespace mlir;
using namespace mlir::fa;
using namespace mlir::fa::hopper;

namespace {

constexpr StringLiteral kRingAttr = "fa.test.tma_ring";
constexpr StringLiteral kProducerAttr = "fa.test.producer";
constexpr StringLiteral kConsumerAttr = "fa.test.consumer";

struct TestTmaRingPass
    : public PassWrapper<TestTmaRingPass, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(TestTmaRingPass)

  StringRef getArgument() const final { return "fa-test-tma-ring"; }
  StringRef getDescription() const final {
    return "Build a TMA ring (its barriers, the producer's and the consumers' "
           "protocol) around the loops a hand-written gpu.func marks";
  }
  void getDependentDialects(DialectRegistry &registry) const override {
    registry.insert<arith::ArithDialect, gpu::GPUDialect, LLVM::LLVMDialect,
                    memref::MemRefDialect, NVVM::NVVMDialect, scf::SCFDialect>();
  }

  void runOnOperation() override {
    getOperation().walk([&](gpu::GPUFuncOp func) {
      auto spec = func->getAttrOfType<DictionaryAttr>(kRingAttr);
      if (!spec)
        return;
      func->removeAttr(kRingAttr);
      if (failed(buildRing(func, spec)))
        signalPassFailure();
    });
  }

  LogicalResult buildRing(gpu::GPUFuncOp func, DictionaryAttr spec) {
    auto field = [&](StringRef name) -> int64_t {
      auto value = spec.getAs<IntegerAttr>(name);
      return value ? value.getInt() : 0;
    };
    int64_t stages = field("stages"), panels = field("panels"),
            rows = field("rows"), consumers = field("consumers");
    if (stages < 1 || panels < 1 || rows < 1 || consumers < 1)
      return func.emitError(kRingAttr)
             << " needs positive stages, panels, rows and consumers";
    if (func.getNumArguments() < 1 ||
        !isa<LLVM::LLVMPointerType>(func.getArgument(0).getType()))
      return func.emitError("the tensor map (!llvm.ptr) must be the first argument");
    Value tensorMap = func.getArgument(0);
    Location loc = func.getLoc();
    OpBuilder b(func.getContext());
    b.setInsertionPointToStart(&func.front());

    int64_t slotBytes = panels * rows * kPanelRowBytes;
    int64_t barriers = stages * slotBytes;
    Value smem = sharedMemoryBase(b, func->getParentOfType<gpu::GPUModuleOp>(), loc,
                                  barriers + 16 * stages);
    Value base = sharedWindowAddress(b, loc, smem);
    TmaRing ring(base, stages, /*offset=*/0, slotBytes,
                 RingBarriers{barriers, 16, 1},
                 RingBarriers{barriers + 8, 16, consumers});
    Value tid = gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x);
    inFirstThread(b, loc, tid, [&](OpBuilder &then) {
      ring.init(then, loc);
      fenceBarrierInit(then, loc);
    });
    gpu::BarrierOp::create(b, loc);

    func.walk([&](scf::ForOp loop) {
      bool producer = loop->removeAttr(kProducerAttr) != nullptr;
      bool consumer = loop->removeAttr(kConsumerAttr) != nullptr;
      if (!producer && !consumer)
        return;
      Value j = loop.getInductionVar();
      b.setInsertionPointToStart(loop.getBody());
      auto [stage, parity] = ring.position(b, loc, j);
      if (producer) {
        ring.acquire(b, loc, stage, TmaRing::releasedParity(b, loc, parity));
        Value bar = ring.commit(b, loc, stage, ring.bytesPerSlot());
        Value row = toI32(b, loc,
                          arith::MulIOp::create(
                              b, loc, j, arith::ConstantIndexOp::create(b, loc, rows)));
        Value zero = i32Constant(b, loc, 0);
        ring.copy(b, loc, stage, tensorMap,
                  TmaBox{panels, rows, kPanelElements, row, zero, zero}, bar);
      }
      if (consumer) {
        ring.wait(b, loc, stage, parity);
        b.setInsertionPoint(loop.getBody()->getTerminator());
        ring.release(b, loc, stage);
      }
    });
    return success();
  }
};

} // namespace

namespace mlir {
namespace fa {
namespace test {
void registerTestTmaRingPass() { PassRegistration<TestTmaRingPass>(); }
} // namespace test
} // namespace fa
} // namespace mlir
