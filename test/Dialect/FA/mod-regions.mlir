// RUN: fa-opt %s | fa-opt | FileCheck %s
// RUN: fa-opt %s --mlir-print-op-generic | fa-opt | FileCheck %s
// score_mod and mask_mod regions and their captured operands print, parse
// and round-trip, on the forward, the backward and the tile ops.

// CHECK-LABEL: func.func @relative_bias_window
// CHECK: fa.attention %{{.*}}, %{{.*}}, %{{.*}} captures(%{{.*}}, %{{.*}}) {mask = #fa.mask<causal>} score_mod {
// CHECK-NEXT: ^bb0(%[[S:.*]]: f32, %{{.*}}: index, %[[H:.*]]: index, %[[I:.*]]: index, %[[J:.*]]: index, %[[T:.*]]: tensor<4x255xf32>, %[[W:.*]]: f32):
// CHECK: tensor.extract %[[T]][%[[H]], %{{.*}}] : tensor<4x255xf32>
// CHECK: fa.yield %{{.*}} : f32
// CHECK: } mask_mod {
// CHECK: fa.yield %{{.*}} : i1
// CHECK: } : (tensor<1x4x128x64xbf16>, tensor<1x2x128x64xbf16>, tensor<1x2x128x64xbf16>, tensor<4x255xf32>, f32) -> (tensor<1x4x128x64xbf16>, tensor<1x4x128xf32>)
func.func @relative_bias_window(%q: tensor<1x4x128x64xbf16>,
                                %k: tensor<1x2x128x64xbf16>,
                                %v: tensor<1x2x128x64xbf16>,
                                %table: tensor<4x255xf32>, %weight: f32)
    -> (tensor<1x4x128x64xbf16>, tensor<1x4x128xf32>) {
  %o, %lse = fa.attention %q, %k, %v captures(%table, %weight)
      {mask = #fa.mask<causal>}
      score_mod {
      ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index,
           %t: tensor<4x255xf32>, %w: f32):
        %c127 = arith.constant 127 : index
        %d = arith.subi %i, %j : index
        %at = arith.addi %d, %c127 : index
        %bias = tensor.extract %t[%h, %at] : tensor<4x255xf32>
        %wb = arith.mulf %bias, %w : f32
        %r = arith.addf %s, %wb : f32
        fa.yield %r : f32
      }
      mask_mod {
      ^bb0(%b: index, %h: index, %i: index, %j: index,
           %t: tensor<4x255xf32>, %w: f32):
        %c32 = arith.constant 32 : index
        %d = arith.subi %i, %j : index
        %near = arith.cmpi ult, %d, %c32 : index
        fa.yield %near : i1
      }
      : (tensor<1x4x128x64xbf16>, tensor<1x2x128x64xbf16>,
         tensor<1x2x128x64xbf16>, tensor<4x255xf32>, f32)
      -> (tensor<1x4x128x64xbf16>, tensor<1x4x128xf32>)
  return %o, %lse : tensor<1x4x128x64xbf16>, tensor<1x4x128xf32>
}

// CHECK-LABEL: func.func @softcap_as_score_mod_grad
// CHECK: fa.attention_grad %{{.*}} score_mod {
// CHECK: math.tanh
// CHECK: } : (
func.func @softcap_as_score_mod_grad(
    %q: tensor<1x2x64x32xf16>, %k: tensor<1x2x64x32xf16>,
    %v: tensor<1x2x64x32xf16>, %o: tensor<1x2x64x32xf16>,
    %do: tensor<1x2x64x32xf16>, %lse: tensor<1x2x64xf32>)
    -> (tensor<1x2x64x32xf16>, tensor<1x2x64x32xf16>, tensor<1x2x64x32xf16>) {
  %dq, %dk, %dv = fa.attention_grad %q, %k, %v, %o, %do, %lse
      score_mod {
      ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
        %cap = arith.constant 30.0 : f32
        %x = arith.divf %s, %cap : f32
        %t = math.tanh %x : f32
        %r = arith.mulf %t, %cap : f32
        fa.yield %r : f32
      }
      : (tensor<1x2x64x32xf16>, tensor<1x2x64x32xf16>, tensor<1x2x64x32xf16>,
         tensor<1x2x64x32xf16>, tensor<1x2x64x32xf16>, tensor<1x2x64xf32>)
      -> (tensor<1x2x64x32xf16>, tensor<1x2x64x32xf16>, tensor<1x2x64x32xf16>)
  return %dq, %dk, %dv
      : tensor<1x2x64x32xf16>, tensor<1x2x64x32xf16>, tensor<1x2x64x32xf16>
}

// CHECK-LABEL: func.func @tile_ops
// CHECK: fa.score_mod %{{.*}} at[%{{.*}}, %{{.*}}] in[%{{.*}}, %{{.*}}] head[%{{.*}}, %{{.*}}] {log2_domain} : tensor<16x8xf32> {
// CHECK: fa.mask_mod %{{.*}} at[%{{.*}}, %{{.*}}] in[%{{.*}}, %{{.*}}] head[%{{.*}}, %{{.*}}] captures(%{{.*}} : tensor<40xi32>) : tensor<16x8xf32> {
func.func @tile_ops(%s: tensor<16x8xf32>, %q0: index, %k0: index,
                    %b: index, %h: index, %docs: tensor<40xi32>)
    -> tensor<16x8xf32> {
  %m = arith.constant 30 : index
  %n = arith.constant 40 : index
  %r = fa.score_mod %s at [%q0, %k0] in [%m, %n] head [%b, %h] {log2_domain}
      : tensor<16x8xf32> {
  ^bb0(%x: f32, %bb: index, %hh: index, %i: index, %j: index):
    %two = arith.constant 2.0 : f32
    %y = arith.mulf %x, %two : f32
    fa.yield %y : f32
  }
  %t = fa.mask_mod %r at [%q0, %k0] in [%m, %n] head [%b, %h]
      captures(%docs : tensor<40xi32>) : tensor<16x8xf32> {
  ^bb0(%bb: index, %hh: index, %i: index, %j: index, %d: tensor<40xi32>):
    %di = tensor.extract %d[%i] : tensor<40xi32>
    %dj = tensor.extract %d[%j] : tensor<40xi32>
    %same = arith.cmpi eq, %di, %dj : i32
    fa.yield %same : i1
  }
  return %t : tensor<16x8xf32>
}
