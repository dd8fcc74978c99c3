// A per-head temperature read from a captured [H] table (exp of the value,
// so always positive) and a top-left causal mask_mod; the score_mod has
// exp on the score's path, so the backward's derivative is not constant.
// B 1, H 4, M = N = 33, f16.
func.func @temperature(%q: tensor<1x4x33x32xf16>, %k: tensor<1x4x33x32xf16>,
                       %v: tensor<1x4x33x32xf16>, %t: tensor<4xf32>)
    -> tensor<1x4x33x32xf16> {
  %o = fa.attention %q, %k, %v captures(%t)
      score_mod {
      ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index,
           %tt: tensor<4xf32>):
        %log = tensor.extract %tt[%h] : tensor<4xf32>
        %temp = math.exp %log : f32
        %r = arith.mulf %s, %temp : f32
        %quarter = arith.constant 0.25 : f32
        %sq = arith.mulf %s, %s : f32
        %damp = arith.mulf %sq, %quarter : f32
        %out = arith.subf %r, %damp : f32
        fa.yield %out : f32
      }
      mask_mod {
      ^bb0(%b: index, %h: index, %i: index, %j: index, %tt: tensor<4xf32>):
        %seen = arith.cmpi ule, %j, %i : index
        fa.yield %seen : i1
      }
      : (tensor<1x4x33x32xf16>, tensor<1x4x33x32xf16>, tensor<1x4x33x32xf16>,
         tensor<4xf32>) -> tensor<1x4x33x32xf16>
  return %o : tensor<1x4x33x32xf16>
}
