// RUN: fa-opt %s | FileCheck %s
// Round trip through the generic form must give the same custom form back.
// RUN: fa-opt %s --mlir-print-op-generic | fa-opt | FileCheck %s
// RUN: fa-opt %s --mlir-print-op-generic | FileCheck %s --check-prefix=GENERIC

// CHECK-LABEL: func.func @attention$mha_defaults
// CHECK: %{{.*}} = fa.attention %{{.*}}, %{{.*}}, %{{.*}} : (tensor<1x4x128x64xf16>, tensor<1x4x128x64xf16>, tensor<1x4x128x64xf16>) -> tensor<1x4x128x64xf16>
// GENERIC-LABEL: sym_name = "attention$mha_defaults"
// GENERIC: "fa.attention"(%{{.*}}, %{{.*}}, %{{.*}}) <{operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 0>}> ({
// GENERIC-NEXT: }, {
// GENERIC-NEXT: }) : (tensor<1x4x128x64xf16>
func.func @attention$mha_defaults(%q: tensor<1x4x128x64xf16>, %k: tensor<1x4x128x64xf16>,
                                  %v: tensor<1x4x128x64xf16>) -> tensor<1x4x128x64xf16> {
  %o = fa.attention %q, %k, %v
      : (tensor<1x4x128x64xf16>, tensor<1x4x128x64xf16>, tensor<1x4x128x64xf16>)
      -> tensor<1x4x128x64xf16>
  return %o : tensor<1x4x128x64xf16>
}

