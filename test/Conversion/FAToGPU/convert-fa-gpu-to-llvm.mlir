// RUN: fa-opt %s --split-input-file --convert-fa-gpu-to-llvm | FileCheck %s

// The late lowering of the fa instruction ops: each fa.wgmma is one
// wgmma.mma_async statement, each fa.wgmma_wait one wgmma.wait_group whose
// values are tied to its results; both volatile (has_side_effects), the
// results unpacked from the statement's struct. Nothing else is touched.

// A chain's first wgmma onto zeros: no accumulator operands, scale-d = 0,
// both operands by descriptor, B's offset (64 bytes = 4 descriptor units)
// added inside the PTX; imm-trans-a 0, imm-trans-b 1.
// CHECK-LABEL: func.func @shared_a
// CHECK-SAME: (%[[DA:[^:]+]]: i64, %[[DB:[^:]+]]: i64)
// CHECK: %[[SCALE:.+]] = llvm.mlir.constant(0 : i32) : i32
// CHECK: %[[D:.+]] = llvm.inline_asm has_side_effects "{\0A\09.reg .pred accumulate;\0A\09.reg .b64 descA, descB;\0A\09setp.ne.b32 accumulate, $6, 0;\0A\09add.s64 descB, $5, 4;\0A\09wgmma.mma_async.sync.aligned.m64n8k16.f32.bf16.bf16 {$0, $1, $2, $3}, $4, descB, accumulate, 1, 1, 0, 1;\0A\09}", "=f,=f,=f,=f,l,l,r" %[[DA]], %[[DB]], %[[SCALE]] : (i64, i64, i32) -> !llvm.struct<(f32, f32, f32, f32)>
// CHECK: %[[D0:.+]] = llvm.extractvalue %[[D]][0]
// CHECK: %[[D3:.+]] = llvm.extractvalue %[[D]][3]
// CHECK: return %[[D0]], %[[D3]]
func.func @shared_a(%da: i64, %db: i64) -> (f32, f32) {
  %d:4 = fa.wgmma a(desc %da + 0) b(desc %db + 64) {transpose_b} : bf16 -> f32, f32, f32, f32
  return %d#0, %d#3 : f32, f32
}

// -----

// A from four registers, accumulators read (tied to the outputs), A's
// registers after them, then B and scale-d = 1; no imm-trans-a.
// CHECK-LABEL: func.func @register_a
// CHECK: %[[SCALE:.+]] = llvm.mlir.constant(1 : i32) : i32
// CHECK: llvm.inline_asm has_side_effects "{\0A\09.reg .pred accumulate;\0A\09.reg .b64 descA, descB;\0A\09setp.ne.b32 accumulate, $13, 0;\0A\09wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {$0, $1, $2, $3}, {$8, $9, $10, $11}, $12, accumulate, 1, 1, 0;\0A\09}", "=f,=f,=f,=f,0,1,2,3,r,r,r,r,l,r" %arg0, %arg1, %arg2, %arg3, %arg4, %arg5, %arg6, %arg7, %arg8, %[[SCALE]]
func.func @register_a(%c0: f32, %c1: f32, %c2: f32, %c3: f32, %a0: i32, %a1: i32,
                      %a2: i32, %a3: i32, %db: i64) -> f32 {
  %d:4 = fa.wgmma a(%a0, %a1, %a2, %a3) b(desc %db + 0) acc(%c0, %c1, %c2, %c3) : f16 -> f32, f32, f32, f32
  return %d#2 : f32
}

// -----

// e4m3: k32 and no transpose immediates; A by descriptor with an offset.
// CHECK-LABEL: func.func @e4m3
// CHECK: add.s64 descA, $8, 2;\0A\09wgmma.mma_async.sync.aligned.m64n16k32.f32.e4m3.e4m3 {$0, $1, $2, $3, $4, $5, $6, $7}, descA, $9, accumulate, 1, 1;
func.func @e4m3(%da: i64, %db: i64) -> f32 {
  %d:8 = fa.wgmma a(desc %da + 32) b(desc %db + 0) : f8E4M3FN -> f32, f32, f32, f32, f32, f32, f32, f32
  return %d#7 : f32
}

// -----

// The wait carries its values: "=f" outputs tied to the inputs, the
// results read from the statement, never the operands.
// CHECK-LABEL: func.func @wait
// CHECK-SAME: (%[[A:[^:]+]]: f32, %[[B:[^:]+]]: f32)
// CHECK: %[[W:.+]] = llvm.inline_asm has_side_effects "wgmma.wait_group.sync.aligned 1;", "=f,=f,0,1" %[[A]], %[[B]] : (f32, f32) -> !llvm.struct<(f32, f32)>
// CHECK: %[[W0:.+]] = llvm.extractvalue %[[W]][0]
// CHECK: %[[W1:.+]] = llvm.extractvalue %[[W]][1]
// CHECK: arith.addf %[[W0]], %[[W1]]
func.func @wait(%a: f32, %b: f32) -> f32 {
  %w:2 = fa.wgmma_wait 1, %a, %b : f32, f32
  %s = arith.addf %w#0, %w#1 : f32
  return %s : f32
}

// -----

// The NVVM ops around them stay as they are.
// CHECK-LABEL: func.func @untouched
// CHECK: nvvm.wgmma.fence.aligned
// CHECK: nvvm.wgmma.commit.group.sync.aligned
// CHECK: nvvm.wgmma.wait.group.sync.aligned 0
func.func @untouched() {
  nvvm.wgmma.fence.aligned
  nvvm.wgmma.commit.group.sync.aligned
  nvvm.wgmma.wait.group.sync.aligned 0
  return
}
