// RUN: fa-opt %s --fa-tile --fa-fuse-online-softmax --fa-gpu-distribute="chip=sm_80" --canonicalize --cse | FileCheck %s
// RUN: rm -rf %t && fa-compile --target=sm_80 -d 256 -o %t && FileCheck %s --check-prefix=TUNED < %t/fa_fwd_sm80_bf16_d256_none.json
// RUN: fa-compile --target=sm_80 -d 256 --dv 128 -o %t && FileCheck %s --check-prefix=TWOFIT < %t/fa_fwd_sm80_bf16_d256_dv128_none.json
// RUN: fa-compile --target=sm_80 -d 256 --block-m 64 --block-n 32 --name narrow -o %t && FileCheck %s --check-prefix=NARROW < %t/narrow.json

// The sm_80 forward with one K/V stage (FA2's D = 256 tile: 128 x 64 on
// 8 warps, Q [128][256] + K, V [64][256] = 128 KB; two stages would need
// 192, past an A100's 163). Each copy goes into the buffer the other
// matmul has just left: K_{j+1} once every warp is past S_j (it streams
// under P·V_j), V_{j+1} once every warp is past P·V_j (under S_{j+1} and
// its softmax). Each wait is for everything in flight.
// CHECK-LABEL: gpu.func @one_stage
// CHECK-SAME: known_block_size = array<i32: 256, 1, 1>
// CHECK: %[[KS:[^ ]+]] = memref.view %{{.*}}[%c65536][] : memref<131072xi8, [[WG:#gpu.address_space<workgroup>]]> to memref<1x64x256xbf16, [[WG]]>
// CHECK: %[[VS:[^ ]+]] = memref.view %{{.*}}[%c98304][] : memref<131072xi8, [[WG]]> to memref<1x64x256xbf16, [[WG]]>
// Prologue: {Q, K_0}, then {V_0}; wait for the first.
// CHECK: nvvm.cp.async.commit.group
// CHECK: nvvm.cp.async.commit.group
// CHECK-NEXT: nvvm.cp.async.wait.group 1
// CHECK-NEXT: gpu.barrier
// CHECK: scf.for
// No copy before S: the one K stage holds K_j.
// CHECK-NOT: nvvm.cp.async.shared.global
// CHECK: %[[KT:[^ ]+]] = fa.shared_tile %[[KS]][%c0]
// CHECK-NEXT: fa.qk_scores %{{.*}}, %[[KT]]
// CHECK-SAME: -> tensor<128x64xf32, #fa.fragment<warps = 8, mTiles = 1, deferredScale
// CHECK: fa.exp_shifted
// V_j landed, every warp past S_j: K_{j+1} into K's stage, under P·V_j
// (and no copy before that wait).
// CHECK-NOT: nvvm.cp.async.shared.global
// CHECK: nvvm.cp.async.wait.group 0
// CHECK-NEXT: gpu.barrier
// CHECK-NEXT: scf.if
// CHECK: llvm.getelementptr %{{[^[]+}}[65536]
// CHECK-NEXT: nvvm.cp.async.shared.global %{{.*}}, 16, cache =  cg,
// CHECK: nvvm.cp.async.commit.group
// CHECK-NEXT: %[[VT:[^ ]+]] = fa.shared_tile %[[VS]][%c0]
// CHECK-NEXT: fa.matmul %{{.*}}, %[[VT]], %{{.*}} : tensor<128x64xbf16, {{.*}}>, tensor<64x256xbf16, {{.*}}>, tensor<128x256xf32, #fa.fragment<warps = 8, mTiles = 1>>
// K_{j+1} landed, every warp past P·V_j: V_{j+1} into V's stage.
// CHECK-NEXT: nvvm.cp.async.wait.group 0
// CHECK-NEXT: gpu.barrier
// CHECK-NEXT: scf.if
// CHECK: llvm.getelementptr %{{[^[]+}}[98304]
// CHECK-NEXT: nvvm.cp.async.shared.global %{{.*}}, 16, cache =  cg,
// CHECK: nvvm.cp.async.commit.group
// CHECK-NEXT: scf.yield
func.func @one_stage(%q: tensor<1x1x256x256xbf16>, %k: tensor<1x1x256x256xbf16>, %v: tensor<1x1x256x256xbf16>)
    -> tensor<1x1x256x256xbf16> {
  %o = fa.attention %q, %k, %v {tile = #fa.tile<block_m = 128, block_n = 64, stages = 1, warps = 8>}
      : (tensor<1x1x256x256xbf16>, tensor<1x1x256x256xbf16>, tensor<1x1x256x256xbf16>) -> tensor<1x1x256x256xbf16>
  return %o : tensor<1x1x256x256xbf16>
}

// The tools' choice (AmpereStrategy's tunedTile and forwardPipeline): past
// D = 128, 16 rows per warp; two stages where they fit in 163 KB.
// TUNED: "tile": {"block_m": 128, "block_n": 64, "stages": 1, "warps": 8}
// At Dv = 128 two stages fit (160 KB).
// TWOFIT: "tile": {"block_m": 128, "block_n": 64, "stages": 2, "warps": 8}
// The previous D = 256 tile, by hand: 4 warps, two stages (96 KB).
// NARROW: "tile": {"block_m": 64, "block_n": 32, "stages": 2, "warps": 4}
