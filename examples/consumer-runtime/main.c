/* A C program on fa-mlir's runtime C API, built against the installed
 * package: a manifest that does not exist is refused with a reason (no GPU
 * needed). Exit 0 when it is. */
#include "fa/runtime/fa_runtime.h"

#include <stdio.h>

int main(void) {
  fa_kernel *kernel = fa_kernel_load("/nonexistent/fa_fwd_missing.json");
  if (kernel) {
    fa_kernel_free(kernel);
    fprintf(stderr, "consumer-runtime: a missing manifest loaded\n");
    return 1;
  }
  const char *error = fa_last_error();
  if (!error || !*error) {
    fprintf(stderr, "consumer-runtime: no reason given\n");
    return 1;
  }
  printf("consumer-runtime: refused as expected: %s\n", error);
  return 0;
}
