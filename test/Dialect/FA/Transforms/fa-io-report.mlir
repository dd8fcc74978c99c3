// RUN: fa-opt %s --fa-io-report="block-m=64 block-n=64" -o /dev/null | FileCheck %s
// RUN: fa-opt %s --fa-io-report="sram-bytes=16384" -o /dev/null | FileCheck %s --check-prefix=SRAM16K
// RUN: fa-opt %s --fa-io-report="sram-bytes=32768" -o /dev/null | FileCheck %s --check-prefix=SRAM32K

// N = M = 1024, d = 64, bf16 (e = 2 bytes), one head. By hand:
//   FLOPs = 2·M·N·(D + Dv)                       = 2·1024·1024·128 = 268435456
//   Q, K, V = e·(M·D + N·(D + Dv))                = 393216 B;  O = e·M·Dv = 131072 B
// Standard attention writes S and P and reads them back: Θ(N²) bytes.
//   read  = 393216 + 2·e·N²  = 393216 + 4194304  = 4587520
//   write = 2·e·N² + 131072                       = 4325376
// Tiled (FA2 order, Q block outer): Q once, K and V once per Q block, never S/P.
//   read  = e·M·D + e·(M/64)·N·(D + Dv) = 131072 + 4194304 = 4325376
//   write = O + 4·M (f32 LSE)            = 131072 + 4096    = 135168
// CHECK: fa-io-report: B=1 Hq=1 Hkv=1 M=1024 N=1024 D=64 Dv=64 element-bytes=2
// CHECK: flops: 268435456
// CHECK: standard: read 4587520 B, write 4325376 B, total 8912896 B, intensity 30.12 FLOP/B
// CHECK: tiled block_m=64 block_n=64: read 4325376 B, write 135168 B, total 4460544 B, intensity 60.18 FLOP/B
// on chip: e·(64·64 + 64·128) + 4·(64·64 + 64·64 + 2·64) = 24576 + 33280
// CHECK: on-chip bytes per block: 57856 (fits)

// With on-chip memory of S elements, FlashAttention picks B_c = ceil(S/4d),
// B_r = min(B_c, d): K/V traffic e·N²·(D+Dv)/B_r = Θ(N²d²/S). Doubling S
// (8192 -> 16384 elements) halves it (8388608 -> 4194304 B).
// SRAM16K: tiled from sram block_m=32 block_n=32: read 8519680 B
// SRAM32K: tiled from sram block_m=64 block_n=64: read 4325376 B
func.func @attention(%q: tensor<1x1x1024x64xbf16>, %k: tensor<1x1x1024x64xbf16>, %v: tensor<1x1x1024x64xbf16>)
    -> tensor<1x1x1024x64xbf16> {
  %o = fa.attention %q, %k, %v
      : (tensor<1x1x1024x64xbf16>, tensor<1x1x1024x64xbf16>, tensor<1x1x1024x64xbf16>) -> tensor<1x1x1024x64xbf16>
  return %o : tensor<1x1x1024x64xbf16>
}
