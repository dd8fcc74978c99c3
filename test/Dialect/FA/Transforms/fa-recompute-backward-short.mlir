// RUN: fa-opt %s --fa-recompute-backward | fa-opt | FileCheck %s
// A sequence shorter than the block: the block shrinks to it rounded up to
// a power of two, as fa-tile's does, so the nest's #fa.tile is one the
// parser takes back (3 keys used to print block_n = 3, 5 queries
// block_m = 5, neither a valid block).
// CHECK-LABEL: func.func @grad_short
// CHECK: tile = #fa.tile<block_m = 8, block_n = 4, stages = 2, warps = 4>
func.func @grad_short(%q: tensor<1x2x5x16xf16>, %k: tensor<1x1x3x16xf16>, %v: tensor<1x1x3x16xf16>,
                      %o: tensor<1x2x5x16xf16>, %do: tensor<1x2x5x16xf16>, %lse: tensor<1x2x5xf32>)
    -> (tensor<1x2x5x16xf16>, tensor<1x1x3x16xf16>, tensor<1x1x3x16xf16>) {
  %dq, %dk, %dv = fa.attention_grad %q, %k, %v, %o, %do, %lse
      : (tensor<1x2x5x16xf16>, tensor<1x1x3x16xf16>, tensor<1x1x3x16xf16>,
         tensor<1x2x5x16xf16>, tensor<1x2x5x16xf16>, tensor<1x2x5xf32>)
      -> (tensor<1x2x5x16xf16>, tensor<1x1x3x16xf16>, tensor<1x1x3x16xf16>)
  return %dq, %dk, %dv : tensor<1x2x5x16xf16>, tensor<1x1x3x16xf16>, tensor<1x1x3x16xf16>
}
