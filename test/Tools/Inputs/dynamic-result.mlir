// A result with a dynamic dimension where Q, K and V give it statically
// (bad-input-tools.test).
func.func @f(%q: tensor<1x2x64x64xbf16>, %k: tensor<1x2x64x64xbf16>, %v: tensor<1x2x64x64xbf16>)
    -> (tensor<?x2x64x64xbf16>, tensor<1x2x64xf32>) {
  %o, %lse = fa.attention %q, %k, %v
      : (tensor<1x2x64x64xbf16>, tensor<1x2x64x64xbf16>, tensor<1x2x64x64xbf16>)
      -> (tensor<?x2x64x64xbf16>, tensor<1x2x64xf32>)
  return %o, %lse : tensor<?x2x64x64xbf16>, tensor<1x2x64xf32>
}
