// ALiBi written as a score_mod over captured per-head slopes (bottom-right
// aligned like the built-in: -slope[h] * |i + N - M - j|) with a prefix-LM
// mask_mod: the first 12 keys are seen by every query, the rest causally.
// B 2, H 3, M 29, N 40, bf16.
func.func @alibi_prefix(%q: tensor<2x3x29x32xbf16>, %k: tensor<2x3x40x32xbf16>,
                        %v: tensor<2x3x40x32xbf16>, %slopes: tensor<3xf32>)
    -> tensor<2x3x29x32xbf16> {
  %o = fa.attention %q, %k, %v captures(%slopes)
      score_mod {
      ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index,
           %sl: tensor<3xf32>):
        %c11 = arith.constant 11 : index
        %shift = arith.addi %i, %c11 : index
        %d = arith.subi %shift, %j : index
        %di = arith.index_cast %d : index to i64
        %df = arith.sitofp %di : i64 to f32
        %dist = math.absf %df : f32
        %slope = tensor.extract %sl[%h] : tensor<3xf32>
        %bias = arith.mulf %slope, %dist : f32
        %r = arith.subf %s, %bias : f32
        fa.yield %r : f32
      }
      mask_mod {
      ^bb0(%b: index, %h: index, %i: index, %j: index, %sl: tensor<3xf32>):
        %c11 = arith.constant 11 : index
        %c12 = arith.constant 12 : index
        %prefix = arith.cmpi ult, %j, %c12 : index
        %shift = arith.addi %i, %c11 : index
        %causal = arith.cmpi ule, %j, %shift : index
        %seen = arith.ori %prefix, %causal : i1
        fa.yield %seen : i1
      }
      : (tensor<2x3x29x32xbf16>, tensor<2x3x40x32xbf16>, tensor<2x3x40x32xbf16>,
         tensor<3xf32>) -> tensor<2x3x29x32xbf16>
  return %o : tensor<2x3x29x32xbf16>
}
