//===- Passes.cpp - fa-mlir's passes in the C API -------------------------===//
//
// Part of fa-mlir.
//
//===----------------------------------------------------------------------===//

#include "fa-c/Passes.h"

#include "fa/Conversion/Passes.h"
#include "fa/Dialect/FA/Transforms/Passes.h"

void mlirRegisterFAPasses(void) {
  mlir::fa::registerFAPasses();
  mlir::fa::registerFAConversionPassesAndPipelines();
}
