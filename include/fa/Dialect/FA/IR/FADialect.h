//===- FADialect.h - The fa dialect -----------------------------*- C++ -*-===//
//
// Part of fa-mlir.
//
//===----------------------------------------------------------------------===//

#ifndef FA_DIALECT_FA_IR_FADIALECT_H
#define FA_DIALECT_FA_IR_FADIALECT_H

#include "mlir/IR/Dialect.h"

#include "fa/Dialect/FA/IR/FAAttrs.h"

#include "fa/Dialect/FA/IR/FAOpsDialect.h.inc"

#endif // FA_DIALECT_FA_IR_FADIALECT_H
