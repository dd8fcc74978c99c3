//===- TestOutputStaging.cpp - output staging on hand-written IR ----------===//
//
// Part of fa-mlir.
//
// fa-test-output-staging builds an OutputStaging (Hopper/OutputStaging.h)
// in each gpu.func that carries `fa.test.output_staging = {panels, rows,
// offset, first_barrier}` (and `read_barrier`, bytes past the shared
// memory's start, where the staging is lent by a ring). The function's
// arguments are the output's tensor map (!llvm.ptr), then the first query
// row, the head and the batch (index). Each op marked `fa.test.stage`
// becomes the staging of its operand (the consumers' output tile, of a
// 16-bit type); each gpu.return drains the stores first. The staging is
// `offset` bytes into the kernel's shared memory.
//
//===----------------------------------------------------------------------===//

#include "Hopper/OutputStaging.h"
#include "Hopper/ScheduleValues.h"

#include "fa/Conversion/FAToGPU/FragmentPatterns.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Pass/Pass.h"

using namespace mlir;
using namespace mlir::fa;
using namespace mlir::fa::hopper;

namespace {

constexpr StringLiteral kStagingAttr = "fa.test.output_staging";
constexpr StringLiteral kStageAttr = "fa.test.stage";

struct TestOutputStagingPass
    : public PassWrapper<TestOutputStagingPass, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(TestOutputStagingPass)

  StringRef getArgument() const final { return "fa-test-output-staging"; }
  StringRef getDescription() const final {
    return "Store the output tiles a hand-written gpu.func marks through "
           "shared memory and TMA";
  }
  void getDependentDialects(DialectRegistry &registry) const override {
    registry.insert<arith::ArithDialect, gpu::GPUDialect, LLVM::LLVMDialect,
                    memref::MemRefDialect, NVVM::NVVMDialect, scf::SCFDialect,
                    FADialect>();
  }

  void runOnOperation() override {
    getOperation().walk([&](gpu::GPUFuncOp func) {
      auto spec = func->getAttrOfType<DictionaryAttr>(kStagingAttr);
      if (!spec)
        return;
      func->removeAttr(kStagingAttr);
      if (failed(build(func, spec)))
        signalPassFailure();
    });
  }

  LogicalResult build(gpu::GPUFuncOp func, DictionaryAttr spec) {
    auto field = [&](StringRef name) -> std::optional<int64_t> {
      if (auto value = spec.getAs<IntegerAttr>(name))
        return value.getInt();
      return std::nullopt;
    };
    std::optional<int64_t> panels = field("panels"), rows = field("rows"),
                           offset = field("offset"), first = field("first_barrier");
    if (!panels || !rows || !offset || !first || *panels < 1 ||
        *rows % kRowsPerWarpgroup || *offset % 1024)
      return func.emitError(kStagingAttr)
             << " needs panels, rows (a multiple of 64), offset (of 1024) and "
                "first_barrier";
    auto index = [&](unsigned i) {
      return func.getArgument(i).getType().isIndex();
    };
    if (func.getNumArguments() != 4 ||
        !isa<LLVM::LLVMPointerType>(func.getArgument(0).getType()) || !index(1) ||
        !index(2) || !index(3))
      return func.emitError("expects (tensor map: !llvm.ptr, query start, head, "
                            "batch: index)");
    SmallVector<Operation *> stages, returns;
    func.walk([&](Operation *op) {
      if (op->removeAttr(kStageAttr))
        stages.push_back(op);
      if (isa<gpu::ReturnOp>(op))
        returns.push_back(op);
    });
    if (stages.empty())
      return success();
    auto tileType = dyn_cast<RankedTensorType>(stages.front()->getOperand(0).getType());
    if (!tileType || tileType.getElementTypeBitWidth() != 16)
      return stages.front()->emitError("stages a 16-bit tile");

    Location loc = func.getLoc();
    OpBuilder b(func.getContext());
    b.setInsertionPointToStart(&func.front());
    int64_t bytes = *offset + *panels * *rows * kPanelRowBytes;
    std::optional<int64_t> readBarrier = field("read_barrier");
    if (readBarrier)
      bytes = std::max(bytes, *readBarrier + 8);
    Value smem = sharedMemoryBase(b, func->getParentOfType<gpu::GPUModuleOp>(), loc,
                                  bytes);
    auto workgroup =
        gpu::AddressSpaceAttr::get(b.getContext(), gpu::AddressSpace::Workgroup);
    OutputStaging::Layout layout;
    layout.buffer = memref::ViewOp::create(
        b, loc,
        MemRefType::get({*panels, *rows, kPanelElements}, tileType.getElementType(),
                        nullptr, workgroup),
        smem, arith::ConstantIndexOp::create(b, loc, *offset), ValueRange{});
    layout.base = sharedWindowAddress(b, loc, smem);
    layout.offset = *offset;
    layout.panels = *panels;
    layout.rows = *rows;
    layout.firstBarrier = *first;
    layout.tensorMap = func.getArgument(0);
    layout.readBarrier = readBarrier;
    OutputStaging staging(layout);

    GridCoords grid;
    grid.queryStart = func.getArgument(1);
    grid.head = func.getArgument(2);
    grid.batch = func.getArgument(3);
    for (Operation *op : stages) {
      b.setInsertionPoint(op);
      staging.stage(b, loc, op->getOperand(0), grid);
      op->erase();
    }
    for (Operation *op : returns) {
      b.setInsertionPoint(op);
      staging.drain(b, loc);
    }
    return success();
  }
};

} // namespace

namespace mlir {
namespace fa {
namespace test {
void registerTestOutputStagingPass() { PassRegistration<TestOutputStagingPass>(); }
} // namespace test
} // namespace fa
} // namespace mlir
