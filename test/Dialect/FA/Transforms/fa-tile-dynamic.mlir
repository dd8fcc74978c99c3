// A problem the tiling passes cannot size is refused with one diagnostic on
// the op, whichever of its tensors leaves a size open: Q, K, V, or (on the
// backward) O, dO or LSE alone.
// RUN: fa-opt %s --split-input-file --verify-diagnostics --fa-tile --fa-recompute-backward

func.func @attention$dynamic_value(%q: tensor<1x2x64x64xbf16>, %k: tensor<1x2x64x64xbf16>,
                                   %v: tensor<?x2x64x64xbf16>) -> tensor<1x2x64x64xbf16> {
  // expected-error @+2 {{'fa.attention' op needs static shapes to be tiled; specialise the problem size first}}
  // expected-error @+1 {{'fa.attention' op cannot be tiled}}
  %o = fa.attention %q, %k, %v
      : (tensor<1x2x64x64xbf16>, tensor<1x2x64x64xbf16>, tensor<?x2x64x64xbf16>) -> tensor<1x2x64x64xbf16>
  return %o : tensor<1x2x64x64xbf16>
}

// -----

func.func @attention_grad$dynamic_output(%q: tensor<1x2x64x64xf16>, %k: tensor<1x2x64x64xf16>,
    %v: tensor<1x2x64x64xf16>, %o: tensor<?x2x?x64xf16>, %do: tensor<1x2x64x64xf16>,
    %lse: tensor<1x2x64xf32>) -> tensor<1x2x64x64xf16> {
  // expected-error @+2 {{'fa.attention_grad' op needs static shapes to be tiled; specialise the problem size first}}
  // expected-error @+1 {{'fa.attention_grad' op cannot be rewritten by fa-recompute-backward}}
  %dq, %dk, %dv = fa.attention_grad %q, %k, %v, %o, %do, %lse
      : (tensor<1x2x64x64xf16>, tensor<1x2x64x64xf16>, tensor<1x2x64x64xf16>, tensor<?x2x?x64xf16>,
         tensor<1x2x64x64xf16>, tensor<1x2x64xf32>)
      -> (tensor<1x2x64x64xf16>, tensor<1x2x64x64xf16>, tensor<1x2x64x64xf16>)
  return %dq : tensor<1x2x64x64xf16>
}

// -----

func.func @attention_grad$dynamic_lse(%q: tensor<1x2x64x64xf16>, %k: tensor<1x2x64x64xf16>,
    %v: tensor<1x2x64x64xf16>, %o: tensor<1x2x64x64xf16>, %do: tensor<1x2x64x64xf16>,
    %lse: tensor<?x2x64xf32>) -> tensor<1x2x64x64xf16> {
  // expected-error @+2 {{'fa.attention_grad' op needs static shapes to be tiled; specialise the problem size first}}
  // expected-error @+1 {{'fa.attention_grad' op cannot be rewritten by fa-recompute-backward}}
  %dq, %dk, %dv = fa.attention_grad %q, %k, %v, %o, %do, %lse
      : (tensor<1x2x64x64xf16>, tensor<1x2x64x64xf16>, tensor<1x2x64x64xf16>, tensor<1x2x64x64xf16>,
         tensor<1x2x64x64xf16>, tensor<?x2x64xf32>)
      -> (tensor<1x2x64x64xf16>, tensor<1x2x64x64xf16>, tensor<1x2x64x64xf16>)
  return %dq : tensor<1x2x64x64xf16>
}
