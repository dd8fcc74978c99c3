//===- GridConstantParams.cpp - tensor maps as by-value parameters --------===//
//
// Part of fa-mlir.
//
//===----------------------------------------------------------------------===//

#include "fa/Conversion/FAToGPU/KernelSkeleton.h"
#include "fa/Conversion/Passes.h"

#include "fa/runtime/KernelAbi.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"

namespace mlir {
namespace fa {
#define GEN_PASS_DEF_FANVVMGRIDCONSTANTPARAMS
#include "fa/Conversion/Passes.h.inc"
} // namespace fa
} // namespace mlir

using namespace mlir;
using namespace mlir::fa;

namespace {
struct FANVVMGridConstantParams
    : public mlir::fa::impl::FANVVMGridConstantParamsBase<FANVVMGridConstantParams> {
  void runOnOperation() override {
    getOperation().walk([&](LLVM::LLVMFuncOp func) {
      auto positions =
          func->getAttrOfType<DenseI64ArrayAttr>(kGridConstantParamsAttrName);
      if (!positions)
        return;
      OpBuilder b(func);
      Type storage = LLVM::LLVMArrayType::get(
          b.getI8Type(), ::fa::abi::kTensorMapBytes);
      for (int64_t i : positions.asArrayRef()) {
        if (i < 0 || i >= func.getNumArguments() ||
            !isa<LLVM::LLVMPointerType>(func.getArgument(i).getType())) {
          func.emitError() << kGridConstantParamsAttrName << " names argument "
                           << i << ", which is not a pointer";
          return signalPassFailure();
        }
        func.setArgAttr(i, LLVM::LLVMDialect::getByValAttrName(),
                        TypeAttr::get(storage));
        func.setArgAttr(i, LLVM::LLVMDialect::getAlignAttrName(),
                        b.getI64IntegerAttr(::fa::abi::kTensorMapAlignment));
        func.setArgAttr(i, NVVM::NVVMDialect::getGridConstantAttrName(),
                        b.getUnitAttr());
      }
      func->removeAttr(kGridConstantParamsAttrName);
    });
  }
};
} // namespace
