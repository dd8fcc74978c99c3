// RUN: fa-opt %s --fa-gpu-lower-fragments="chip=sm_80" --canonicalize --cse | FileCheck %s --implicit-check-not="fa."

// dq_acc in the MMA accumulator's lane order (`mma_blocks`): element
// (r, c) at base + (r / 8)·8·stride + (r % 8)·4 + (c / 8)·64 + (c % 2)·32
// + (c % 8) / 2, so that the 32 lanes' additions of one register slot
// (rows lane / 4, columns 2·(lane % 4) + parity) fill 128 contiguous bytes.

// The addition: per row slot one 64-bit address (the thread's row and
// first column), each register of its two n-tiles an immediate: n-tile
// 64 floats (256 bytes) on, the odd column 32 (128 bytes).
// CHECK-LABEL: gpu.func @add
// CHECK: %[[LANE:.+]] = arith.remui %thread_id_x, %c32
// CHECK: %[[ROW:.+]] = arith.addi %arg2, %{{.+}} : index
// CHECK: scf.if
// CHECK-NEXT: %[[QUAD:.+]] = arith.remui %[[LANE]], %c4
// CHECK-NEXT: %[[COL:.+]] = arith.muli %[[QUAD]], %c2
// CHECK-NEXT: %[[BAND:.+]] = arith.muli %arg4, %c8
// CHECK-NEXT: %[[R8:.+]] = arith.divui %[[ROW]], %c8
// CHECK-NEXT: %[[BANDS:.+]] = arith.muli %[[R8]], %[[BAND]]
// CHECK-NEXT: %[[RIN:.+]] = arith.remui %[[ROW]], %c8
// CHECK-NEXT: %[[RINOFF:.+]] = arith.muli %[[RIN]], %c4
// CHECK-NEXT: %[[C8:.+]] = arith.divui %[[COL]], %c8
// CHECK-NEXT: %[[BLOCKS:.+]] = arith.muli %[[C8]], %c64
// CHECK-NEXT: %[[CIN:.+]] = arith.remui %[[COL]], %c8
// CHECK-NEXT: %[[CINOFF:.+]] = arith.divui %[[CIN]], %c2
// CHECK-NEXT: %[[O1:.+]] = arith.addi %arg1, %[[BANDS]]
// CHECK-NEXT: %[[O2:.+]] = arith.addi %[[O1]], %[[RINOFF]]
// CHECK-NEXT: %[[O3:.+]] = arith.addi %[[O2]], %[[BLOCKS]]
// CHECK-NEXT: arith.addi %[[O3]], %[[CINOFF]]
// CHECK: %[[ADDR:.+]] = arith.addi
// CHECK-NEXT: "red.global.add.f32 [$0], $1;", "l,f" %[[ADDR]],
// CHECK-NEXT: "red.global.add.f32 [$0+128], $1;", "l,f" %[[ADDR]],
// CHECK-NEXT: "red.global.add.f32 [$0+256], $1;", "l,f" %[[ADDR]],
// CHECK-NEXT: "red.global.add.f32 [$0+384], $1;", "l,f" %[[ADDR]],
// CHECK-NEXT: }
// The second row slot (8 rows on: the next band).
// CHECK: scf.if
// CHECK-COUNT-4: red.global.add.f32
// CHECK-NOT: red.global.add.f32
// CHECK: gpu.return
gpu.module @m {
  gpu.func @add(%acc: memref<?xf32>, %base: index, %q0: index, %m: index, %s: index) kernel {
    %t = arith.constant dense<1.0> : tensor<64x16xf32, #fa.fragment<warps = 4, mTiles = 1>>
    fa.accumulate_fragment %t, %acc[%base] rows [%q0, %m] stride %s mma_blocks
        : tensor<64x16xf32, #fa.fragment<warps = 4, mTiles = 1>>, memref<?xf32>
    gpu.return
  }

// Read back: each element on its own load (a pair's columns are 32 floats
// apart), at the same place from the clamped row; missing rows padded.
// CHECK-LABEL: gpu.func @read
// CHECK: %[[SAFE:.+]] = arith.minsi
// CHECK: %[[R8:.+]] = arith.divui %[[SAFE]], %c8
// CHECK: %[[RIN:.+]] = arith.remui %[[SAFE]], %c8
// CHECK: memref.load %arg0[%[[FIRST:[0-9]+]]]
// CHECK-NEXT: arith.select
// CHECK-NEXT: %[[ODD:.+]] = arith.addi %[[FIRST]], %c32
// CHECK-NEXT: memref.load %arg0[%[[ODD]]]
// CHECK-NEXT: arith.select
// CHECK-NEXT: %[[NT1:.+]] = arith.addi %[[FIRST]], %c64
// CHECK-NEXT: memref.load %arg0[%[[NT1]]]
// CHECK-NEXT: arith.select
// CHECK-NEXT: %[[NT1ODD:.+]] = arith.addi %[[FIRST]], %c96
// CHECK-NEXT: memref.load %arg0[%[[NT1ODD]]]
  gpu.func @read(%acc: memref<?xf32>, %out: memref<?xf32>, %base: index, %q0: index, %m: index, %s: index) kernel {
    %r = fa.load_fragment %acc[%base] rows [%q0, %m] stride %s padding 0.0 mma_blocks
        : memref<?xf32> -> tensor<128x16xf32, #fa.fragment<warps = 8, mTiles = 1>>
    fa.store_fragment %r, %out[%base] rows [%q0, %m] stride %s
        : tensor<128x16xf32, #fa.fragment<warps = 8, mTiles = 1>>, memref<?xf32>
    gpu.return
  }
}
