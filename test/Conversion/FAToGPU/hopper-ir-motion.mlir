// RUN: fa-opt %s --allow-unregistered-dialect --fa-test-ir-motion | FileCheck %s

// The IR-motion helpers (Hopper/IrMotion.h) on their own.

// hoistAfter: the marked op and what it depends on after the anchor move
// to right after the anchor, in their order; the rest keeps its place.
// CHECK-LABEL: func.func @hoist
// CHECK-NEXT: "test.anchor"()
// CHECK-NEXT: %[[A:.*]] = "test.a"()
// CHECK-NEXT: %[[B:.*]] = "test.b"(%[[A]])
// CHECK-NEXT: "test.op"(%[[B]], %arg0) {fa.test.hoist_after}
// CHECK-NEXT: "test.unrelated"()
// CHECK-NEXT: "test.use"
// CHECK-NEXT: return
func.func @hoist(%x: i32) {
  "test.anchor"() {fa.test.anchor} : () -> ()
  %a = "test.a"() : () -> i32
  "test.unrelated"() : () -> ()
  %b = "test.b"(%a) : (i32) -> i32
  %op = "test.op"(%b, %x) {fa.test.hoist_after} : (i32, i32) -> i32
  "test.use"(%op) : (i32) -> ()
  return
}

// moveBeforeWithOperands: the same to right before the anchor.
// CHECK-LABEL: func.func @move_before
// CHECK-NEXT: "test.first"()
// CHECK-NEXT: %[[A:.*]] = "test.a"()
// CHECK-NEXT: "test.op"(%[[A]]) {fa.test.move_before}
// CHECK-NEXT: "test.anchor"()
// CHECK-NEXT: "test.unrelated"()
// CHECK-NEXT: return
func.func @move_before() {
  "test.first"() : () -> ()
  "test.anchor"() {fa.test.anchor} : () -> ()
  %a = "test.a"() : () -> i32
  "test.unrelated"() : () -> ()
  "test.op"(%a) {fa.test.move_before} : (i32) -> ()
  return
}

// awaitAt: the MMA's users read an fa.mma_wait placed before the first of
// them, with the given number of MMA groups left in flight.
// CHECK-LABEL: func.func @await
// CHECK-NEXT: %[[S:.*]] = fa.matmul %arg0, %arg1, %arg2 {fa.test.await = 1 : i64}
// CHECK-NEXT: "test.other"()
// CHECK-NEXT: %[[W:.*]] = fa.mma_wait %[[S]] pending = 1
// CHECK-NEXT: "test.use"(%[[W]])
// CHECK-NEXT: "test.use"(%[[W]])
// CHECK-NEXT: return
#acc = #fa.fragment<warps = 4, mTiles = 1>
func.func @await(%p: tensor<64x64xbf16, #acc>, %v: tensor<64x64xbf16, #fa.tma_shared<swizzleBytes = 128>>,
                 %acc: tensor<64x64xf32, #acc>) {
  %s = fa.matmul %p, %v, %acc {fa.test.await = 1 : i64}
      : tensor<64x64xbf16, #acc>, tensor<64x64xbf16, #fa.tma_shared<swizzleBytes = 128>>, tensor<64x64xf32, #acc>
  "test.other"() : () -> ()
  "test.use"(%s) : (tensor<64x64xf32, #acc>) -> ()
  "test.use"(%s) : (tensor<64x64xf32, #acc>) -> ()
  return
}
