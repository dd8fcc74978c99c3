// A GQA, causal, bf16 attention forward with its log-sum-exp: 8 query heads
// share 2 key/value heads; M = 113 queries attend to N = 203 keys.
func.func @attention(%q: tensor<2x8x113x64xbf16>, %k: tensor<2x2x203x64xbf16>,
                     %v: tensor<2x2x203x64xbf16>)
    -> (tensor<2x8x113x64xbf16>, tensor<2x8x113xf32>) {
  %o, %lse = fa.attention %q, %k, %v
      {mask = #fa.mask<causal>,
       tile = #fa.tile<block_m = 64, block_n = 64, stages = 2, warps = 4>}
      : (tensor<2x8x113x64xbf16>, tensor<2x2x203x64xbf16>, tensor<2x2x203x64xbf16>)
      -> (tensor<2x8x113x64xbf16>, tensor<2x8x113xf32>)
  return %o, %lse : tensor<2x8x113x64xbf16>, tensor<2x8x113xf32>
}
