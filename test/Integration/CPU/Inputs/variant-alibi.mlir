// A variant whose fa.attention also has ALiBi slopes: fa-run's entries
// would not carry them, so the input is refused.
func.func @alibi_variant(%q: tensor<1x2x20x32xbf16>, %k: tensor<1x2x20x32xbf16>,
                         %v: tensor<1x2x20x32xbf16>, %slopes: tensor<2xf32>)
    -> tensor<1x2x20x32xbf16> {
  %o = fa.attention %q, %k, %v alibi(%slopes)
      mask_mod {
      ^bb0(%b: index, %h: index, %i: index, %j: index):
        %t = arith.constant true
        fa.yield %t : i1
      }
      : (tensor<1x2x20x32xbf16>, tensor<1x2x20x32xbf16>, tensor<1x2x20x32xbf16>,
         tensor<2xf32>) -> tensor<1x2x20x32xbf16>
  return %o : tensor<1x2x20x32xbf16>
}
