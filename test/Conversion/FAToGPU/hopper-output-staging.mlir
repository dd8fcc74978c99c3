// RUN: fa-opt %s --allow-unregistered-dialect --fa-test-output-staging --canonicalize --cse | FileCheck %s

// Output staging (Hopper/OutputStaging.h) on its own: two consumer
// warpgroups write a 128-row bf16 tile into shared memory (#fa.tma_shared
// panels of 64 columns), each syncs on its named barrier (first + its
// index, 128 threads), and each warpgroup's first thread stores its 64
// rows with one TMA box per panel at (64·panel, q0 + 64·warpgroup, head,
// batch).

#wgmma = #fa.fragment<warps = 8, mTiles = 1>

// In a region of its own (1024 bytes in): the leader waits for its last
// store's read before the warpgroup writes again, stores without waiting,
// and waits once more before the block exits.
// CHECK-LABEL: gpu.func @own
// CHECK: %[[VIEW:.*]] = memref.view %{{.*}}[%c1024][] : {{.*}} to memref<2x128x64xbf16, #gpu.address_space<workgroup>>
// CHECK: %[[BASE:.*]] = arith.index_castui %{{.*}} : index to i32
// CHECK: %[[TILE:.*]] = "test.output"()
// CHECK: %[[TID:.*]] = gpu.thread_id x
// CHECK: %[[WG:.*]] = arith.divui %[[TID]], %c128 : index
// CHECK: %[[GROUP:.*]] = arith.index_cast %[[WG]] : index to i32
// CHECK: %[[BARRIER:.*]] = arith.addi %[[GROUP]], %c3_i32 : i32
// CHECK: %[[LANE:.*]] = arith.remui %[[TID]], %c128 : index
// CHECK: %[[LEADER:.*]] = arith.cmpi eq, %[[LANE]], %c0 : index
// CHECK: scf.if %[[LEADER]] {
// CHECK-NEXT: nvvm.cp.async.bulk.wait_group 0 {read}
// CHECK-NEXT: }
// CHECK-NEXT: nvvm.barrier id = %[[BARRIER]] number_of_threads = %c128_i32
// CHECK-NEXT: fa.store_shared %[[TILE]], %[[VIEW]]
// CHECK-NEXT: nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
// CHECK-NEXT: nvvm.barrier id = %[[BARRIER]] number_of_threads = %c128_i32
// CHECK-NEXT: scf.if %[[LEADER]] {
// CHECK-NEXT: %[[ROWS:.*]] = arith.muli %[[GROUP]], %c64_i32 : i32
// CHECK-NEXT: %[[Q0:.*]] = arith.index_cast %arg1 : index to i32
// CHECK-NEXT: %[[ROW:.*]] = arith.addi %[[Q0]], %[[ROWS]] : i32
// CHECK-NEXT: %[[BYTES:.*]] = arith.muli %[[GROUP]], %c8192_i32 : i32
// CHECK-NEXT: %[[STAGING:.*]] = arith.addi %[[BASE]], %c1024_i32 : i32
// CHECK-NEXT: %[[SOURCE:.*]] = arith.addi %[[STAGING]], %[[BYTES]] : i32
// CHECK-NEXT: %[[HEAD:.*]] = arith.index_cast %arg2 : index to i32
// CHECK-NEXT: %[[BATCH:.*]] = arith.index_cast %arg3 : index to i32
// CHECK-NEXT: %[[SOURCEP:.*]] = llvm.inttoptr %[[SOURCE]] : i32 to !llvm.ptr<3>
// CHECK-NEXT: nvvm.cp.async.bulk.tensor.global.shared.cta %arg0, %[[SOURCEP]], box[%c0_i32, %[[ROW]], %[[HEAD]], %[[BATCH]]]
// CHECK-NEXT: %[[PANEL1:.*]] = arith.addi %[[SOURCE]], %c16384_i32 : i32
// CHECK-NEXT: %[[PANEL1P:.*]] = llvm.inttoptr %[[PANEL1]] : i32 to !llvm.ptr<3>
// CHECK-NEXT: nvvm.cp.async.bulk.tensor.global.shared.cta %arg0, %[[PANEL1P]], box[%c64_i32, %[[ROW]], %[[HEAD]], %[[BATCH]]]
// CHECK-NEXT: nvvm.cp.async.bulk.commit.group
// CHECK-NEXT: }
// CHECK-NEXT: scf.if %[[LEADER]] {
// CHECK-NEXT: nvvm.cp.async.bulk.wait_group 0 {read}
// CHECK-NEXT: }
// CHECK-NEXT: gpu.return
gpu.module @m {
  gpu.func @own(%map: !llvm.ptr, %q0: index, %head: index, %batch: index) kernel
      attributes {fa.test.output_staging = {panels = 2 : i64, rows = 128 : i64,
                                            offset = 1024 : i64, first_barrier = 3 : i64}} {
    %o = "test.output"() : () -> tensor<128x128xbf16, #wgmma>
    "test.stage"(%o) {fa.test.stage} : (tensor<128x128xbf16, #wgmma>) -> ()
    gpu.return
  }

  // Lent a ring's slot: no wait before the write (the ring's protocol
  // orders it); the leader waits for the store's read at once and arrives
  // on the read barrier (16384 bytes in), for the ring's producer; nothing
  // is left to drain.
  // CHECK-LABEL: gpu.func @lent
  // CHECK: %[[BASE:.*]] = arith.index_castui %{{.*}} : index to i32
  // CHECK: %[[LEADER:.*]] = arith.cmpi eq
  // CHECK-NOT: nvvm.cp.async.bulk.wait_group
  // CHECK: fa.store_shared
  // CHECK-NEXT: nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
  // CHECK-NEXT: nvvm.barrier id
  // CHECK-NEXT: scf.if %[[LEADER]] {
  // CHECK: nvvm.cp.async.bulk.tensor.global.shared.cta
  // CHECK-NEXT: nvvm.cp.async.bulk.commit.group
  // CHECK-NEXT: nvvm.cp.async.bulk.wait_group 0 {read}
  // CHECK-NEXT: %[[READ:.*]] = arith.addi %[[BASE]], %c16384_i32 : i32
  // CHECK-NEXT: %[[READP:.*]] = llvm.inttoptr %[[READ]] : i32 to !llvm.ptr<3>
  // CHECK-NEXT: nvvm.mbarrier.arrive %[[READP]]
  // CHECK-NEXT: }
  // CHECK-NEXT: gpu.return
  gpu.func @lent(%map: !llvm.ptr, %q0: index, %head: index, %batch: index) kernel
      attributes {fa.test.output_staging = {panels = 1 : i64, rows = 128 : i64,
                                            offset = 0 : i64, first_barrier = 3 : i64,
                                            read_barrier = 16384 : i64}} {
    %o = "test.output"() : () -> tensor<128x64xbf16, #wgmma>
    "test.stage"(%o) {fa.test.stage} : (tensor<128x64xbf16, #wgmma>) -> ()
    gpu.return
  }
}
