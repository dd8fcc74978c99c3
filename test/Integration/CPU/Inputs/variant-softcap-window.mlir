// softcap 2 as a score_mod (tanh), times a captured scalar weight, with a
// sliding window of 8 keys plus 4 global prefix keys as a mask_mod; query
// 0 sees no key at all (its row must be O = 0). GQA 4:2, M = 37, N = 45.
func.func @softcap_window(%q: tensor<1x4x37x32xf16>, %k: tensor<1x2x45x32xf16>,
                          %v: tensor<1x2x45x32xf16>, %w: f32)
    -> tensor<1x4x37x32xf16> {
  %o = fa.attention %q, %k, %v captures(%w)
      score_mod {
      ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index, %x: f32):
        %cap = arith.constant 2.0 : f32
        %one = arith.constant 1.0 : f32
        %in = arith.divf %s, %cap : f32
        %t = math.tanh %in : f32
        %capped = arith.mulf %t, %cap : f32
        %weight = arith.addf %one, %x : f32
        %r = arith.mulf %capped, %weight : f32
        fa.yield %r : f32
      }
      mask_mod {
      ^bb0(%b: index, %h: index, %i: index, %j: index, %x: f32):
        %c0 = arith.constant 0 : index
        %c4 = arith.constant 4 : index
        %c8 = arith.constant 8 : index
        %d = arith.subi %i, %j : index
        %near = arith.cmpi ult, %d, %c8 : index
        %prefix = arith.cmpi ult, %j, %c4 : index
        %seen = arith.ori %near, %prefix : i1
        %first = arith.cmpi ne, %i, %c0 : index
        %visible = arith.andi %seen, %first : i1
        fa.yield %visible : i1
      }
      : (tensor<1x4x37x32xf16>, tensor<1x2x45x32xf16>, tensor<1x2x45x32xf16>,
         f32) -> tensor<1x4x37x32xf16>
  return %o : tensor<1x4x37x32xf16>
}
