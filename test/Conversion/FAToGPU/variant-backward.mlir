// RUN: fa-opt %s --fa-recompute-backward --fa-gpu-distribute="chip=sm_80" --canonicalize --cse | FileCheck %s
// RUN: fa-opt %s --fa-to-ptx="chip=sm_80" | FileCheck %s --check-prefix=PTX
// RUN: fa-opt %s --fa-to-ptx="chip=sm_90a" | FileCheck %s --check-prefix=PTX

// The GPU backward of a variant. fa-recompute-backward differentiates the
// score_mod (a second fa.score_mod yields d(score_mod)/d(score)); the main
// kernel clones both and the mask_mod like the forward's: at the kernel's
// positions (its Q rows, the block's keys), batch and query head, the
// captured f32 temperature its trailing parameter. dS = dP-term times the
// derivative, where dS is not 0 (masked elements stay 0).
// CHECK-LABEL: gpu.func @bwd_main(
// CHECK-SAME: %[[T:arg[0-9]+]]: f32) kernel
// CHECK: %[[S:.*]] = fa.qk_scores
// CHECK: fa.score_mod %[[S]] at[%[[Q0:.*]], %[[K0:.*]]] in[%{{.*}}, %{{.*}}] head[%block_id_z, %[[H:.*]]] captures(%[[T]] : f32)
// CHECK: math.tanh
// CHECK: fa.mask_mod %{{.*}} at[%[[Q0]], %[[K0]]] {{.*}} head[%block_id_z, %[[H]]] captures(%[[T]] : f32)
// CHECK: %[[DP:.*]] = fa.softmax_grad
// CHECK: %[[D:.*]] = fa.score_mod %[[S]] at[%[[Q0]], %[[K0]]] {{.*}} captures(%[[T]] : f32)
// CHECK: arith.negf
// CHECK: fa.yield
// CHECK: %[[DS:.*]] = arith.mulf %[[DP]], %[[D]]
// CHECK: arith.cmpf oeq, %[[DP]]
// The kernels compile on both chips, the regions' math without libdevice.
// PTX: .entry bwd_main
// PTX-NOT: __nv_

func.func @bwd(%q: tensor<1x2x128x64xbf16>, %k: tensor<1x2x128x64xbf16>,
    %v: tensor<1x2x128x64xbf16>, %o: tensor<1x2x128x64xbf16>,
    %do: tensor<1x2x128x64xbf16>, %lse: tensor<1x2x128xf32>, %t: f32)
    -> (tensor<1x2x128x64xbf16>, tensor<1x2x128x64xbf16>, tensor<1x2x128x64xbf16>) {
  %dq, %dk, %dv = fa.attention_grad %q, %k, %v, %o, %do, %lse captures(%t)
      {tile = #fa.tile<block_m = 64, block_n = 64, stages = 2, warps = 4>}
      score_mod {
      ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index, %tt: f32):
        %x = arith.divf %s, %tt : f32
        %y = math.tanh %x : f32
        %z = arith.mulf %y, %tt : f32
        fa.yield %z : f32
      }
      mask_mod {
      ^bb0(%b: index, %h: index, %i: index, %j: index, %tt: f32):
        %c = arith.cmpi ule, %j, %i : index
        fa.yield %c : i1
      }
      : (tensor<1x2x128x64xbf16>, tensor<1x2x128x64xbf16>, tensor<1x2x128x64xbf16>,
         tensor<1x2x128x64xbf16>, tensor<1x2x128x64xbf16>, tensor<1x2x128xf32>, f32)
      -> (tensor<1x2x128x64xbf16>, tensor<1x2x128x64xbf16>, tensor<1x2x128x64xbf16>)
  return %dq, %dk, %dv : tensor<1x2x128x64xbf16>, tensor<1x2x128x64xbf16>, tensor<1x2x128x64xbf16>
}
