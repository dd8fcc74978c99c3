// RUN: not fa-opt %s --fa-tile 2>&1 | FileCheck %s
// RUN: not fa-opt %s --fa-io-report 2>&1 | FileCheck %s
// M = 0 used to pass the verifier, and fa-tile then divided by a 0-row block
// (SIGFPE). The verifier refuses it now, before any pass runs.
// CHECK: error: 'fa.attention' op M of query must be >= 1, but is 0
func.func @attention$zero_queries(%q: tensor<1x1x0x16xf16>, %k: tensor<1x1x5x16xf16>, %v: tensor<1x1x5x16xf16>) -> tensor<1x1x0x16xf16> {
  %o = fa.attention %q, %k, %v : (tensor<1x1x0x16xf16>, tensor<1x1x5x16xf16>, tensor<1x1x5x16xf16>) -> tensor<1x1x0x16xf16>
  return %o : tensor<1x1x0x16xf16>
}
