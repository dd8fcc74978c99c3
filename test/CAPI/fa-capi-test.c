/*===- fa-capi-test.c - fa-mlir's C API, from C ---------------------------===//
 *
 * Part of fa-mlir. Run by fa-capi.test (FileCheck). Each step prints what it
 * found; a step that fails prints FAIL and the program exits 1.
 *
 *   1. the fa dialect's handle loads the dialect into a bare context;
 *   2. the fa passes, registered, parse in a pipeline and run on a module;
 *   3. a spec compiles to PTX and a manifest in memory (forward and
 *      backward), and bad specs and chips are refused with a reason;
 *   4. null arguments are refused (status 2, one line) or, for
 *      faCompiledKernelDestroy, ignored: never a crash.
 *
 *===----------------------------------------------------------------------===*/

#include "fa-c/Compiler.h"
#include "fa-c/Dialects.h"
#include "fa-c/Passes.h"

#include "mlir-c/IR.h"
#include "mlir-c/Pass.h"

#include <stdio.h>
#include <string.h>

static int failures = 0;

static void check(int ok, const char *what) {
  printf("%s: %s\n", ok ? "ok" : "FAIL", what);
  if (!ok)
    ++failures;
}

static void printToStdout(MlirStringRef text, void *userData) {
  (void)userData;
  fwrite(text.data, 1, text.length, stdout);
}

/* Collects a message into a fixed buffer (userData). */
static void collect(MlirStringRef text, void *userData) {
  char *buffer = (char *)userData;
  size_t used = strlen(buffer), room = 511 - used;
  size_t n = text.length < room ? text.length : room;
  memcpy(buffer + used, text.data, n);
  buffer[used + n] = '\0';
}

static void dialectHandle(void) {
  MlirContext context = mlirContextCreate();
  MlirDialectHandle fa = mlirGetDialectHandle__fa__();
  MlirStringRef name = mlirDialectHandleGetNamespace(fa);
  printf("dialect namespace: %.*s\n", (int)name.length, name.data);
  MlirDialect dialect = mlirDialectHandleLoadDialect(fa, context);
  check(!mlirDialectIsNull(dialect), "the handle loads the fa dialect");
  mlirContextDestroy(context);
}

static const char *kModule =
    "func.func @attention(%q: tensor<1x2x80x64xbf16>, %k: tensor<1x2x96x64xbf16>,\n"
    "                     %v: tensor<1x2x96x64xbf16>)\n"
    "    -> (tensor<1x2x80x64xbf16>, tensor<1x2x80xf32>) {\n"
    "  %o, %lse = fa.attention %q, %k, %v {mask = #fa.mask<causal>,\n"
    "      tile = #fa.tile<block_m = 64, block_n = 64, stages = 2, warps = 4>}\n"
    "      : (tensor<1x2x80x64xbf16>, tensor<1x2x96x64xbf16>, tensor<1x2x96x64xbf16>)\n"
    "      -> (tensor<1x2x80x64xbf16>, tensor<1x2x80xf32>)\n"
    "  return %o, %lse : tensor<1x2x80x64xbf16>, tensor<1x2x80xf32>\n"
    "}\n";

static void passes(MlirContext context) {
  mlirRegisterFAPasses();
  MlirModule module =
      mlirModuleCreateParse(context, mlirStringRefCreateFromCString(kModule));
  check(!mlirModuleIsNull(module), "the module with fa.attention parses");
  if (mlirModuleIsNull(module))
    return;
  MlirPassManager pm = mlirPassManagerCreate(context);
  MlirOpPassManager opm = mlirPassManagerGetAsOpPassManager(pm);
  MlirLogicalResult parsed = mlirParsePassPipeline(
      opm,
      mlirStringRefCreateFromCString(
          "builtin.module(func.func(fa-tile,fa-fuse-online-softmax))"),
      printToStdout, NULL);
  check(mlirLogicalResultIsSuccess(parsed), "the fa passes parse in a pipeline");
  MlirLogicalResult ran =
      mlirPassManagerRunOnOp(pm, mlirModuleGetOperation(module));
  check(mlirLogicalResultIsSuccess(ran), "the pipeline runs");
  printf("after fa-tile, fa-fuse-online-softmax:\n");
  mlirOperationPrint(mlirModuleGetOperation(module), printToStdout, NULL);
  printf("\n");
  mlirPassManagerDestroy(pm);
  mlirModuleDestroy(module);
}

