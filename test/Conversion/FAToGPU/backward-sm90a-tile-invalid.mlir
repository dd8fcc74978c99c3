// RUN: not fa-opt %s --fa-recompute-backward --fa-gpu-distribute="chip=sm_90a" 2>&1 | FileCheck %s
// A tile the sm_90a backward builds, with warps it does not: the message
// names both (the tile alone where the tile is not one it builds).
// CHECK: error: sm_90a: the sm_90a backward takes block_m x block_n (warps) {{.*}}, got 64 x 128 with 4 warps{{$}}
func.func @grad(%q: tensor<1x2x128x64xbf16>, %k: tensor<1x1x128x64xbf16>, %v: tensor<1x1x128x64xbf16>,
                %o: tensor<1x2x128x64xbf16>, %do: tensor<1x2x128x64xbf16>, %lse: tensor<1x2x128xf32>)
    -> (tensor<1x2x128x64xbf16>, tensor<1x1x128x64xbf16>, tensor<1x1x128x64xbf16>) {
  %dq, %dk, %dv = fa.attention_grad %q, %k, %v, %o, %do, %lse
      {tile = #fa.tile<block_m = 64, block_n = 128, stages = 2, warps = 4>}
      : (tensor<1x2x128x64xbf16>, tensor<1x1x128x64xbf16>, tensor<1x1x128x64xbf16>,
         tensor<1x2x128x64xbf16>, tensor<1x2x128x64xbf16>, tensor<1x2x128xf32>)
      -> (tensor<1x2x128x64xbf16>, tensor<1x1x128x64xbf16>, tensor<1x1x128x64xbf16>)
  return %dq, %dk, %dv : tensor<1x2x128x64xbf16>, tensor<1x1x128x64xbf16>, tensor<1x1x128x64xbf16>
}
