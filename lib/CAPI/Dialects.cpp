//===- Dialects.cpp - the fa dialect's C API handle -----------------------===//
//
// Part of fa-mlir.
//
//===----------------------------------------------------------------------===//

#include "fa-c/Dialects.h"

#include "fa/Dialect/FA/IR/FADialect.h"

#include "mlir/CAPI/Registration.h"

MLIR_DEFINE_CAPI_DIALECT_REGISTRATION(FA, fa, mlir::fa::FADialect)
