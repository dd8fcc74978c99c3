//===- FAAttrs.h - fa dialect attributes ------------------------*- C++ -*-===//
//
// Part of fa-mlir.
//
//===----------------------------------------------------------------------===//

#ifndef FA_DIALECT_FA_IR_FAATTRS_H
#define FA_DIALECT_FA_IR_FAATTRS_H

#include "mlir/IR/Attributes.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectImplementation.h"

#include "fa/Dialect/FA/IR/FAEnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "fa/Dialect/FA/IR/FAAttrs.h.inc"

#endif // FA_DIALECT_FA_IR_FAATTRS_H
