// The sm_90a backward's consumers run the Q blocks that see every key of
// K_j in a loop of their own (the splits_unmasked_query_blocks knob;
// MaskUtils: buildUnmaskedQueryRange), the transpose of the forward's
// unmasked KV tiles: under a window with a left edge, the diagonal's Q
// blocks masked, then the unmasked ones, then those past the left edge
// masked, each loop carrying (dK_j, dV_j) on from the one before.
// RUN: fa-opt %s --fa-recompute-backward --fa-gpu-distribute="chip=sm_90a" --canonicalize --cse | FileCheck %s
// CHECK-LABEL: gpu.func @window_d256_main
// The range in Q blocks from the member's first visible one: the first
// rounded up, the end down.
// CHECK: arith.ceildivsi
// CHECK: arith.floordivsi
// CHECK: %[[FIRST:[^:]+]]:2 = scf.for %{{[^ ]+}} = %c0 to %[[B:[^ ]+]] step %c1 iter_args(%{{[^ ]+}} = %{{[^ ]+}}, %{{[^ ]+}} = %{{[^ ]+}})
// CHECK: fa.apply_mask
// CHECK: scf.yield
// CHECK: %[[MID:[^:]+]]:2 = scf.for %{{[^ ]+}} = %[[B]] to %[[E:[^ ]+]] step %c1 iter_args(%{{[^ ]+}} = %[[FIRST]]#0, %{{[^ ]+}} = %[[FIRST]]#1)
// CHECK-NOT: fa.apply_mask
// CHECK: scf.yield
// CHECK: scf.for %{{[^ ]+}} = %[[E]] to %{{[^ ]+}} step %c1 iter_args(%{{[^ ]+}} = %[[MID]]#0, %{{[^ ]+}} = %[[MID]]#1)
// CHECK: fa.apply_mask
// CHECK: scf.yield

// Only where it measured faster (D = 256): the D128 causal kernel keeps
// one Q-block loop per member, every step masked.
// RUN: fa-opt %s --fa-recompute-backward --fa-gpu-distribute="chip=sm_90a" --canonicalize --cse | FileCheck %s --check-prefix=D128
// D128-LABEL: gpu.func @causal_d128_main
// D128: fa.apply_mask
// D128-NOT: fa.apply_mask
// D128: gpu.return
func.func @window_d256(%q: tensor<1x2x1024x256xbf16>, %k: tensor<1x2x1024x256xbf16>, %v: tensor<1x2x1024x256xbf16>,
                %o: tensor<1x2x1024x256xbf16>, %do: tensor<1x2x1024x256xbf16>, %lse: tensor<1x2x1024xf32>)
    -> (tensor<1x2x1024x256xbf16>, tensor<1x2x1024x256xbf16>, tensor<1x2x1024x256xbf16>) {
  %dq, %dk, %dv = fa.attention_grad %q, %k, %v, %o, %do, %lse
      {mask = #fa.mask<window(256, 0)>, tile = #fa.tile<block_m = 64, block_n = 64, stages = 2, warps = 8>}
      : (tensor<1x2x1024x256xbf16>, tensor<1x2x1024x256xbf16>, tensor<1x2x1024x256xbf16>,
         tensor<1x2x1024x256xbf16>, tensor<1x2x1024x256xbf16>, tensor<1x2x1024xf32>)
      -> (tensor<1x2x1024x256xbf16>, tensor<1x2x1024x256xbf16>, tensor<1x2x1024x256xbf16>)
  return %dq, %dk, %dv : tensor<1x2x1024x256xbf16>, tensor<1x2x1024x256xbf16>, tensor<1x2x1024x256xbf16>
}

func.func @causal_d128(%q: tensor<1x2x1024x128xbf16>, %k: tensor<1x2x1024x128xbf16>, %v: tensor<1x2x1024x128xbf16>,
                %o: tensor<1x2x1024x128xbf16>, %do: tensor<1x2x1024x128xbf16>, %lse: tensor<1x2x1024xf32>)
    -> (tensor<1x2x1024x128xbf16>, tensor<1x2x1024x128xbf16>, tensor<1x2x1024x128xbf16>) {
  %dq, %dk, %dv = fa.attention_grad %q, %k, %v, %o, %do, %lse
      {mask = #fa.mask<causal>, tile = #fa.tile<block_m = 64, block_n = 128, stages = 2, warps = 8>}
      : (tensor<1x2x1024x128xbf16>, tensor<1x2x1024x128xbf16>, tensor<1x2x1024x128xbf16>,
         tensor<1x2x1024x128xbf16>, tensor<1x2x1024x128xbf16>, tensor<1x2x1024xf32>)
      -> (tensor<1x2x1024x128xbf16>, tensor<1x2x1024x128xbf16>, tensor<1x2x1024x128xbf16>)
  return %dq, %dk, %dv : tensor<1x2x1024x128xbf16>, tensor<1x2x1024x128xbf16>, tensor<1x2x1024x128xbf16>
}
