// RUN: fa-opt %s --split-input-file --fa-recompute-backward="block-m=64 block-n=64" --fa-gpu-distribute="chip=sm_80" | FileCheck %s
// RUN: fa-opt %s --split-input-file --fa-recompute-backward="block-m=64 block-n=64" --fa-gpu-distribute="chip=sm_90a" | FileCheck %s

// The backward holds S as q·k (its layout's deferredScale: the scale folds
// into the exponent's FFMA) only where the mask and fa.exp_shifted alone
// read it (BackwardMath::findUnscaledScores, scoresHeldUnscaled).

// Causal: held.
// CHECK-LABEL: gpu.func @plain_main
// CHECK: fa.qk_scores {{.*}} -> tensor<64x64xf32, #fa.fragment<{{.*}}deferredScale = 1.250000e-01 : f32{{.*}}>>
func.func @plain(%q: tensor<1x2x96x64xbf16>, %k: tensor<1x2x80x64xbf16>, %v: tensor<1x2x80x64xbf16>,
                 %o: tensor<1x2x96x64xbf16>, %do: tensor<1x2x96x64xbf16>, %lse: tensor<1x2x96xf32>)
    -> (tensor<1x2x96x64xbf16>, tensor<1x2x80x64xbf16>, tensor<1x2x80x64xbf16>) {
  %dq, %dk, %dv = fa.attention_grad %q, %k, %v, %o, %do, %lse {mask = #fa.mask<causal>}
      : (tensor<1x2x96x64xbf16>, tensor<1x2x80x64xbf16>, tensor<1x2x80x64xbf16>,
         tensor<1x2x96x64xbf16>, tensor<1x2x96x64xbf16>, tensor<1x2x96xf32>)
      -> (tensor<1x2x96x64xbf16>, tensor<1x2x80x64xbf16>, tensor<1x2x80x64xbf16>)
  return %dq, %dk, %dv : tensor<1x2x96x64xbf16>, tensor<1x2x80x64xbf16>, tensor<1x2x80x64xbf16>
}

// -----

// Softcapped: the softcap's gradient reads S, so S holds its scaled value.
// CHECK-LABEL: gpu.func @capped_main
// CHECK: fa.qk_scores {{.*}} softcap = 2.000000e+01 : f32
// CHECK-NOT: deferredScale
// CHECK: fa.softcap_grad
func.func @capped(%q: tensor<1x2x96x64xbf16>, %k: tensor<1x2x80x64xbf16>, %v: tensor<1x2x80x64xbf16>,
                  %o: tensor<1x2x96x64xbf16>, %do: tensor<1x2x96x64xbf16>, %lse: tensor<1x2x96xf32>)
    -> (tensor<1x2x96x64xbf16>, tensor<1x2x80x64xbf16>, tensor<1x2x80x64xbf16>) {
  %dq, %dk, %dv = fa.attention_grad %q, %k, %v, %o, %do, %lse {mask = #fa.mask<causal>, softcap = 20.0 : f32}
      : (tensor<1x2x96x64xbf16>, tensor<1x2x80x64xbf16>, tensor<1x2x80x64xbf16>,
         tensor<1x2x96x64xbf16>, tensor<1x2x96x64xbf16>, tensor<1x2x96xf32>)
      -> (tensor<1x2x96x64xbf16>, tensor<1x2x80x64xbf16>, tensor<1x2x80x64xbf16>)
  return %dq, %dk, %dv : tensor<1x2x96x64xbf16>, tensor<1x2x80x64xbf16>, tensor<1x2x80x64xbf16>
}
