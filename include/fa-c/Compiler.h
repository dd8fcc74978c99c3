//===- fa-c/Compiler.h - fa-mlir's kernel compiler in C ------------*- C -*-===//
//
// Part of fa-mlir.
//
// What fa-compile does, from C: a spec (fa-run's text, "d=128,dtype=bf16,
// mask=causal") and a chip to PTX and the manifest the runtime launches
// from, in memory. Errors come back as a status and a message through an
// MlirStringCallback, as MLIR's C API passes strings.
//
//===----------------------------------------------------------------------===//

#ifndef FA_C_COMPILER_H
#define FA_C_COMPILER_H

#include "mlir-c/IR.h"
#include "mlir-c/Support.h"

#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// faCompileKernel's result.
typedef enum faCompileStatus {
  FA_COMPILE_OK = 0,
  FA_COMPILE_FAILED = 1,    ///< the compiler failed (a bug: report it)
  FA_COMPILE_BAD_INPUT = 2, ///< a spec or chip that cannot be built
} faCompileStatus;

/// A compiled kernel: its name (fa_fwd_sm80_bf16_d128_causal), the PTX and
/// the manifest (JSON), each NUL-terminated and owned by the struct.
typedef struct faCompiledKernel {
  char *name;
  char *ptx;
  char *manifest;
} faCompiledKernel;

/// A context with what the compiler needs: the fa dialect, every upstream
/// dialect and extension, and the LLVM IR translations. Destroy it with
/// mlirContextDestroy.
MLIR_CAPI_EXPORTED MlirContext faCreateCompilerContext(void);

/// Compiles the kernel of `spec` for `chip` ("sm_80", "sm_90a"): the
/// forward, or with `backward` the backward's three kernels in one module
/// (`deterministic`: the `_det` kernel whose dQ order can be fixed at
/// launch), on the chip's tuned tile unless the spec gives block_m and
/// block_n. On FA_COMPILE_OK `out` holds the kernel (release it with
/// faCompiledKernelDestroy); otherwise `out` is zeroed and `onError`, if
/// not null, receives one line saying why.
///
/// `context` comes from faCreateCompilerContext: one without the fa
/// dialect loaded is FA_COMPILE_BAD_INPUT (a context with it but without
/// the other dialects fails to parse the kernel's module, also
/// FA_COMPILE_BAD_INPUT). Null arguments: a null `context` or `out`, or a
/// `spec` or `chip` whose data is null with a nonzero length, is
/// FA_COMPILE_BAD_INPUT with one line (nothing is written through a null
/// `out`); a null string of length 0 is the empty string; `onError` may be
/// null.
MLIR_CAPI_EXPORTED faCompileStatus
faCompileKernel(MlirContext context, MlirStringRef spec, MlirStringRef chip,
                bool backward, bool deterministic, faCompiledKernel *out,
                MlirStringCallback onError, void *userData);

/// faCompileKernel within a shared-memory budget: each block of the
/// kernel takes at most `sharedMemoryBudgetKB` KB (1 to 227; 0: the chip's
/// default, an A100's 163 KB on sm_80). Pass the opt-in maximum of the
/// device that will run the kernel (fa_device_shared_memory_per_block() /
/// 1024 from the runtime) to get the tiles that device holds: an H100 runs
/// sm_80's D256 backward on FA2's 64 x 64, an RTX 3090 (99 KB) refuses
/// what an A100 holds. The manifest records the budget.
MLIR_CAPI_EXPORTED faCompileStatus faCompileKernelWithBudget(
    MlirContext context, MlirStringRef spec, MlirStringRef chip, bool backward,
    bool deterministic, int64_t sharedMemoryBudgetKB, faCompiledKernel *out,
    MlirStringCallback onError, void *userData);

/// Frees what faCompileKernel put in `kernel` and zeroes it; a null
/// `kernel`, or one already destroyed or zeroed by a failed compile, is a
/// no-op.
MLIR_CAPI_EXPORTED void faCompiledKernelDestroy(faCompiledKernel *kernel);

/// The generator's revision (the hash every manifest records).
MLIR_CAPI_EXPORTED MlirStringRef faGeneratorRevision(void);

#ifdef __cplusplus
}
#endif

#endif // FA_C_COMPILER_H
