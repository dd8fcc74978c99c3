// Hq = 6 query heads cannot share Hkv = 4 key/value heads evenly.
func.func @attention(%q: tensor<1x6x128x64xf16>, %k: tensor<1x4x128x64xf16>,
                     %v: tensor<1x4x128x64xf16>) -> tensor<1x6x128x64xf16> {
  %o = fa.attention %q, %k, %v
      : (tensor<1x6x128x64xf16>, tensor<1x4x128x64xf16>, tensor<1x4x128x64xf16>)
      -> tensor<1x6x128x64xf16>
  return %o : tensor<1x6x128x64xf16>
}
