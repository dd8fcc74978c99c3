// A function name that is not a PTX identifier: refused before LLVM would
// abort on it ("Symbol name with unsupported characters").
func.func @"a-b"(%q: tensor<1x1x128x64xbf16>, %k: tensor<1x1x128x64xbf16>, %v: tensor<1x1x128x64xbf16>)
    -> (tensor<1x1x128x64xbf16>, tensor<1x1x128xf32>) {
  %o, %lse = fa.attention %q, %k, %v
      : (tensor<1x1x128x64xbf16>, tensor<1x1x128x64xbf16>, tensor<1x1x128x64xbf16>)
      -> (tensor<1x1x128x64xbf16>, tensor<1x1x128xf32>)
  return %o, %lse : tensor<1x1x128x64xbf16>, tensor<1x1x128xf32>
}
