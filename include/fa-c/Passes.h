//===- fa-c/Passes.h - fa-mlir's passes in MLIR's C API ------------*- C -*-===//
//
// Part of fa-mlir.
//
//===----------------------------------------------------------------------===//

#ifndef FA_C_PASSES_H
#define FA_C_PASSES_H

#include "mlir-c/Pass.h"

#ifdef __cplusplus
extern "C" {
#endif

/// Registers every fa pass (fa-tile, fa-fuse-online-softmax,
/// fa-recompute-backward, ..., convert-fa-to-gpu) and pipeline
/// (fa-compile-cpu, fa-to-cpu, fa-to-ptx) with MLIR's pass registry, so that
/// mlirParsePassPipeline and mlirOpPassManagerAddPipeline can name them.
/// Idempotent.
MLIR_CAPI_EXPORTED void mlirRegisterFAPasses(void);

#ifdef __cplusplus
}
#endif

#endif // FA_C_PASSES_H
