// RUN: fa-opt %s --allow-unregistered-dialect --fa-test-tma-ring --canonicalize --cse | FileCheck %s

// The TMA ring (Hopper/TmaRing.h) on its own: three slots of two 128-byte
// panels of 64 rows (16 KB each) at the start of shared memory, then a
// full and an empty mbarrier per slot (16 bytes a slot, from 49152). Use
// j of a loop takes slot j mod 3 in phase (j / 3) mod 2.

// Thread 0 initialises every slot's barriers: full expects one arrival
// (the producer's, with the copies' bytes), empty every consumer thread.
// CHECK-LABEL: gpu.func @ring
// CHECK: %[[BASE:.*]] = arith.index_castui %{{.*}} : index to i32
// CHECK: %[[TID:.*]] = gpu.thread_id x
// CHECK: %[[FIRST:.*]] = arith.cmpi eq, %[[TID]], %c0
// CHECK: scf.if %[[FIRST]] {
// CHECK: %[[F0:.*]] = arith.addi %[[BASE]], %c49152_i32
// CHECK: %[[F0P:.*]] = llvm.inttoptr %[[F0]] : i32 to !llvm.ptr<3>
// CHECK: nvvm.mbarrier.init %[[F0P]], %c1_i32
// CHECK: %[[E0:.*]] = arith.addi %[[BASE]], %c49160_i32
// CHECK: %[[E0P:.*]] = llvm.inttoptr %[[E0]] : i32 to !llvm.ptr<3>
// CHECK: nvvm.mbarrier.init %[[E0P]], %c256_i32
// CHECK: %[[F1:.*]] = arith.addi %[[BASE]], %c49168_i32
// CHECK: %[[F1P:.*]] = llvm.inttoptr %[[F1]] : i32 to !llvm.ptr<3>
// CHECK: nvvm.mbarrier.init %[[F1P]], %c1_i32
// CHECK: %[[E1:.*]] = arith.addi %[[BASE]], %c49176_i32
// CHECK: %[[E1P:.*]] = llvm.inttoptr %[[E1]] : i32 to !llvm.ptr<3>
// CHECK: nvvm.mbarrier.init %[[E1P]], %c256_i32
// CHECK: %[[F2:.*]] = arith.addi %[[BASE]], %c49184_i32
// CHECK: %[[F2P:.*]] = llvm.inttoptr %[[F2]] : i32 to !llvm.ptr<3>
// CHECK: nvvm.mbarrier.init %[[F2P]], %c1_i32
// CHECK: %[[E2:.*]] = arith.addi %[[BASE]], %c49192_i32
// CHECK: %[[E2P:.*]] = llvm.inttoptr %[[E2]] : i32 to !llvm.ptr<3>
// CHECK: nvvm.mbarrier.init %[[E2P]], %c256_i32
// CHECK-NOT: nvvm.mbarrier.init
// CHECK: nvvm.fence.mbarrier.init
// CHECK-NEXT: nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
// CHECK: }
// CHECK-NEXT: gpu.barrier

