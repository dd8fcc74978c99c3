// RUN: fa-opt %s --allow-unregistered-dialect --fa-test-pingpong --canonicalize --cse | FileCheck %s

// Pingpong (Hopper/Pingpong.h) on its own: warpgroup w (threadIdx.x / 128)
// waits on named barrier first + w before it issues its MMAs and arrives
// on its successor's, first + (w + 1) mod groups, after; each barrier
// counts the syncing and the arriving warpgroup (256 threads).

// Two warpgroups on barriers 1 and 2: the last (1) gives warpgroup 0 its
// first turn before the loop; warpgroup 0 takes the last arrival after.
// CHECK-LABEL: gpu.func @pingpong
// CHECK: %[[TID:.*]] = gpu.thread_id x
// CHECK: %[[WG:.*]] = arith.divui %[[TID]], %c128 : index
// CHECK: %[[GROUP:.*]] = arith.index_cast %[[WG]] : index to i32
// CHECK: %[[OWN:.*]] = arith.addi %[[GROUP]], %c1_i32 : i32
// CHECK: %[[NEXT_GROUP:.*]] = arith.remui %[[OWN]], %c2_i32 : i32
// CHECK: %[[NEXT:.*]] = arith.addi %[[NEXT_GROUP]], %c1_i32 : i32
// CHECK: %[[IS_FIRST:.*]] = arith.cmpi eq, %[[GROUP]], %c0_i32 : i32
// CHECK: %[[IS_LAST:.*]] = arith.cmpi eq, %[[GROUP]], %c1_i32 : i32
// CHECK: scf.if %[[IS_LAST]] {
// CHECK-NEXT: nvvm.barrier.arrive id = %c1_i32 number_of_threads = %c256_i32
// CHECK-NEXT: }
// CHECK: scf.for
// CHECK-NEXT: nvvm.barrier id = %[[OWN]] number_of_threads = %c256_i32
// CHECK-NEXT: "test.mma"() : () -> ()
// CHECK-NEXT: nvvm.barrier.arrive id = %[[NEXT]] number_of_threads = %c256_i32
// CHECK-NEXT: "test.softmax"
// CHECK-NEXT: }
// CHECK-NEXT: scf.if %[[IS_FIRST]] {
// CHECK-NEXT: nvvm.barrier id = %c1_i32 number_of_threads = %c256_i32
// CHECK-NEXT: }
// CHECK-NEXT: gpu.return
gpu.module @m {
  gpu.func @pingpong(%tiles: index) kernel
      attributes {fa.test.pingpong = {groups = 2 : i64, first_barrier = 1 : i64}} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    scf.for %j = %c0 to %tiles step %c1 {
      "test.mma"() {fa.test.issue} : () -> ()
      "test.softmax"() : () -> ()
    }
    gpu.return
  }

  // Three warpgroups from barrier 4: 4, 5, 6; the successor of 2 is 0.
  // CHECK-LABEL: gpu.func @three
  // CHECK: %[[GROUP:.*]] = arith.index_cast %{{.*}} : index to i32
  // CHECK: %[[OWN:.*]] = arith.addi %[[GROUP]], %c4_i32 : i32
  // CHECK: %[[PLUS1:.*]] = arith.addi %[[GROUP]], %c1_i32 : i32
  // CHECK: %[[NEXT_GROUP:.*]] = arith.remui %[[PLUS1]], %c3_i32 : i32
  // CHECK: %[[NEXT:.*]] = arith.addi %[[NEXT_GROUP]], %c4_i32 : i32
  // CHECK: %[[IS_FIRST:.*]] = arith.cmpi eq, %[[GROUP]], %c0_i32 : i32
  // CHECK: %[[IS_LAST:.*]] = arith.cmpi eq, %[[GROUP]], %c2_i32 : i32
  // CHECK: scf.if %[[IS_LAST]] {
  // CHECK-NEXT: nvvm.barrier.arrive id = %c4_i32 number_of_threads = %c256_i32
  // CHECK-NEXT: }
  // CHECK-NEXT: nvvm.barrier id = %[[OWN]] number_of_threads = %c256_i32
  // CHECK-NEXT: "test.mma"
  // CHECK-NEXT: nvvm.barrier.arrive id = %[[NEXT]] number_of_threads = %c256_i32
  // CHECK-NEXT: scf.if %[[IS_FIRST]] {
  // CHECK-NEXT: nvvm.barrier id = %c4_i32 number_of_threads = %c256_i32
  gpu.func @three() kernel
      attributes {fa.test.pingpong = {groups = 3 : i64, first_barrier = 4 : i64}} {
    "test.mma"() {fa.test.issue} : () -> ()
    gpu.return
  }

  // One warpgroup takes no turns.
  // CHECK-LABEL: gpu.func @one
  // CHECK-NEXT: "test.mma"() : () -> ()
  // CHECK-NEXT: gpu.return
  gpu.func @one() kernel
      attributes {fa.test.pingpong = {groups = 1 : i64, first_barrier = 1 : i64}} {
    "test.mma"() {fa.test.issue} : () -> ()
    gpu.return
  }
}