/// Compiles `spec` (through faCompileKernelWithBudget where `budgetKB` is
/// not 0) and prints the status, or the error, the kernel and its tile.
static void compileWithin(MlirContext context, const char *spec,
                          const char *chip, bool backward, bool deterministic,
                          int64_t budgetKB) {
  faCompiledKernel kernel;
  char error[512] = "";
  MlirStringRef specRef = mlirStringRefCreateFromCString(spec);
  MlirStringRef chipRef = mlirStringRefCreateFromCString(chip);
  faCompileStatus status =
      budgetKB ? faCompileKernelWithBudget(context, specRef, chipRef, backward,
                                           deterministic, budgetKB, &kernel,
                                           collect, error)
               : faCompileKernel(context, specRef, chipRef, backward,
                                 deterministic, &kernel, collect, error);
  printf("compile %s on %s%s", spec, chip,
         backward ? (deterministic ? " (backward, deterministic)" : " (backward)")
                  : "");
  if (budgetKB)
    printf(" within %lld KB", (long long)budgetKB);
  printf(": status %d", (int)status);
  if (status != FA_COMPILE_OK) {
    printf(", error: %s\n", error);
    check(kernel.ptx == NULL, "nothing returned with an error");
    return;
  }
  const char *tile = strstr(kernel.manifest, "\"tile\"");
  printf(", kernel %s, %zu bytes of PTX, %.*s\n", kernel.name,
         strlen(kernel.ptx), tile ? (int)strcspn(tile, "}") + 1 : 0,
         tile ? tile : "");
  check(strstr(kernel.ptx, ".entry") != NULL, "the PTX has an entry");
  check(strstr(kernel.manifest, kernel.name) != NULL,
        "the manifest names the kernel");
  faCompiledKernelDestroy(&kernel);
  check(kernel.ptx == NULL, "destroy zeroes the kernel");
}

static void compile(MlirContext context, const char *spec, const char *chip,
                    bool backward, bool deterministic) {
  compileWithin(context, spec, chip, backward, deterministic, 0);
}

/* Prints one null-argument case's status and message. */
static void report(const char *what, faCompileStatus status, const char *error) {
  printf("%s: status %d, error: %s\n", what, (int)status, error);
  check(status == FA_COMPILE_BAD_INPUT, "a null argument is bad input");
}

static void nulls(MlirContext context) {
  MlirStringRef spec = mlirStringRefCreateFromCString("d=64");
  MlirStringRef chip = mlirStringRefCreateFromCString("sm_80");
  faCompiledKernel kernel = {NULL, NULL, NULL};
  char error[512] = "";
  report("null out", faCompileKernel(context, spec, chip, false, false, NULL,
                                collect, error),
         error);
  error[0] = '\0';
  MlirContext none = {NULL};
  report("null context",
         faCompileKernel(none, spec, chip, false, false, &kernel, collect, error),
         error);
  check(kernel.ptx == NULL, "nothing returned without a context");
  error[0] = '\0';
  MlirStringRef nullSpec = {NULL, 4};
  report("null spec", faCompileKernelWithBudget(context, nullSpec, chip, false,
                                           false, 0, &kernel, collect, error),
         error);
  error[0] = '\0';
  MlirStringRef nullChip = {NULL, 5};
  report("null chip", faCompileKernel(context, spec, nullChip, false, false,
                                 &kernel, collect, error),
         error);
  /* Without a callback the status alone says it. */
  check(faCompileKernel(context, spec, chip, false, false, NULL, NULL, NULL) ==
            FA_COMPILE_BAD_INPUT,
        "a null out without onError is bad input");
  /* A context not made by faCreateCompilerContext: without the fa dialect
   * (this crashed), then with it alone. */
  MlirContext bare = mlirContextCreate();
  error[0] = '\0';
  report("bare context", faCompileKernel(bare, spec, chip, false, false,
                                         &kernel, collect, error),
         error);
  mlirDialectHandleLoadDialect(mlirGetDialectHandle__fa__(), bare);
  error[0] = '\0';
  report("context with fa alone", faCompileKernel(bare, spec, chip, false,
                                                  false, &kernel, collect,
                                                  error),
         error);
  mlirContextDestroy(bare);
  faCompiledKernelDestroy(NULL);
  check(1, "faCompiledKernelDestroy(NULL) is a no-op");
  faCompiledKernelDestroy(&kernel);
  check(kernel.name == NULL, "destroying a zeroed kernel is a no-op");
}

int main(void) {
  dialectHandle();
  MlirContext context = faCreateCompilerContext();
  passes(context);
  MlirStringRef revision = faGeneratorRevision();
  printf("generator: %.*s\n", (int)revision.length, revision.data);
  compile(context, "d=64,dtype=bf16,mask=causal", "sm_80", false, false);
  compile(context, "d=128,dtype=f16", "sm_90a", false, false);
  compile(context, "d=64,dtype=bf16", "sm_80", true, false);
  compile(context, "d=64,dtype=bf16", "sm_90a", true, true);
  compile(context, "d=0,dtype=bf16", "sm_80", false, false);
  compile(context, "d=64,dtype=bf16", "sm_70", false, false);
  compile(context, "d=192,dtype=bf16", "sm_80", true, false);
  compile(context, "d=64,dtype=bf16", "sm_80", false, true);
  // A device's budget: an H100's 227 KB takes FA2's 64 x 64 for sm_80's
  // D256 backward (an A100's default, 32 x 64); 99 KB (an RTX 3090) holds
  // no D256 forward; 228 KB is past every chip.
  compile(context, "d=256,dtype=bf16", "sm_80", true, false);
  compileWithin(context, "d=256,dtype=bf16", "sm_80", true, false, 227);
  compileWithin(context, "d=256,dtype=bf16", "sm_80", false, false, 99);
  compileWithin(context, "d=64,dtype=bf16", "sm_80", false, false, 228);
  nulls(context);
  mlirContextDestroy(context);
  printf("failures: %d\n", failures);
  return failures ? 1 : 0;
}
