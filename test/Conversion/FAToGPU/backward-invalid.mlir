// RUN: fa-opt %s --split-input-file --verify-diagnostics --fa-recompute-backward --fa-gpu-distribute="chip=sm_80"
// RUN: not fa-opt %s --split-input-file --fa-recompute-backward --fa-gpu-distribute="chip=sm_90a" 2>&1 | FileCheck %s --check-prefix=SM90
// RUN: not fa-opt %s --split-input-file --fa-gpu-distribute="chip=sm_80" 2>&1 | FileCheck %s --check-prefix=UNTILED

// What the GPU backward cannot build is said once, on the function.
// SM90: error: sm_90a: above D = 128 the sm_90a backward splits dK's and dV's head dims over two warpgroups: block_m x block_n 64 x 64 with 8 warps, got 64 x 64 (4)
// UNTILED: error: fa-gpu-distribute: run fa-recompute-backward first

// expected-error @+1 {{sm_80: the sm_80 backward takes D and Dv up to 128, or D = 256 with Dv = 128 or 256, got D=256 Dv=64}}
func.func @grad_dv64(%q: tensor<1x1x64x256xf16>, %k: tensor<1x1x64x256xf16>, %v: tensor<1x1x64x64xf16>,
                     %o: tensor<1x1x64x64xf16>, %do: tensor<1x1x64x64xf16>, %lse: tensor<1x1x64xf32>)
    -> (tensor<1x1x64x256xf16>, tensor<1x1x64x256xf16>, tensor<1x1x64x64xf16>) {
  %dq, %dk, %dv = fa.attention_grad %q, %k, %v, %o, %do, %lse
      : (tensor<1x1x64x256xf16>, tensor<1x1x64x256xf16>, tensor<1x1x64x64xf16>,
         tensor<1x1x64x64xf16>, tensor<1x1x64x64xf16>, tensor<1x1x64xf32>)
      -> (tensor<1x1x64x256xf16>, tensor<1x1x64x256xf16>, tensor<1x1x64x64xf16>)
  return %dq, %dk, %dv : tensor<1x1x64x256xf16>, tensor<1x1x64x256xf16>, tensor<1x1x64x64xf16>
}
