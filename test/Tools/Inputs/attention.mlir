func.func @my_attention(%q: tensor<1x4x256x64xbf16>, %k: tensor<1x2x256x64xbf16>, %v: tensor<1x2x256x64xbf16>)
    -> (tensor<1x4x256x64xbf16>, tensor<1x4x256xf32>) {
  %o, %lse = fa.attention %q, %k, %v {mask = #fa.mask<causal>}
      : (tensor<1x4x256x64xbf16>, tensor<1x2x256x64xbf16>, tensor<1x2x256x64xbf16>)
      -> (tensor<1x4x256x64xbf16>, tensor<1x4x256xf32>)
  return %o, %lse : tensor<1x4x256x64xbf16>, tensor<1x4x256xf32>
}
