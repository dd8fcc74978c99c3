// RUN: fa-opt %s --fa-test-e4m3-transpose --canonicalize --cse | FileCheck %s

// The e4m3 tile transpose (Hopper/E4M3Transpose.h) on its own, for 160
// keys by 48 columns: 5 steps of 32 keys over the warpgroup's four warps
// (the second round warp 0's alone, behind a warp-uniform branch); per
// step two halves of 16 keys, each of one panel's 3 chunks of 16 columns:
// a task of 2 chunks (ldmatrix .x2 twice, 4 prmt, stmatrix .x4), then of 1
// (.x1 twice, 2 prmt, stmatrix .x2). scripts/fp8-transpose-sim.py checks
// the addresses byte by byte.

// CHECK-LABEL: gpu.func @transpose
// CHECK: %[[T:.*]] = arith.index_cast %arg0 : index to i32
// CHECK: %[[WARP:.*]] = arith.divui %[[T]], %c32_i32 : i32
// CHECK: %[[LANE:.*]] = arith.remui %[[T]], %c32_i32 : i32
// CHECK: %[[READ:.*]] = arith.addi %arg1, %{{.*}} : i32
// CHECK: %[[WRITE:.*]] = arith.addi %arg2, %{{.*}} : i32

// The first round, h = 0: chunks 0-1, then chunk 2 (the read base xor 32).
// CHECK: %[[R:.*]] = llvm.inttoptr %[[READ]] : i32 to !llvm.ptr<3>
// CHECK: nvvm.ldmatrix %[[R]] {{.*}}num = 2 : i32
// CHECK: %[[R8:.*]] = llvm.getelementptr %[[R]][1024]
// CHECK: nvvm.ldmatrix %[[R8]] {{.*}}num = 2 : i32
// CHECK-COUNT-4: nvvm.prmt
// CHECK: %[[W:.*]] = llvm.inttoptr %[[WRITE]] : i32 to !llvm.ptr<3>
// CHECK: nvvm.stmatrix %[[W]], %{{[0-9]+}}, %{{[0-9]+}}, %{{[0-9]+}}, %{{[0-9]+}} {
// CHECK: %[[CHUNK2:.*]] = arith.xori %[[READ]], %c32_i32 : i32
// CHECK: %[[C:.*]] = llvm.inttoptr %[[CHUNK2]] : i32 to !llvm.ptr<3>
// CHECK: nvvm.ldmatrix %[[C]] {{.*}}num = 1 : i32
// CHECK: %[[C8:.*]] = llvm.getelementptr %[[C]][1024]
// CHECK: nvvm.ldmatrix %[[C8]] {{.*}}num = 1 : i32
// CHECK-COUNT-2: nvvm.prmt
// CHECK: %[[W2:.*]] = llvm.getelementptr %[[W]][4096]
// CHECK: nvvm.stmatrix %[[W2]], %{{[0-9]+}}, %{{[0-9]+}} {
// h = 1: the write base xor 16.
// CHECK: %[[WRITE1:.*]] = arith.xori %[[WRITE]], %c16_i32 : i32
// CHECK: %[[R16:.*]] = llvm.getelementptr %[[R]][2048]
// CHECK: nvvm.ldmatrix %[[R16]]
// CHECK: %[[R24:.*]] = llvm.getelementptr %[[R]][3072]
// CHECK: nvvm.ldmatrix %[[R24]]
// CHECK-COUNT-4: nvvm.prmt
// CHECK: %[[W1:.*]] = llvm.inttoptr %[[WRITE1]] : i32 to !llvm.ptr<3>
// CHECK: nvvm.stmatrix %[[W1]],
// CHECK: %[[C16:.*]] = llvm.getelementptr %[[C]][2048]
// CHECK: nvvm.ldmatrix %[[C16]]
// CHECK: %[[C24:.*]] = llvm.getelementptr %[[C]][3072]
// CHECK: nvvm.ldmatrix %[[C24]]
// CHECK-COUNT-2: nvvm.prmt
// CHECK: %[[W12:.*]] = llvm.getelementptr %[[W1]][4096]
// CHECK: nvvm.stmatrix %[[W12]],
// CHECK-NOT: nvvm.ldmatrix

// The second round: one step, warp 0's.
// CHECK: %[[TAKES:.*]] = arith.cmpi ult, %[[WARP]], %c1_i32 : i32
// CHECK: scf.if %[[TAKES]] {
// CHECK-COUNT-8: nvvm.ldmatrix
// CHECK-NOT: nvvm.ldmatrix
// CHECK: gpu.return

// In all, per round 12 prmt and 4 stores (one per task and half).
// RUN: fa-opt %s --fa-test-e4m3-transpose | FileCheck %s --check-prefix=COUNT
// COUNT-COUNT-24: nvvm.prmt
// COUNT-NOT: nvvm.prmt
// RUN: fa-opt %s --fa-test-e4m3-transpose | FileCheck %s --check-prefix=STORES
// STORES-COUNT-8: nvvm.stmatrix
// STORES-NOT: nvvm.stmatrix
gpu.module @m {
  gpu.func @transpose(%thread: index, %source: i32, %destination: i32) kernel
      attributes {fa.test.e4m3_transpose = {keys = 160 : i64, columns = 48 : i64}} {
    gpu.return
  }
}
