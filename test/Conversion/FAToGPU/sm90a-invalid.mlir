// Configurations the sm_90a strategy refuses, reported by fa-gpu-distribute
// with the chip's prefix on the function.
// RUN: fa-opt %s --split-input-file --verify-diagnostics --fa-tile --fa-fuse-online-softmax --fa-gpu-distribute="chip=sm_90a"

// One consumer warpgroup per 64 query rows, at most two.
// expected-error @+1 {{sm_90a: sm_90a block_m must be 64, 128 or 192 (64 query rows per consumer warpgroup, at most 3), got 256}}
func.func @block_m$too_large(%q: tensor<1x1x256x64xbf16>, %k: tensor<1x1x256x64xbf16>, %v: tensor<1x1x256x64xbf16>)
    -> tensor<1x1x256x64xbf16> {
  %o = fa.attention %q, %k, %v {tile = #fa.tile<block_m = 256, block_n = 64, stages = 2, warps = 16>}
      : (tensor<1x1x256x64xbf16>, tensor<1x1x256x64xbf16>, tensor<1x1x256x64xbf16>) -> tensor<1x1x256x64xbf16>
  return %o : tensor<1x1x256x64xbf16>
}

// -----

// fa-tile's default warps (4) do not match 128 rows on sm_90a.
// expected-error @+1 {{sm_90a: sm_90a kernels have one MMA warp per 16 query rows: warps must be block_m / 16 = 8, got 4}}
func.func @warps$default(%q: tensor<1x1x256x64xbf16>, %k: tensor<1x1x256x64xbf16>, %v: tensor<1x1x256x64xbf16>)
    -> tensor<1x1x256x64xbf16> {
  %o = fa.attention %q, %k, %v {tile = #fa.tile<block_m = 128, block_n = 64, stages = 2, warps = 4>}
      : (tensor<1x1x256x64xbf16>, tensor<1x1x256x64xbf16>, tensor<1x1x256x64xbf16>) -> tensor<1x1x256x64xbf16>
  return %o : tensor<1x1x256x64xbf16>
}

// -----

// D = 256 with 128-row K and V tiles in a 3-stage ring: Q 64 KB + K and V
// 3 x 64 KB each = 448 KB.
// expected-error @+1 {{sm_90a: the tile needs 458864 bytes of shared memory, more than the budget's 232448 bytes}}
func.func @shared_memory$too_much(%q: tensor<1x1x256x256xbf16>, %k: tensor<1x1x256x256xbf16>, %v: tensor<1x1x256x256xbf16>)
    -> tensor<1x1x256x256xbf16> {
  %o = fa.attention %q, %k, %v {tile = #fa.tile<block_m = 128, block_n = 128, stages = 3, warps = 8>}
      : (tensor<1x1x256x256xbf16>, tensor<1x1x256x256xbf16>, tensor<1x1x256x256xbf16>) -> tensor<1x1x256x256xbf16>
  return %o : tensor<1x1x256x256xbf16>
}
