// RUN: fa-opt %s --fa-tile --fa-fuse-online-softmax --fa-gpu-distribute="chip=sm_90a" --canonicalize --cse | FileCheck %s

// e4m3 at Dv 256 defers the scores' run-time descale d with the scale c
// (one FFMA a score, c·d computed once), as at Dv 128: with 240 registers
// for each consumer the register it keeps live costs nothing
// (docs/performance.md has the measurements).
// CHECK-LABEL: gpu.func @fp8_d256
// CHECK: fa.qk_scores
// CHECK-SAME: -> tensor<128x128xf32, #fa.fragment<warps = 8, mTiles = 1, deferredScale = 0.0901684388 : f32, deferredDescale = true>>
func.func @fp8_d256(%q: tensor<1x2x300x256xf8E4M3FN>, %k: tensor<1x2x500x256xf8E4M3FN>, %v: tensor<1x2x500x256xf8E4M3FN>,
                    %dq: f32, %dk: f32, %dv: f32) -> (tensor<1x2x300x256xbf16>, tensor<1x2x300xf32>) {
  %o, %lse = fa.attention %q, %k, %v descale(%dq, %dk, %dv) {mask = #fa.mask<causal>,
      tile = #fa.tile<block_m = 128, block_n = 128, stages = 2, warps = 8>}
      : (tensor<1x2x300x256xf8E4M3FN>, tensor<1x2x500x256xf8E4M3FN>, tensor<1x2x500x256xf8E4M3FN>, f32, f32, f32)
      -> (tensor<1x2x300x256xbf16>, tensor<1x2x300xf32>)
  return %o, %lse : tensor<1x2x300x256xbf16>, tensor<1x2x300xf32>
}
