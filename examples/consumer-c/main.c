/*===- main.c - fa-mlir's C API from an installed package ------------------===//
 *
 * Part of fa-mlir. Loads the fa dialect into an MLIR context, parses a module
 * holding fa.attention, runs fa-tile through MLIR's pass manager, and
 * compiles a spec to PTX; a bad spec must be refused with its reason.
 * Prints each step; exits 1 on the first that fails.
 *
 *===----------------------------------------------------------------------===*/

#include "fa-c/Compiler.h"
#include "fa-c/Dialects.h"
#include "fa-c/Passes.h"

#include "mlir-c/IR.h"
#include "mlir-c/Pass.h"

#include <stdio.h>
#include <string.h>

static void ignore(MlirStringRef text, void *userData) {
  (void)text;
  (void)userData;
}

static void keepFirstLine(MlirStringRef text, void *userData) {
  char *buffer = (char *)userData;
  size_t used = strlen(buffer), room = 255 - used;
  size_t n = text.length < room ? text.length : room;
  memcpy(buffer + used, text.data, n);
  buffer[used + n] = '\0';
}

static const char *kModule =
    "func.func @attention(%q: tensor<1x2x80x64xbf16>, %k: tensor<1x2x96x64xbf16>,\n"
    "                     %v: tensor<1x2x96x64xbf16>) -> tensor<1x2x80x64xbf16> {\n"
    "  %o = fa.attention %q, %k, %v {mask = #fa.mask<causal>}\n"
    "      : (tensor<1x2x80x64xbf16>, tensor<1x2x96x64xbf16>, tensor<1x2x96x64xbf16>)\n"
    "      -> tensor<1x2x80x64xbf16>\n"
    "  return %o : tensor<1x2x80x64xbf16>\n"
    "}\n";

#define CHECK(ok, what)                                                        \
  do {                                                                         \
    printf("%s: %s\n", (ok) ? "ok" : "FAIL", what);                            \
    if (!(ok))                                                                 \
      return 1;                                                                \
  } while (0)

int main(void) {
  MlirContext context = faCreateCompilerContext();
  MlirDialect fa = mlirDialectHandleLoadDialect(mlirGetDialectHandle__fa__(), context);
  CHECK(!mlirDialectIsNull(fa), "the fa dialect loads");

  MlirModule module = mlirModuleCreateParse(context, mlirStringRefCreateFromCString(kModule));
  CHECK(!mlirModuleIsNull(module), "a module with fa.attention parses");
  mlirRegisterFAPasses();
  MlirPassManager pm = mlirPassManagerCreate(context);
  MlirLogicalResult parsed = mlirParsePassPipeline(
      mlirPassManagerGetAsOpPassManager(pm),
      mlirStringRefCreateFromCString("builtin.module(func.func(fa-tile))"), ignore, NULL);
  CHECK(mlirLogicalResultIsSuccess(parsed), "fa-tile parses in a pipeline");
  CHECK(mlirLogicalResultIsSuccess(mlirPassManagerRunOnOp(pm, mlirModuleGetOperation(module))),
        "fa-tile runs");
  mlirPassManagerDestroy(pm);
  mlirModuleDestroy(module);

  faCompiledKernel kernel;
  char error[256] = "";
  faCompileStatus status = faCompileKernel(
      context, mlirStringRefCreateFromCString("d=64,dtype=bf16,mask=causal"),
      mlirStringRefCreateFromCString("sm_80"), false, false, &kernel, keepFirstLine, error);
  CHECK(status == FA_COMPILE_OK && strstr(kernel.ptx, ".entry") != NULL,
        "a spec compiles to PTX");
  printf("kernel %s, %zu bytes of PTX\n", kernel.name, strlen(kernel.ptx));
  faCompiledKernelDestroy(&kernel);

  status = faCompileKernel(context, mlirStringRefCreateFromCString("d=63"),
                           mlirStringRefCreateFromCString("sm_80"), false, false,
                           &kernel, keepFirstLine, error);
  CHECK(status == FA_COMPILE_BAD_INPUT && error[0] != '\0', "a bad spec is refused");
  printf("refused: %s\n", error);
  MlirStringRef revision = faGeneratorRevision();
  printf("generator %.*s\n", (int)revision.length, revision.data);
  mlirContextDestroy(context);
  return 0;
}
