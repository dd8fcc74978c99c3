// RUN: not fa-opt %s --fa-io-report -o /dev/null 2>&1 | FileCheck %s
// The verifier bounds each tensor, not the products fa-io-report forms:
// counts past int64 are one diagnostic, not a wrapped (negative) number.
// CHECK: error: 'fa.attention' op fa-io-report: the FLOP or byte counts of this problem (B=1 Hq=256 M=1073741824 N=1073741824 D=64 Dv=64, block_m=64 block_n=64) overflow int64


// Each tensor is within 2^45 elements, but B·Hq·M·N·(D + Dv) is 2^76.
func.func @huge(%q: tensor<1x256x1073741824x64xbf16>, %k: tensor<1x256x1073741824x64xbf16>, %v: tensor<1x256x1073741824x64xbf16>)
    -> tensor<1x256x1073741824x64xbf16> {
  %o = fa.attention %q, %k, %v
      : (tensor<1x256x1073741824x64xbf16>, tensor<1x256x1073741824x64xbf16>, tensor<1x256x1073741824x64xbf16>) -> tensor<1x256x1073741824x64xbf16>
  return %o : tensor<1x256x1073741824x64xbf16>
}
