// RUN: fa-opt %s --fa-tile | FileCheck %s
// RUN: fa-opt %s --fa-tile | fa-opt | FileCheck %s
// A sequence shorter than the block shrinks the block to the sequence rounded
// up to a power of two (M = 3 -> 4 rows, N = 5 -> 8), so the #fa.tile the loop
// nest records is a valid one: it parses back (it used to say block_m = 3,
// which the attribute's verifier refuses).

// CHECK-LABEL: func.func @tile$short_sequence
// The last (only) Q block has 3 of 4 rows: slice what exists, pad.
// CHECK: tensor.pad
// CHECK: } : tensor<?x16xf16> to tensor<4x16xf16>
// CHECK: {fa.tile = #fa.tile<block_m = 4, block_n = 8, stages = 2, warps = 4>}
func.func @tile$short_sequence(%q: tensor<1x1x3x16xf16>, %k: tensor<1x1x5x16xf16>, %v: tensor<1x1x5x16xf16>) -> tensor<1x1x3x16xf16> {
  %o = fa.attention %q, %k, %v : (tensor<1x1x3x16xf16>, tensor<1x1x5x16xf16>, tensor<1x1x5x16xf16>) -> tensor<1x1x3x16xf16>
  return %o : tensor<1x1x3x16xf16>
}