// GQA (Hq = 8, Hkv = 2), Dv != D, causal, explicit scale and tile, with LSE.
// CHECK-LABEL: func.func @attention$gqa_causal_lse
// CHECK: %{{.*}}, %{{.*}} = fa.attention %{{.*}}, %{{.*}}, %{{.*}} {mask = #fa.mask<causal>, scale = 1.250000e-01 : f32, tile = #fa.tile<block_m = 128, block_n = 64, stages = 2, warps = 4>}
// CHECK-SAME: -> (tensor<2x8x113x96xbf16>, tensor<2x8x113xf32>)
// GENERIC-LABEL: sym_name = "attention$gqa_causal_lse"
// GENERIC: "fa.attention"(%{{.*}}, %{{.*}}, %{{.*}}) <{mask = #fa.mask<causal>, operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 0>, scale = 1.250000e-01 : f32, tile = #fa.tile<block_m = 128, block_n = 64, stages = 2, warps = 4>}>
func.func @attention$gqa_causal_lse(%q: tensor<2x8x113x64xbf16>, %k: tensor<2x2x203x64xbf16>,
                                    %v: tensor<2x2x203x96xbf16>)
    -> (tensor<2x8x113x96xbf16>, tensor<2x8x113xf32>) {
  %o, %lse = fa.attention %q, %k, %v
      {mask = #fa.mask<causal>, scale = 0.125 : f32,
       tile = #fa.tile<block_m = 128, block_n = 64, stages = 2, warps = 4>}
      : (tensor<2x8x113x64xbf16>, tensor<2x2x203x64xbf16>, tensor<2x2x203x96xbf16>)
      -> (tensor<2x8x113x96xbf16>, tensor<2x8x113xf32>)
  return %o, %lse : tensor<2x8x113x96xbf16>, tensor<2x8x113xf32>
}

// Every mask kind, MQA (Hkv = 1) and softcap.
// CHECK-LABEL: func.func @attention$masks
// CHECK: fa.attention {{.*}} {mask = #fa.mask<none>}
// CHECK: fa.attention {{.*}} {mask = #fa.mask<causal_top_left>, softcap = 3.000000e+01 : f32}
// CHECK: fa.attention {{.*}} {mask = #fa.mask<window(128, 0)>}
// CHECK: fa.attention {{.*}} {mask = #fa.mask<window(-1, 16)>}
func.func @attention$masks(%q: tensor<1x4x64x32xf16>, %k: tensor<1x1x64x32xf16>,
                           %v: tensor<1x1x64x32xf16>) {
  %0 = fa.attention %q, %k, %v {mask = #fa.mask<none>}
      : (tensor<1x4x64x32xf16>, tensor<1x1x64x32xf16>, tensor<1x1x64x32xf16>) -> tensor<1x4x64x32xf16>
  %1 = fa.attention %q, %k, %v {mask = #fa.mask<causal_top_left>, softcap = 30.0 : f32}
      : (tensor<1x4x64x32xf16>, tensor<1x1x64x32xf16>, tensor<1x1x64x32xf16>) -> tensor<1x4x64x32xf16>
  %2 = fa.attention %q, %k, %v {mask = #fa.mask<window(128, 0)>}
      : (tensor<1x4x64x32xf16>, tensor<1x1x64x32xf16>, tensor<1x1x64x32xf16>) -> tensor<1x4x64x32xf16>
  %3 = fa.attention %q, %k, %v {mask = #fa.mask<window(-1, 16)>}
      : (tensor<1x4x64x32xf16>, tensor<1x1x64x32xf16>, tensor<1x1x64x32xf16>) -> tensor<1x4x64x32xf16>
  return
}

// FP8 inputs carry one descale factor each, and produce a bf16 output.
// CHECK-LABEL: func.func @attention$fp8
// CHECK: fa.attention %{{.*}}, %{{.*}}, %{{.*}} descale(%[[DQ:.*]], %[[DK:.*]], %[[DV:.*]]) : (tensor<1x2x256x128xf8E4M3FN>, tensor<1x2x256x128xf8E4M3FN>, tensor<1x2x256x128xf8E4M3FN>, f32, f32, f32) -> tensor<1x2x256x128xbf16>
// GENERIC-LABEL: sym_name = "attention$fp8"
// GENERIC: "fa.attention"(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) <{operandSegmentSizes = array<i32: 1, 1, 1, 3, 0, 0>}> ({
// GENERIC-NEXT: }, {
// GENERIC-NEXT: }) : (tensor<1x2x256x128xf8E4M3FN>, tensor<1x2x256x128xf8E4M3FN>, tensor<1x2x256x128xf8E4M3FN>, f32, f32, f32) -> tensor<1x2x256x128xbf16>
func.func @attention$fp8(%q: tensor<1x2x256x128xf8E4M3FN>, %k: tensor<1x2x256x128xf8E4M3FN>,
                         %v: tensor<1x2x256x128xf8E4M3FN>, %dq: f32, %dk: f32, %dv: f32)
    -> tensor<1x2x256x128xbf16> {
  %o = fa.attention %q, %k, %v descale(%dq, %dk, %dv)
      : (tensor<1x2x256x128xf8E4M3FN>, tensor<1x2x256x128xf8E4M3FN>, tensor<1x2x256x128xf8E4M3FN>, f32, f32, f32)
      -> tensor<1x2x256x128xbf16>
  return %o : tensor<1x2x256x128xbf16>
}

// Dynamic sizes are allowed; they are checked when the problem is known.
// CHECK-LABEL: func.func @attention$dynamic
// CHECK: fa.attention {{.*}} : (tensor<?x8x?x64xf16>, tensor<?x2x?x64xf16>, tensor<?x2x?x64xf16>) -> (tensor<?x8x?x64xf16>, tensor<?x8x?xf32>)
func.func @attention$dynamic(%q: tensor<?x8x?x64xf16>, %k: tensor<?x2x?x64xf16>,
                             %v: tensor<?x2x?x64xf16>) -> (tensor<?x8x?x64xf16>, tensor<?x8x?xf32>) {
  %o, %lse = fa.attention %q, %k, %v
      : (tensor<?x8x?x64xf16>, tensor<?x2x?x64xf16>, tensor<?x2x?x64xf16>)
      -> (tensor<?x8x?x64xf16>, tensor<?x8x?xf32>)
  return %o, %lse : tensor<?x8x?x64xf16>, tensor<?x8x?xf32>
}

// CHECK-LABEL: func.func @attention_grad$gqa
// CHECK: %{{.*}}, %{{.*}}, %{{.*}} = fa.attention_grad %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} {mask = #fa.mask<causal>, softcap = 5.000000e+01 : f32}
// CHECK-SAME: -> (tensor<1x4x256x64xf16>, tensor<1x2x256x64xf16>, tensor<1x2x256x64xf16>)
// GENERIC-LABEL: sym_name = "attention_grad$gqa"
// GENERIC: "fa.attention_grad"(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) <{mask = #fa.mask<causal>, operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 1, 0, 0>, softcap = 5.000000e+01 : f32}>
func.func @attention_grad$gqa(%q: tensor<1x4x256x64xf16>, %k: tensor<1x2x256x64xf16>,
                              %v: tensor<1x2x256x64xf16>, %o: tensor<1x4x256x64xf16>,
                              %do: tensor<1x4x256x64xf16>, %lse: tensor<1x4x256xf32>)
    -> (tensor<1x4x256x64xf16>, tensor<1x2x256x64xf16>, tensor<1x2x256x64xf16>) {
  %dq, %dk, %dv = fa.attention_grad %q, %k, %v, %o, %do, %lse
      {mask = #fa.mask<causal>, softcap = 50.0 : f32}
      : (tensor<1x4x256x64xf16>, tensor<1x2x256x64xf16>, tensor<1x2x256x64xf16>,
         tensor<1x4x256x64xf16>, tensor<1x4x256x64xf16>, tensor<1x4x256xf32>)
      -> (tensor<1x4x256x64xf16>, tensor<1x2x256x64xf16>, tensor<1x2x256x64xf16>)
  return %dq, %dk, %dv : tensor<1x4x256x64xf16>, tensor<1x2x256x64xf16>, tensor<1x2x256x64xf16>
}

// ALiBi: one f32 slope per query head ([Hq]) or per batch and head ([B, Hq]).
// CHECK-LABEL: func.func @attention$alibi_head
// CHECK: fa.attention %{{.*}}, %{{.*}}, %{{.*}} alibi(%{{.*}}) {mask = #fa.mask<causal>} : (tensor<2x8x113x64xbf16>, tensor<2x2x203x64xbf16>, tensor<2x2x203x64xbf16>, tensor<8xf32>) -> (tensor<2x8x113x64xbf16>, tensor<2x8x113xf32>)
// GENERIC-LABEL: sym_name = "attention$alibi_head"
// GENERIC: "fa.attention"(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) <{mask = #fa.mask<causal>, operandSegmentSizes = array<i32: 1, 1, 1, 0, 1, 0>}>
func.func @attention$alibi_head(%q: tensor<2x8x113x64xbf16>, %k: tensor<2x2x203x64xbf16>,
                                %v: tensor<2x2x203x64xbf16>, %slopes: tensor<8xf32>)
    -> (tensor<2x8x113x64xbf16>, tensor<2x8x113xf32>) {
  %o, %lse = fa.attention %q, %k, %v alibi(%slopes) {mask = #fa.mask<causal>}
      : (tensor<2x8x113x64xbf16>, tensor<2x2x203x64xbf16>, tensor<2x2x203x64xbf16>, tensor<8xf32>)
      -> (tensor<2x8x113x64xbf16>, tensor<2x8x113xf32>)
  return %o, %lse : tensor<2x8x113x64xbf16>, tensor<2x8x113xf32>
}

// CHECK-LABEL: func.func @attention$alibi_batch_head_dynamic
// CHECK: fa.attention %{{.*}}, %{{.*}}, %{{.*}} alibi(%{{.*}}) : (tensor<?x8x?x64xf16>, tensor<?x2x?x64xf16>, tensor<?x2x?x64xf16>, tensor<?x8xf32>) -> tensor<?x8x?x64xf16>
func.func @attention$alibi_batch_head_dynamic(%q: tensor<?x8x?x64xf16>, %k: tensor<?x2x?x64xf16>,
                                              %v: tensor<?x2x?x64xf16>, %slopes: tensor<?x8xf32>)
    -> tensor<?x8x?x64xf16> {
  %o = fa.attention %q, %k, %v alibi(%slopes)
      : (tensor<?x8x?x64xf16>, tensor<?x2x?x64xf16>, tensor<?x2x?x64xf16>, tensor<?x8xf32>)
      -> tensor<?x8x?x64xf16>
  return %o : tensor<?x8x?x64xf16>
}

// The backward takes the forward's slopes after LSE.
// CHECK-LABEL: func.func @attention_grad$alibi
// CHECK: fa.attention_grad %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} alibi(%{{.*}}) {mask = #fa.mask<causal>}
// CHECK-SAME: tensor<1x4x256xf32>, tensor<1x4xf32>)
// GENERIC-LABEL: sym_name = "attention_grad$alibi"
// GENERIC: "fa.attention_grad"(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) <{mask = #fa.mask<causal>, operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 1, 1, 0>}>
func.func @attention_grad$alibi(%q: tensor<1x4x256x64xf16>, %k: tensor<1x2x256x64xf16>,
                                %v: tensor<1x2x256x64xf16>, %o: tensor<1x4x256x64xf16>,
                                %do: tensor<1x4x256x64xf16>, %lse: tensor<1x4x256xf32>,
                                %slopes: tensor<1x4xf32>)
    -> (tensor<1x4x256x64xf16>, tensor<1x2x256x64xf16>, tensor<1x2x256x64xf16>) {
  %dq, %dk, %dv = fa.attention_grad %q, %k, %v, %o, %do, %lse alibi(%slopes)
      {mask = #fa.mask<causal>}
      : (tensor<1x4x256x64xf16>, tensor<1x2x256x64xf16>, tensor<1x2x256x64xf16>,
         tensor<1x4x256x64xf16>, tensor<1x4x256x64xf16>, tensor<1x4x256xf32>,
         tensor<1x4xf32>)
      -> (tensor<1x4x256x64xf16>, tensor<1x2x256x64xf16>, tensor<1x2x256x64xf16>)
  return %dq, %dk, %dv : tensor<1x4x256x64xf16>, tensor<1x2x256x64xf16>, tensor<1x2x256x64xf16>
}

// The documented bounds are inclusive, though 1e-6 has no f32 (the
// attribute holds 9.99999997e-07): |scale| 1e-6 and 1e6, softcap 1e-3 and
// 1e6 verify.
// CHECK-LABEL: func.func @attention$range_bounds
// CHECK: scale = 9.99999997E-7 : f32, softcap = 1.000000e-03 : f32
// CHECK: scale = -1.000000e+06 : f32, softcap = 1.000000e+06 : f32
func.func @attention$range_bounds(%q: tensor<1x1x16x16xf16>, %k: tensor<1x1x16x16xf16>,
                                  %v: tensor<1x1x16x16xf16>)
    -> (tensor<1x1x16x16xf16>, tensor<1x1x16x16xf16>) {
  %a = fa.attention %q, %k, %v {scale = 1.0e-6 : f32, softcap = 1.0e-3 : f32}
      : (tensor<1x1x16x16xf16>, tensor<1x1x16x16xf16>, tensor<1x1x16x16xf16>) -> tensor<1x1x16x16xf16>
  %b = fa.attention %q, %k, %v {scale = -1.0e6 : f32, softcap = 1.0e6 : f32}
      : (tensor<1x1x16x16xf16>, tensor<1x1x16x16xf16>, tensor<1x1x16x16xf16>) -> tensor<1x1x16x16xf16>
  return %a, %b : tensor<1x1x16x16xf16>, tensor<1x1x16x16xf16>
}

// A block-sparse attention: the block mask's block sizes round-trip.
// CHECK-LABEL: func.func @attention_block_sparse
// CHECK: fa.attention %{{.*}}, %{{.*}}, %{{.*}} {block_sparse = #fa.block_sparse<q_block = 128, kv_block = 64>}
func.func @attention_block_sparse(%q: tensor<1x2x256x64xbf16>, %k: tensor<1x2x256x64xbf16>,
                                  %v: tensor<1x2x256x64xbf16>) -> tensor<1x2x256x64xbf16> {
  %o = fa.attention %q, %k, %v {block_sparse = #fa.block_sparse<q_block = 128, kv_block = 64>}
      : (tensor<1x2x256x64xbf16>, tensor<1x2x256x64xbf16>, tensor<1x2x256x64xbf16>) -> tensor<1x2x256x64xbf16>
  return %o : tensor<1x2x256x64xbf16>
}