// The producer: wait until the slot's last use was released (the phase
// before this use's: parity ^ 1, which a fresh barrier passes), one
// arrival that expects the slot's 16384 bytes, then one box per panel
// into the slot, completing on its full barrier.
// CHECK: scf.for %[[J:.*]] = %c0 to %{{.*}} step %c1 {
// CHECK: %[[STAGE:.*]] = arith.remui %[[J]], %c3 : index
// CHECK: %[[ROUND:.*]] = arith.divui %[[J]], %c3 : index
// CHECK: %[[ODD:.*]] = arith.remui %[[ROUND]], %c2 : index
// CHECK: %[[PARITY:.*]] = arith.index_cast %[[ODD]] : index to i32
// CHECK: %[[RELEASED:.*]] = arith.xori %[[PARITY]], %c1_i32 : i32
// CHECK: %[[EMPTY_BASE:.*]] = arith.addi %[[BASE]], %c49160_i32
// CHECK: %[[S:.*]] = arith.index_cast %[[STAGE]] : index to i32
// CHECK: %[[STRIDE:.*]] = arith.muli %[[S]], %c16_i32
// CHECK: %[[EMPTY:.*]] = arith.addi %[[EMPTY_BASE]], %[[STRIDE]]
// CHECK: %[[EMPTYP:.*]] = llvm.inttoptr %[[EMPTY]] : i32 to !llvm.ptr<3>
// CHECK: scf.while
// CHECK-NEXT: %[[DONE:.*]] = nvvm.mbarrier.try_wait %[[EMPTYP]], %[[RELEASED]]
// CHECK-NEXT: %[[WAITING:.*]] = arith.xori %[[DONE]], %true
// CHECK-NEXT: scf.condition(%[[WAITING]])
// CHECK: %[[FULL_BASE:.*]] = arith.addi %[[BASE]], %c49152_i32
// CHECK: %[[FULL:.*]] = arith.addi %[[FULL_BASE]], %[[STRIDE]]
// CHECK: %[[FULLP:.*]] = llvm.inttoptr %[[FULL]] : i32 to !llvm.ptr<3>
// CHECK: nvvm.mbarrier.arrive.expect_tx %[[FULLP]], %c16384_i32
// CHECK: %[[ROW:.*]] = arith.muli %[[J]], %c64 : index
// CHECK: %[[ROW32:.*]] = arith.index_cast %[[ROW]] : index to i32
// CHECK: %[[OFFSET:.*]] = arith.muli %[[S]], %c16384_i32
// CHECK: %[[SLOT:.*]] = arith.addi %[[BASE]], %[[OFFSET]]
// CHECK: %[[SLOTP:.*]] = llvm.inttoptr %[[SLOT]] : i32 to !llvm.ptr<7>
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global %[[SLOTP]], %arg0, %[[FULLP]], box[%c0_i32, %[[ROW32]], %c0_i32, %c0_i32]
// CHECK: %[[PANEL1:.*]] = arith.addi %[[SLOT]], %c8192_i32
// CHECK: %[[PANEL1P:.*]] = llvm.inttoptr %[[PANEL1]] : i32 to !llvm.ptr<7>
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global %[[PANEL1P]], %arg0, %[[FULLP]], box[%c64_i32, %[[ROW32]], %c0_i32, %c0_i32]
// CHECK-NOT: nvvm.cp.async.bulk.tensor
// CHECK: }

// The consumers: wait for the use's phase of the slot's full barrier,
// read, then arrive on its empty barrier.
// CHECK: scf.for %[[J:.*]] = %c0 to %{{.*}} step %c1 {
// CHECK: %[[STAGE:.*]] = arith.remui %[[J]], %c3 : index
// CHECK: %[[ROUND:.*]] = arith.divui %[[J]], %c3 : index
// CHECK: %[[ODD:.*]] = arith.remui %[[ROUND]], %c2 : index
// CHECK: %[[PARITY:.*]] = arith.index_cast %[[ODD]] : index to i32
// CHECK: %[[FULL_BASE:.*]] = arith.addi %[[BASE]], %c49152_i32
// CHECK: %[[S:.*]] = arith.index_cast %[[STAGE]] : index to i32
// CHECK: %[[STRIDE:.*]] = arith.muli %[[S]], %c16_i32
// CHECK: %[[FULL:.*]] = arith.addi %[[FULL_BASE]], %[[STRIDE]]
// CHECK: %[[FULLP:.*]] = llvm.inttoptr %[[FULL]] : i32 to !llvm.ptr<3>
// CHECK: scf.while
// CHECK-NEXT: %[[DONE:.*]] = nvvm.mbarrier.try_wait %[[FULLP]], %[[PARITY]]
// CHECK-NEXT: %[[WAITING:.*]] = arith.xori %[[DONE]], %true
// CHECK-NEXT: scf.condition(%[[WAITING]])
// CHECK-NEXT: } do {
// CHECK-NEXT: scf.yield
// CHECK-NEXT: }
// CHECK-NEXT: "test.read"()
// CHECK: %[[EMPTY_BASE:.*]] = arith.addi %[[BASE]], %c49160_i32
// CHECK: %[[EMPTY:.*]] = arith.addi %[[EMPTY_BASE]], %[[STRIDE]]
// CHECK: %[[EMPTYP:.*]] = llvm.inttoptr %[[EMPTY]] : i32 to !llvm.ptr<3>
// CHECK-NEXT: nvvm.mbarrier.arrive %[[EMPTYP]]
// CHECK-NEXT: }
// CHECK-NOT: fa.test
gpu.module @m {
  gpu.func @ring(%map: !llvm.ptr, %tiles: index) kernel
      attributes {fa.test.tma_ring = {stages = 3 : i64, panels = 2 : i64,
                                      rows = 64 : i64, consumers = 256 : i64}} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    scf.for %j = %c0 to %tiles step %c1 {
    } {fa.test.producer}
    scf.for %j = %c0 to %tiles step %c1 {
      "test.read"() : () -> ()
    } {fa.test.consumer}
    gpu.return
  }
}
