// RUN: fa-opt %s --fa-recompute-backward --fa-gpu-distribute="chip=sm_80" --canonicalize --cse | FileCheck %s
// RUN: fa-opt %s --fa-recompute-backward --convert-fa-to-gpu="chip=sm_80" | FileCheck %s --check-prefix=LOWER
// RUN: rm -rf %t && fa-compile --bwd --target=sm_80 -d 64 -o %t && FileCheck %s --check-prefix=TUNED < %t/fa_bwd_sm80_bf16_d64_none.json

// The sm_80 backward's 128 x 128 tile on 8 warps at D = 64 (FA2's D64
// tile and layout; the tuned tile). S's (P's, dP's, dS's) 128 rows go
// over two row warps of four m-tiles and its 128 keys over four groups:
// 64 rows x 32 keys a warp. dK_j, dV_j and dQ_i are 32 x 32 a warp (two
// m-tiles, D's 64 columns over two groups); dQ_i reads dS from shared
// memory and is added from its fragment in dq_acc's MMA-block order.
// CHECK-LABEL: gpu.func @grad_main(
// CHECK-SAME: known_block_size = array<i32: 256, 1, 1>
// CHECK: fa.qk_scores {{.*}} -> tensor<128x128xf32, #fa.fragment<warps = 8, mTiles = 4, deferredScale = 1.250000e-01 : f32, columnGroups = 4>>
// CHECK: gpu.barrier
// CHECK: fa.matmul {{.*}} {transpose_a} {{.*}} tensor<128x64xf32, #fa.fragment<warps = 8, mTiles = 2, columnGroups = 2>>
// CHECK: fa.matmul {{.*}} {transpose_a} {{.*}} tensor<128x64xf32, #fa.fragment<warps = 8, mTiles = 2, columnGroups = 2>>
// CHECK: %[[DQ:.+]] = fa.matmul %{{.*}}, %{{.*}}, %{{.*}} : tensor<128x128xbf16, #fa.shared<rowElements = 128>>, tensor<128x64xbf16, #fa.shared<rowElements = 64>>, tensor<128x64xf32, [[WIDE:#fa.fragment<warps = 8, mTiles = 2, columnGroups = 2>]]>
// CHECK: fa.accumulate_fragment %[[DQ]], {{.*}} mma_blocks : tensor<128x64xf32, [[WIDE]]>

// Lowered: LSE_i and D_i a Q block ahead (loads_query_rows_ahead), 8 row
// slots a thread each, as predicated loads at immediate offsets from one
// address (16 rows an m-tile, 8 the second half: 32 bytes a slot), block
// 0's before the loop, block i + 1's in step i after its barrier. Per warp
// and Q block, S and dP on its 64 rows and its group's 32 keys (2 × 64
// m16n8k16), then dV, dK and dQ_i at 32 x 32 over 128 (3 × 64), then dQ_i
// added: 2 m-tiles × 2 row slots × 4 n-tiles × 2 registers. Last, dK_j and
// dV_j staged in the Q and dO rings, 4 rounds of 16-byte stores each
// (stores_gradients_through_shared).
// LOWER-LABEL: gpu.func @grad_main
// LOWER-COUNT-16: @p ld.global.f32 $0, [$1+{{0|32|64|96|128|160|192|224}}];
// LOWER: scf.for
// LOWER-COUNT-128: nvvm.mma.sync
// LOWER: gpu.barrier
// LOWER-COUNT-16: @p ld.global.f32 $0, [$1+{{0|32|64|96|128|160|192|224}}];
// LOWER-COUNT-192: nvvm.mma.sync
// LOWER-NOT: nvvm.mma.sync
// LOWER-COUNT-32: red.global.add.f32
// LOWER-NOT: red.global.add.f32
// LOWER-NOT: ld.global.f32
// LOWER: gpu.barrier
// LOWER-NOT: vector<4xi32>, !llvm.ptr<1>
// LOWER: gpu.barrier
// LOWER: llvm.getelementptr %{{[^[]+}}[32768] : (!llvm.ptr<3>) -> !llvm.ptr<3>, i8
// LOWER-NEXT: llvm.load %{{[^ ]+}} {alignment = 16 : i64} : !llvm.ptr<3> -> vector<4xi32>
// LOWER-NEXT: llvm.inttoptr
// LOWER-NEXT: llvm.store %{{[^,]+}}, %{{[^ ]+}} {alignment = 16 : i64} : vector<4xi32>, !llvm.ptr<1>
// LOWER-COUNT-3: llvm.getelementptr %{{[^[]+}}[32768] : (!llvm.ptr<3>) -> !llvm.ptr<3>, i8
// LOWER-COUNT-4: llvm.getelementptr %{{[^[]+}}[65536] : (!llvm.ptr<3>) -> !llvm.ptr<3>, i8
// LOWER: llvm.store %{{[^,]+}}, %{{[^ ]+}} {alignment = 16 : i64} : vector<4xi32>, !llvm.ptr<1>
// LOWER-NOT: vector<4xi32>, !llvm.ptr<1>
// LOWER-NOT: fa.
// LOWER: gpu.return

// TUNED: "tile": {"block_m": 128, "block_n": 128, "stages": 2, "warps": 8}

func.func @grad(%q: tensor<1x4x200x64xbf16>, %k: tensor<1x2x300x64xbf16>, %v: tensor<1x2x300x64xbf16>,
                %o: tensor<1x4x200x64xbf16>, %do: tensor<1x4x200x64xbf16>, %lse: tensor<1x4x200xf32>)
    -> (tensor<1x4x200x64xbf16>, tensor<1x2x300x64xbf16>, tensor<1x2x300x64xbf16>) {
  %dq, %dk, %dv = fa.attention_grad %q, %k, %v, %o, %do, %lse
      {mask = #fa.mask<causal>, tile = #fa.tile<block_m = 128, block_n = 128, stages = 2, warps = 8>}
      : (tensor<1x4x200x64xbf16>, tensor<1x2x300x64xbf16>, tensor<1x2x300x64xbf16>,
         tensor<1x4x200x64xbf16>, tensor<1x4x200x64xbf16>, tensor<1x4x200xf32>)
      -> (tensor<1x4x200x64xbf16>, tensor<1x2x300x64xbf16>, tensor<1x2x300x64xbf16>)
  return %dq, %dk, %dv : tensor<1x4x200x64xbf16>, tensor<1x2x300x64xbf16>, tensor<1x2x300x64xbf16>
}
