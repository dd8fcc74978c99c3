// RUN: fa-opt %s --fa-tile="block-m=32 block-n=32" --canonicalize --cse | FileCheck %s --check-prefix=TILE
// RUN: fa-opt %s --fa-tile="block-m=32 block-n=32" --fa-fuse-online-softmax --canonicalize --cse | FileCheck %s --check-prefix=FUSED

// f8E4M3FN attention: Q, K, V are stored values with per-tensor descales.
// fa-tile puts Q's and K's (one product, computed once) on S through
// fa.qk_scores' descale, rounds the normalised P to e4m3 for the e4m3
// P·V, and scales O by V's descale after the sweep.
// TILE-LABEL: func.func @fp8
// TILE: %[[DQK:.+]] = arith.mulf %arg3, %arg4 : f32
// TILE: fa.qk_scores %{{.*}}, %{{.*}} descale(%[[DQK]]) {scale = 1.250000e-01 : f32} : tensor<32x64xf8E4M3FN>, tensor<32x64xf8E4M3FN> -> tensor<32x32xf32>
// TILE: %[[P:.+]] = fa.scale_rows
// TILE: %[[P8:.+]] = arith.truncf %[[P]] : tensor<32x32xf32> to tensor<32x32xf8E4M3FN>
// TILE: fa.matmul %[[P8]], %{{.*}}, %{{.*}} : tensor<32x32xf8E4M3FN>, tensor<32x64xf8E4M3FN>, tensor<32x64xf32>
// TILE: %[[DV:.+]] = tensor.splat %arg5 : tensor<32xf32>
// TILE: fa.scale_rows %{{.*}}, %[[DV]]
// TILE: arith.truncf %{{.*}} : tensor<32x64xf32> to tensor<32x64xbf16>

// Fused: one sweep; the unnormalised P (exp2(S - m), in [0, 1]) is what
// is rounded to e4m3; O = acc / l, then V's descale.
// FUSED-LABEL: func.func @fp8
// FUSED: scf.for
// FUSED: fa.qk_scores %{{.*}}, %{{.*}} descale(%{{.*}}) {log2_domain, scale = 1.250000e-01 : f32}
// FUSED: %[[P:.+]] = fa.exp_shifted %{{.*}}, %{{.*}} {base2} : tensor<32x32xf32>, tensor<32xf32>
// FUSED: %[[P8:.+]] = arith.truncf %[[P]] : tensor<32x32xf32> to tensor<32x32xf8E4M3FN>
// FUSED: fa.matmul %[[P8]], %{{.*}}, %{{.*}} : tensor<32x32xf8E4M3FN>, tensor<32x64xf8E4M3FN>, tensor<32x64xf32>
// FUSED: scf.yield
// FUSED: %[[O:.+]] = fa.scale_rows
// FUSED: %[[DV:.+]] = tensor.splat %arg5 : tensor<32xf32>
// FUSED: fa.scale_rows %[[O]], %[[DV]]
func.func @fp8(%q: tensor<1x2x64x64xf8E4M3FN>, %k: tensor<1x2x96x64xf8E4M3FN>, %v: tensor<1x2x96x64xf8E4M3FN>,
               %dq: f32, %dk: f32, %dv: f32) -> (tensor<1x2x64x64xbf16>, tensor<1x2x64xf32>) {
  %o, %lse = fa.attention %q, %k, %v descale(%dq, %dk, %dv)
      : (tensor<1x2x64x64xf8E4M3FN>, tensor<1x2x96x64xf8E4M3FN>, tensor<1x2x96x64xf8E4M3FN>, f32, f32, f32)
      -> (tensor<1x2x64x64xbf16>, tensor<1x2x64xf32>)
  return %o, %lse : tensor<1x2x64x64xbf16>, tensor<1x2x64xf32>
}
