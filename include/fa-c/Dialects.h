//===- fa-c/Dialects.h - the fa dialect in MLIR's C API ------------*- C -*-===//
//
// Part of fa-mlir.
//
// mlirGetDialectHandle__fa__(): register or load the fa dialect in a
// context (mlirDialectHandleRegisterDialect / ...LoadDialect), as every
// upstream dialect's C API does.
//
//===----------------------------------------------------------------------===//

#ifndef FA_C_DIALECTS_H
#define FA_C_DIALECTS_H

#include "mlir-c/IR.h"

#ifdef __cplusplus
extern "C" {
#endif

MLIR_DECLARE_CAPI_DIALECT_REGISTRATION(FA, fa);

#ifdef __cplusplus
}
#endif

#endif // FA_C_DIALECTS_H
