func.func @two_warps(%q: tensor<1x2x256x64xf16>, %k: tensor<1x2x256x64xf16>, %v: tensor<1x2x256x64xf16>)
    -> tensor<1x2x256x64xf16> {
  %o = fa.attention %q, %k, %v {tile = #fa.tile<block_m = 64, block_n = 64, stages = 2, warps = 2>}
      : (tensor<1x2x256x64xf16>, tensor<1x2x256x64xf16>, tensor<1x2x256x64xf16>) -> tensor<1x2x256x64xf16>
  return %o : tensor<1x2x256x64xf16>
}
