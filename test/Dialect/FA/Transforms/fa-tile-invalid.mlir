// Pass options outside the rule of #fa.tile are refused before anything is
// tiled (they used to reach the recorded #fa.tile, which then failed to
// parse back).
// RUN: not fa-opt %s --fa-tile="block-m=0" 2>&1 | FileCheck %s --check-prefix=ZERO
// RUN: not fa-opt %s --fa-tile="block-n=-5" 2>&1 | FileCheck %s --check-prefix=NEG
// RUN: not fa-opt %s --fa-tile="block-m=40" 2>&1 | FileCheck %s --check-prefix=NPOT
// RUN: not fa-opt %s --fa-tile="block-m=9223372036854775807" 2>&1 | FileCheck %s --check-prefix=HUGE
// RUN: not fa-opt %s --fa-tile="block-n=4611686018427387904" 2>&1 | FileCheck %s --check-prefix=HUGEPOT
// RUN: not fa-opt %s --fa-recompute-backward="block-m=3" 2>&1 | FileCheck %s --check-prefix=BWD
// ZERO: error: fa-tile: block-m must be a power of two or a multiple of 16 in [1, 2^40], but is 0
// NEG: error: fa-tile: block-n must be a power of two or a multiple of 16 in [1, 2^40], but is -5
// NPOT: error: fa-tile: block-m must be a power of two or a multiple of 16 in [1, 2^40], but is 40
// HUGE: error: fa-tile: block-m must be a power of two or a multiple of 16 in [1, 2^40], but is 9223372036854775807
// HUGEPOT: error: fa-tile: block-n must be a power of two or a multiple of 16 in [1, 2^40], but is 4611686018427387904
// BWD: error: fa-recompute-backward: block-m must be a power of two or a multiple of 16 in [1, 2^40], but is 3

func.func @attention(%q: tensor<1x1x3x16xf16>, %k: tensor<1x1x5x16xf16>, %v: tensor<1x1x5x16xf16>) -> tensor<1x1x3x16xf16> {
  %o = fa.attention %q, %k, %v : (tensor<1x1x3x16xf16>, tensor<1x1x5x16xf16>, tensor<1x1x5x16xf16>) -> tensor<1x1x3x16xf16>
  return %o : tensor<1x1x3x16xf16>
}
