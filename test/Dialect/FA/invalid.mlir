// RUN: fa-opt %s -split-input-file -verify-diagnostics

// Rank mismatch: Q must be [B, Hq, M, D].
func.func @attention$rank_mismatch(%q: tensor<4x128x64xf16>, %k: tensor<1x4x128x64xf16>,
                                   %v: tensor<1x4x128x64xf16>) {
  // expected-error @+1 {{'fa.attention' op query must have rank 4 [B, Hq, M, D], but has rank 3}}
  %o = fa.attention %q, %k, %v
      : (tensor<4x128x64xf16>, tensor<1x4x128x64xf16>, tensor<1x4x128x64xf16>) -> tensor<1x4x128x64xf16>
  return
}

// -----

func.func @attention$value_rank_mismatch(%q: tensor<1x4x128x64xf16>, %k: tensor<1x4x128x64xf16>,
                                         %v: tensor<1x4x128x64x1xf16>) {
  // expected-error @+1 {{'fa.attention' op value must have rank 4 [B, Hkv, N, Dv], but has rank 5}}
  %o = fa.attention %q, %k, %v
      : (tensor<1x4x128x64xf16>, tensor<1x4x128x64xf16>, tensor<1x4x128x64x1xf16>) -> tensor<1x4x128x64xf16>
  return
}

// -----

// D of Q differs from D of K.
func.func @attention$head_dim_mismatch(%q: tensor<1x4x128x64xf16>, %k: tensor<1x4x128x32xf16>,
                                       %v: tensor<1x4x128x64xf16>) {
  // expected-error @+1 {{'fa.attention' op D of key (32) does not match D of query (64)}}
  %o = fa.attention %q, %k, %v
      : (tensor<1x4x128x64xf16>, tensor<1x4x128x32xf16>, tensor<1x4x128x64xf16>) -> tensor<1x4x128x64xf16>
  return
}

// -----

// N of K differs from N of V.
func.func @attention$kv_len_mismatch(%q: tensor<1x4x128x64xf16>, %k: tensor<1x4x256x64xf16>,
                                     %v: tensor<1x4x255x64xf16>) {
  // expected-error @+1 {{'fa.attention' op N of value (255) does not match N of key (256)}}
  %o = fa.attention %q, %k, %v
      : (tensor<1x4x128x64xf16>, tensor<1x4x256x64xf16>, tensor<1x4x255x64xf16>) -> tensor<1x4x128x64xf16>
  return
}

// -----

// Hq is not a multiple of Hkv.
func.func @attention$heads_not_multiple(%q: tensor<1x6x128x64xf16>, %k: tensor<1x4x128x64xf16>,
                                        %v: tensor<1x4x128x64xf16>) {
  // expected-error @+1 {{'fa.attention' op Hq of query (6) is not a multiple of Hkv of key (4)}}
  %o = fa.attention %q, %k, %v
      : (tensor<1x6x128x64xf16>, tensor<1x4x128x64xf16>, tensor<1x4x128x64xf16>) -> tensor<1x6x128x64xf16>
  return
}

// -----

// K and V disagree on Hkv.
func.func @attention$kv_heads_mismatch(%q: tensor<1x4x128x64xf16>, %k: tensor<1x2x128x64xf16>,
                                       %v: tensor<1x4x128x64xf16>) {
  // expected-error @+1 {{'fa.attention' op Hkv of value (4) does not match Hkv of key (2)}}
  %o = fa.attention %q, %k, %v
      : (tensor<1x4x128x64xf16>, tensor<1x2x128x64xf16>, tensor<1x4x128x64xf16>) -> tensor<1x4x128x64xf16>
  return
}

// -----

// B mismatch.
func.func @attention$batch_mismatch(%q: tensor<2x4x128x64xf16>, %k: tensor<1x4x128x64xf16>,
                                    %v: tensor<1x4x128x64xf16>) {
  // expected-error @+1 {{'fa.attention' op B of key (1) does not match B of query (2)}}
  %o = fa.attention %q, %k, %v
      : (tensor<2x4x128x64xf16>, tensor<1x4x128x64xf16>, tensor<1x4x128x64xf16>) -> tensor<2x4x128x64xf16>
  return
}

// -----

// Mixed element types.
func.func @attention$mixed_element_types(%q: tensor<1x4x128x64xbf16>, %k: tensor<1x4x128x64xf16>,
                                         %v: tensor<1x4x128x64xbf16>) {
  // expected-error @+1 {{'fa.attention' op element type of key ('f16') does not match element type of query ('bf16')}}
  %o = fa.attention %q, %k, %v
      : (tensor<1x4x128x64xbf16>, tensor<1x4x128x64xf16>, tensor<1x4x128x64xbf16>) -> tensor<1x4x128x64xbf16>
  return
}

// -----

// An unsupported element type.
func.func @attention$unsupported_element_type(%q: tensor<1x4x128x64xf32>, %k: tensor<1x4x128x64xf32>,
                                              %v: tensor<1x4x128x64xf32>) {
  // expected-error @+1 {{'fa.attention' op element type of query ('f32') is not supported; expected f16, bf16 or f8E4M3FN}}
  %o = fa.attention %q, %k, %v
      : (tensor<1x4x128x64xf32>, tensor<1x4x128x64xf32>, tensor<1x4x128x64xf32>) -> tensor<1x4x128x64xf32>
  return
}

// -----

// Dv of O wrong.
func.func @attention$output_dv_wrong(%q: tensor<1x4x128x64xf16>, %k: tensor<1x4x128x64xf16>,
                                     %v: tensor<1x4x128x96xf16>) {
  // expected-error @+1 {{'fa.attention' op Dv of output (64) does not match Dv of value (96)}}
  %o = fa.attention %q, %k, %v
      : (tensor<1x4x128x64xf16>, tensor<1x4x128x64xf16>, tensor<1x4x128x96xf16>) -> tensor<1x4x128x64xf16>
  return
}

// -----

// M of O wrong.
func.func @attention$output_m_wrong(%q: tensor<1x4x128x64xf16>, %k: tensor<1x4x128x64xf16>,
                                    %v: tensor<1x4x128x64xf16>) {
  // expected-error @+1 {{'fa.attention' op M of output (127) does not match M of query (128)}}
  %o = fa.attention %q, %k, %v
      : (tensor<1x4x128x64xf16>, tensor<1x4x128x64xf16>, tensor<1x4x128x64xf16>) -> tensor<1x4x127x64xf16>
  return
}

// -----

// O must have the input element type.
func.func @attention$output_element_type(%q: tensor<1x4x128x64xf16>, %k: tensor<1x4x128x64xf16>,
                                         %v: tensor<1x4x128x64xf16>) {
  // expected-error @+1 {{'fa.attention' op element type of output ('f32') must be 'f16' (the input element type)}}
  %o = fa.attention %q, %k, %v
      : (tensor<1x4x128x64xf16>, tensor<1x4x128x64xf16>, tensor<1x4x128x64xf16>) -> tensor<1x4x128x64xf32>
  return
}

// -----

// LSE of the wrong shape.
func.func @attention$lse_wrong_shape(%q: tensor<1x4x128x64xf16>, %k: tensor<1x4x128x64xf16>,
                                     %v: tensor<1x4x128x64xf16>) {
  // expected-error @+1 {{'fa.attention' op M of lse (64) does not match M of query (128)}}
  %o, %lse = fa.attention %q, %k, %v
      : (tensor<1x4x128x64xf16>, tensor<1x4x128x64xf16>, tensor<1x4x128x64xf16>)
      -> (tensor<1x4x128x64xf16>, tensor<1x4x64xf32>)
  return
}

// -----

func.func @attention$lse_wrong_rank(%q: tensor<1x4x128x64xf16>, %k: tensor<1x4x128x64xf16>,
                                    %v: tensor<1x4x128x64xf16>) {
  // expected-error @+1 {{'fa.attention' op lse must have rank 3 [B, Hq, M], but has rank 4}}
  %o, %lse = fa.attention %q, %k, %v
      : (tensor<1x4x128x64xf16>, tensor<1x4x128x64xf16>, tensor<1x4x128x64xf16>)
      -> (tensor<1x4x128x64xf16>, tensor<1x4x128x1xf32>)
  return
}

// -----

// LSE of the wrong type.
func.func @attention$lse_wrong_type(%q: tensor<1x4x128x64xf16>, %k: tensor<1x4x128x64xf16>,
                                    %v: tensor<1x4x128x64xf16>) {
  // expected-error @+1 {{'fa.attention' op element type of lse ('f16') must be f32}}
  %o, %lse = fa.attention %q, %k, %v
      : (tensor<1x4x128x64xf16>, tensor<1x4x128x64xf16>, tensor<1x4x128x64xf16>)
      -> (tensor<1x4x128x64xf16>, tensor<1x4x128xf16>)
  return
}

// -----

func.func @attention$window_left_below_minus_one(%q: tensor<1x4x128x64xf16>, %k: tensor<1x4x128x64xf16>,
                                                 %v: tensor<1x4x128x64xf16>) {
  // expected-error @+1 {{window left bound must be -1 (unbounded) or >= 0, but is -2}}
  %o = fa.attention %q, %k, %v {mask = #fa.mask<window(-2, 0)>}
      : (tensor<1x4x128x64xf16>, tensor<1x4x128x64xf16>, tensor<1x4x128x64xf16>) -> tensor<1x4x128x64xf16>
  return
}

// -----

func.func @attention$window_right_below_minus_one(%q: tensor<1x4x128x64xf16>, %k: tensor<1x4x128x64xf16>,
                                                  %v: tensor<1x4x128x64xf16>) {
  // expected-error @+1 {{window right bound must be -1 (unbounded) or >= 0, but is -7}}
  %o = fa.attention %q, %k, %v {mask = #fa.mask<window(16, -7)>}
      : (tensor<1x4x128x64xf16>, tensor<1x4x128x64xf16>, tensor<1x4x128x64xf16>) -> tensor<1x4x128x64xf16>
  return
}

// -----

func.func @attention$unknown_mask_kind(%q: tensor<1x4x128x64xf16>, %k: tensor<1x4x128x64xf16>,
                                       %v: tensor<1x4x128x64xf16>) {
  // expected-error @+1 {{unknown mask kind 'sliding'; expected none, causal, causal_top_left or window(left, right)}}
  %o = fa.attention %q, %k, %v {mask = #fa.mask<sliding>}
      : (tensor<1x4x128x64xf16>, tensor<1x4x128x64xf16>, tensor<1x4x128x64xf16>) -> tensor<1x4x128x64xf16>
  return
}

// -----

func.func @attention$negative_softcap(%q: tensor<1x4x128x64xf16>, %k: tensor<1x4x128x64xf16>,
                                      %v: tensor<1x4x128x64xf16>) {
  // expected-error @+1 {{'fa.attention' op softcap must be 0 (off) or in [0.001, 1e+06], but is -1}}
  %o = fa.attention %q, %k, %v {softcap = -1.0 : f32}
      : (tensor<1x4x128x64xf16>, tensor<1x4x128x64xf16>, tensor<1x4x128x64xf16>) -> tensor<1x4x128x64xf16>
  return
}

// -----

func.func @attention$infinite_scale(%q: tensor<1x4x128x64xf16>, %k: tensor<1x4x128x64xf16>,
                                    %v: tensor<1x4x128x64xf16>) {
  // expected-error @+1 {{'fa.attention' op scale must be finite with |scale| in [1e-06, 1e+06], but is inf}}
  %o = fa.attention %q, %k, %v {scale = 0x7F800000 : f32}
      : (tensor<1x4x128x64xf16>, tensor<1x4x128x64xf16>, tensor<1x4x128x64xf16>) -> tensor<1x4x128x64xf16>
  return
}

// -----

func.func @attention$nan_scale(%q: tensor<1x4x128x64xf16>, %k: tensor<1x4x128x64xf16>,
                               %v: tensor<1x4x128x64xf16>) {
  // expected-error @+1 {{'fa.attention' op scale must be finite with |scale| in [1e-06, 1e+06], but is nan}}
  %o = fa.attention %q, %k, %v {scale = 0x7FC00000 : f32}
      : (tensor<1x4x128x64xf16>, tensor<1x4x128x64xf16>, tensor<1x4x128x64xf16>) -> tensor<1x4x128x64xf16>
  return
}

// -----

func.func @attention$fp8_without_descale(%q: tensor<1x4x128x64xf8E4M3FN>, %k: tensor<1x4x128x64xf8E4M3FN>,
                                         %v: tensor<1x4x128x64xf8E4M3FN>) {
  // expected-error @+1 {{'fa.attention' op f8E4M3FN inputs need 3 descale factors (query, key, value), but got 0}}
  %o = fa.attention %q, %k, %v
      : (tensor<1x4x128x64xf8E4M3FN>, tensor<1x4x128x64xf8E4M3FN>, tensor<1x4x128x64xf8E4M3FN>) -> tensor<1x4x128x64xbf16>
  return
}

// -----

func.func @attention$descale_on_bf16(%q: tensor<1x4x128x64xbf16>, %k: tensor<1x4x128x64xbf16>,
                                     %v: tensor<1x4x128x64xbf16>, %s: f32) {
  // expected-error @+1 {{'fa.attention' op descale factors are only for f8E4M3FN inputs, but the inputs are 'bf16'}}
  %o = fa.attention %q, %k, %v descale(%s, %s, %s)
      : (tensor<1x4x128x64xbf16>, tensor<1x4x128x64xbf16>, tensor<1x4x128x64xbf16>, f32, f32, f32) -> tensor<1x4x128x64xbf16>
  return
}

// -----

func.func @attention$fp8_mixed_descales(%q: tensor<2x4x128x64xf8E4M3FN>, %k: tensor<2x2x128x64xf8E4M3FN>,
                                       %v: tensor<2x2x128x64xf8E4M3FN>, %s: f32, %h: tensor<2x2xf32>) {
  // expected-error @+1 {{'fa.attention' op descale factors must be all f32 scalars (per tensor) or all [B, Hkv] tensors (per head), but the key's is 'tensor<2x2xf32>'}}
  %o = fa.attention %q, %k, %v descale(%s, %h, %s)
      : (tensor<2x4x128x64xf8E4M3FN>, tensor<2x2x128x64xf8E4M3FN>, tensor<2x2x128x64xf8E4M3FN>, f32, tensor<2x2xf32>, f32) -> tensor<2x4x128x64xbf16>
  return
}

// -----

func.func @attention$fp8_descale_not_per_kv_head(%q: tensor<2x4x128x64xf8E4M3FN>, %k: tensor<2x2x128x64xf8E4M3FN>,
                                                %v: tensor<2x2x128x64xf8E4M3FN>, %h: tensor<2x4xf32>) {
  // expected-error @+1 {{'fa.attention' op Hkv of descale (4) does not match Hkv of key (2)}}
  %o = fa.attention %q, %k, %v descale(%h, %h, %h)
      : (tensor<2x4x128x64xf8E4M3FN>, tensor<2x2x128x64xf8E4M3FN>, tensor<2x2x128x64xf8E4M3FN>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4x128x64xbf16>
  return
}

// -----

func.func @attention$fp8_output_not_bf16(%q: tensor<1x4x128x64xf8E4M3FN>, %k: tensor<1x4x128x64xf8E4M3FN>,
                                         %v: tensor<1x4x128x64xf8E4M3FN>, %s: f32) {
  // expected-error @+1 {{'fa.attention' op element type of output ('f8E4M3FN') must be 'bf16' (as f8E4M3FN inputs give)}}
  %o = fa.attention %q, %k, %v descale(%s, %s, %s)
      : (tensor<1x4x128x64xf8E4M3FN>, tensor<1x4x128x64xf8E4M3FN>, tensor<1x4x128x64xf8E4M3FN>, f32, f32, f32) -> tensor<1x4x128x64xf8E4M3FN>
  return
}

// -----

// A block may be a multiple of 16 (48 is accepted); 40 is neither that
// nor a power of two.
func.func @attention$tile_not_power_of_two(%q: tensor<1x4x128x64xf16>, %k: tensor<1x4x128x64xf16>,
                                           %v: tensor<1x4x128x64xf16>) {
  // expected-error @+1 {{block_n must be a power of two or a multiple of 16 in [1, 2^40], but is 40}}
  %o = fa.attention %q, %k, %v {tile = #fa.tile<block_m = 64, block_n = 40, stages = 2, warps = 4>}
      : (tensor<1x4x128x64xf16>, tensor<1x4x128x64xf16>, tensor<1x4x128x64xf16>) -> tensor<1x4x128x64xf16>
  return
}

// -----

func.func @attention$block_m_not_multiple_of_16(%q: tensor<1x4x128x64xf16>, %k: tensor<1x4x128x64xf16>,
                                              %v: tensor<1x4x128x64xf16>) {
  // expected-error @+1 {{block_m must be a power of two or a multiple of 16 in [1, 2^40], but is 40}}
  %o = fa.attention %q, %k, %v {tile = #fa.tile<block_m = 40, block_n = 64, stages = 2, warps = 4>}
      : (tensor<1x4x128x64xf16>, tensor<1x4x128x64xf16>, tensor<1x4x128x64xf16>) -> tensor<1x4x128x64xf16>
  return
}

// -----

func.func @attention$tile_too_many_warps(%q: tensor<1x4x128x64xf16>, %k: tensor<1x4x128x64xf16>,
                                         %v: tensor<1x4x128x64xf16>) {
  // expected-error @+1 {{warps must be in [1, 32], but is 64}}
  %o = fa.attention %q, %k, %v {tile = #fa.tile<block_m = 64, block_n = 64, stages = 2, warps = 64>}
      : (tensor<1x4x128x64xf16>, tensor<1x4x128x64xf16>, tensor<1x4x128x64xf16>) -> tensor<1x4x128x64xf16>
  return
}

// -----

func.func @attention_grad$grad_key_type(%q: tensor<1x4x256x64xf16>, %k: tensor<1x2x256x64xf16>,
                                        %v: tensor<1x2x256x64xf16>, %o: tensor<1x4x256x64xf16>,
                                        %do: tensor<1x4x256x64xf16>, %lse: tensor<1x4x256xf32>) {
  // expected-error @+1 {{'fa.attention_grad' op type of grad_key ('tensor<1x4x256x64xf16>') does not match type of key ('tensor<1x2x256x64xf16>')}}
  %dq, %dk, %dv = fa.attention_grad %q, %k, %v, %o, %do, %lse
      : (tensor<1x4x256x64xf16>, tensor<1x2x256x64xf16>, tensor<1x2x256x64xf16>,
         tensor<1x4x256x64xf16>, tensor<1x4x256x64xf16>, tensor<1x4x256xf32>)
      -> (tensor<1x4x256x64xf16>, tensor<1x4x256x64xf16>, tensor<1x2x256x64xf16>)
  return
}

// -----

func.func @attention_grad$scale_past_backward_range(%q: tensor<1x4x256x64xf16>, %k: tensor<1x2x256x64xf16>,
                                                    %v: tensor<1x2x256x64xf16>, %o: tensor<1x4x256x64xf16>,
                                                    %do: tensor<1x4x256x64xf16>, %lse: tensor<1x4x256xf32>) {
  // In the forward's range, past the backward's: P would be recomputed
  // from an f32 LSE too coarse for it.
  // expected-error @+1 {{'fa.attention_grad' op scale must have |scale| <= 100 for the backward (P is recomputed from the f32 LSE), but is 1000}}
  %dq, %dk, %dv = fa.attention_grad %q, %k, %v, %o, %do, %lse {scale = 1000.0 : f32}
      : (tensor<1x4x256x64xf16>, tensor<1x2x256x64xf16>, tensor<1x2x256x64xf16>,
         tensor<1x4x256x64xf16>, tensor<1x4x256x64xf16>, tensor<1x4x256xf32>)
      -> (tensor<1x4x256x64xf16>, tensor<1x2x256x64xf16>, tensor<1x2x256x64xf16>)
  return
}

// -----

func.func @attention_grad$grad_output_shape(%q: tensor<1x4x256x64xf16>, %k: tensor<1x2x256x64xf16>,
                                            %v: tensor<1x2x256x64xf16>, %o: tensor<1x4x256x64xf16>,
                                            %do: tensor<1x4x200x64xf16>, %lse: tensor<1x4x256xf32>) {
  // expected-error @+1 {{'fa.attention_grad' op M of grad_output (200) does not match M of query (256)}}
  %dq, %dk, %dv = fa.attention_grad %q, %k, %v, %o, %do, %lse
      : (tensor<1x4x256x64xf16>, tensor<1x2x256x64xf16>, tensor<1x2x256x64xf16>,
         tensor<1x4x256x64xf16>, tensor<1x4x200x64xf16>, tensor<1x4x256xf32>)
      -> (tensor<1x4x256x64xf16>, tensor<1x2x256x64xf16>, tensor<1x2x256x64xf16>)
  return
}

// -----

func.func @attention_grad$lse_wrong_type(%q: tensor<1x4x256x64xf16>, %k: tensor<1x2x256x64xf16>,
                                         %v: tensor<1x2x256x64xf16>, %o: tensor<1x4x256x64xf16>,
                                         %do: tensor<1x4x256x64xf16>, %lse: tensor<1x4x256xbf16>) {
  // expected-error @+1 {{'fa.attention_grad' op element type of lse ('bf16') must be f32}}
  %dq, %dk, %dv = fa.attention_grad %q, %k, %v, %o, %do, %lse
      : (tensor<1x4x256x64xf16>, tensor<1x2x256x64xf16>, tensor<1x2x256x64xf16>,
         tensor<1x4x256x64xf16>, tensor<1x4x256x64xf16>, tensor<1x4x256xbf16>)
      -> (tensor<1x4x256x64xf16>, tensor<1x2x256x64xf16>, tensor<1x2x256x64xf16>)
  return
}

// -----

func.func @attention_grad$fp8(%q: tensor<1x4x256x64xf8E4M3FN>, %k: tensor<1x4x256x64xf8E4M3FN>,
                              %v: tensor<1x4x256x64xf8E4M3FN>, %o: tensor<1x4x256x64xbf16>,
                              %do: tensor<1x4x256x64xbf16>, %lse: tensor<1x4x256xf32>) {
  // expected-error @+1 {{'fa.attention_grad' op has no f8E4M3FN backward; inputs must be f16 or bf16}}
  %dq, %dk, %dv = fa.attention_grad %q, %k, %v, %o, %do, %lse
      : (tensor<1x4x256x64xf8E4M3FN>, tensor<1x4x256x64xf8E4M3FN>, tensor<1x4x256x64xf8E4M3FN>,
         tensor<1x4x256x64xbf16>, tensor<1x4x256x64xbf16>, tensor<1x4x256xf32>)
      -> (tensor<1x4x256x64xf8E4M3FN>, tensor<1x4x256x64xf8E4M3FN>, tensor<1x4x256x64xf8E4M3FN>)
  return
}

// -----

// ALiBi slopes are [Hq] or [B, Hq].
func.func @attention$alibi_rank(%q: tensor<2x4x128x64xf16>, %k: tensor<2x4x128x64xf16>,
                                %v: tensor<2x4x128x64xf16>, %slopes: tensor<2x4x1xf32>) {
  // expected-error @+1 {{'fa.attention' op alibi_slopes must have rank 1 [Hq] or 2 [B, Hq], but has rank 3}}
  %o = fa.attention %q, %k, %v alibi(%slopes)
      : (tensor<2x4x128x64xf16>, tensor<2x4x128x64xf16>, tensor<2x4x128x64xf16>, tensor<2x4x1xf32>)
      -> tensor<2x4x128x64xf16>
  return
}

// -----

func.func @attention$alibi_element_type(%q: tensor<2x4x128x64xf16>, %k: tensor<2x4x128x64xf16>,
                                        %v: tensor<2x4x128x64xf16>, %slopes: tensor<4xf16>) {
  // expected-error @+1 {{'fa.attention' op element type of alibi_slopes ('f16') must be f32}}
  %o = fa.attention %q, %k, %v alibi(%slopes)
      : (tensor<2x4x128x64xf16>, tensor<2x4x128x64xf16>, tensor<2x4x128x64xf16>, tensor<4xf16>)
      -> tensor<2x4x128x64xf16>
  return
}

// -----

func.func @attention$alibi_heads(%q: tensor<2x8x128x64xf16>, %k: tensor<2x4x128x64xf16>,
                                 %v: tensor<2x4x128x64xf16>, %slopes: tensor<4xf32>) {
  // expected-error @+1 {{'fa.attention' op Hq of alibi_slopes (4) does not match Hq of query (8)}}
  %o = fa.attention %q, %k, %v alibi(%slopes)
      : (tensor<2x8x128x64xf16>, tensor<2x4x128x64xf16>, tensor<2x4x128x64xf16>, tensor<4xf32>)
      -> tensor<2x8x128x64xf16>
  return
}

// -----

func.func @attention$alibi_batch(%q: tensor<2x4x128x64xf16>, %k: tensor<2x4x128x64xf16>,
                                 %v: tensor<2x4x128x64xf16>, %slopes: tensor<3x4xf32>) {
  // expected-error @+1 {{'fa.attention' op B of alibi_slopes (3) does not match B of query (2)}}
  %o = fa.attention %q, %k, %v alibi(%slopes)
      : (tensor<2x4x128x64xf16>, tensor<2x4x128x64xf16>, tensor<2x4x128x64xf16>, tensor<3x4xf32>)
      -> tensor<2x4x128x64xf16>
  return
}

// -----

func.func @attention_grad$alibi_heads(%q: tensor<1x4x256x64xf16>, %k: tensor<1x2x256x64xf16>,
                                      %v: tensor<1x2x256x64xf16>, %o: tensor<1x4x256x64xf16>,
                                      %do: tensor<1x4x256x64xf16>, %lse: tensor<1x4x256xf32>,
                                      %slopes: tensor<1x2xf32>) {
  // expected-error @+1 {{'fa.attention_grad' op Hq of alibi_slopes (2) does not match Hq of query (4)}}
  %dq, %dk, %dv = fa.attention_grad %q, %k, %v, %o, %do, %lse alibi(%slopes)
      : (tensor<1x4x256x64xf16>, tensor<1x2x256x64xf16>, tensor<1x2x256x64xf16>,
         tensor<1x4x256x64xf16>, tensor<1x4x256x64xf16>, tensor<1x4x256xf32>, tensor<1x2xf32>)
      -> (tensor<1x4x256x64xf16>, tensor<1x2x256x64xf16>, tensor<1x2x256x64xf16>)
  return
}

// -----
// Ranges (fa/runtime/Limits.h; docs/dialect.md, "Ranges").

// -----

func.func @attention$zero_query_len(%q: tensor<1x4x0x64xf16>, %k: tensor<1x4x128x64xf16>,
    %v: tensor<1x4x128x64xf16>) {
  // expected-error @+1 {{'fa.attention' op M of query must be >= 1, but is 0}}
  %o = fa.attention %q, %k, %v
      : (tensor<1x4x0x64xf16>, tensor<1x4x128x64xf16>, tensor<1x4x128x64xf16>) -> tensor<1x4x0x64xf16>
  return
}

// -----

func.func @attention$zero_head_dim(%q: tensor<1x4x128x0xf16>, %k: tensor<1x4x128x0xf16>,
    %v: tensor<1x4x128x64xf16>) {
  // expected-error @+1 {{'fa.attention' op D of query must be >= 1, but is 0}}
  %o = fa.attention %q, %k, %v
      : (tensor<1x4x128x0xf16>, tensor<1x4x128x0xf16>, tensor<1x4x128x64xf16>) -> tensor<1x4x128x64xf16>
  return
}

// -----

func.func @attention$zero_batch(%q: tensor<0x4x128x64xf16>, %k: tensor<0x4x128x64xf16>,
    %v: tensor<0x4x128x64xf16>) {
  // expected-error @+1 {{'fa.attention' op B of query must be >= 1, but is 0}}
  %o = fa.attention %q, %k, %v
      : (tensor<0x4x128x64xf16>, tensor<0x4x128x64xf16>, tensor<0x4x128x64xf16>) -> tensor<0x4x128x64xf16>
  return
}

// -----

func.func @attention$zero_kv_heads(%q: tensor<1x4x128x64xf16>, %k: tensor<1x0x128x64xf16>,
    %v: tensor<1x0x128x64xf16>) {
  // expected-error @+1 {{'fa.attention' op Hkv of key must be >= 1, but is 0}}
  %o = fa.attention %q, %k, %v
      : (tensor<1x4x128x64xf16>, tensor<1x0x128x64xf16>, tensor<1x0x128x64xf16>) -> tensor<1x4x128x64xf16>
  return
}

// -----

func.func @attention$zero_value_dim(%q: tensor<1x4x128x64xf16>, %k: tensor<1x4x128x64xf16>,
    %v: tensor<1x4x128x0xf16>) {
  // expected-error @+1 {{'fa.attention' op Dv of value must be >= 1, but is 0}}
  %o = fa.attention %q, %k, %v
      : (tensor<1x4x128x64xf16>, tensor<1x4x128x64xf16>, tensor<1x4x128x0xf16>) -> tensor<1x4x128x0xf16>
  return
}

// -----

func.func @attention$zero_key_len_dynamic_query(%q: tensor<?x?x?x64xf16>, %k: tensor<1x4x0x64xf16>,
    %v: tensor<1x4x0x64xf16>) {
  // expected-error @+1 {{'fa.attention' op N of key must be >= 1, but is 0}}
  %o = fa.attention %q, %k, %v
      : (tensor<?x?x?x64xf16>, tensor<1x4x0x64xf16>, tensor<1x4x0x64xf16>) -> tensor<?x?x?x64xf16>
  return
}

// -----

func.func @attention$sequence_too_long(%q: tensor<1x1x2199023255552x64xf16>, %k: tensor<1x4x128x64xf16>,
    %v: tensor<1x4x128x64xf16>) {
  // expected-error @+1 {{'fa.attention' op M of query (2199023255552) exceeds the longest accepted sequence, 2^40 = 1099511627776}}
  %o = fa.attention %q, %k, %v
      : (tensor<1x1x2199023255552x64xf16>, tensor<1x4x128x64xf16>, tensor<1x4x128x64xf16>) -> tensor<1x1x2199023255552x64xf16>
  return
}

// -----

func.func @attention$too_many_elements(%q: tensor<65536x4096x4096x64xf16>, %k: tensor<65536x4096x128x64xf16>,
    %v: tensor<65536x4096x128x64xf16>) {
  // expected-error @+1 {{'fa.attention' op query (65536x4096x4096x64) has more elements than the limit, 2^45 = 35184372088832}}
  %o = fa.attention %q, %k, %v
      : (tensor<65536x4096x4096x64xf16>, tensor<65536x4096x128x64xf16>, tensor<65536x4096x128x64xf16>) -> tensor<65536x4096x4096x64xf16>
  return
}

// -----

func.func @attention$elements_overflow_int64(%q: tensor<4294967296x4294967296x1x64xf16>, %k: tensor<4294967296x4294967296x1x64xf16>,
    %v: tensor<4294967296x4294967296x1x64xf16>) {
  // expected-error @+1 {{'fa.attention' op query (4294967296x4294967296x1x64) has more elements than the limit, 2^45 = 35184372088832}}
  %o = fa.attention %q, %k, %v
      : (tensor<4294967296x4294967296x1x64xf16>, tensor<4294967296x4294967296x1x64xf16>, tensor<4294967296x4294967296x1x64xf16>) -> tensor<4294967296x4294967296x1x64xf16>
  return
}

// -----

func.func @attention$zero_scale(%q: tensor<1x4x128x64xf16>, %k: tensor<1x4x128x64xf16>,
    %v: tensor<1x4x128x64xf16>) {
  // expected-error @+1 {{'fa.attention' op scale must be finite with |scale| in [1e-06, 1e+06], but is 0}}
  %o = fa.attention %q, %k, %v {scale = 0.0 : f32}
      : (tensor<1x4x128x64xf16>, tensor<1x4x128x64xf16>, tensor<1x4x128x64xf16>) -> tensor<1x4x128x64xf16>
  return
}

// -----

func.func @attention$huge_scale(%q: tensor<1x4x128x64xf16>, %k: tensor<1x4x128x64xf16>,
    %v: tensor<1x4x128x64xf16>) {
  // expected-error @+1 {{'fa.attention' op scale must be finite with |scale| in [1e-06, 1e+06], but is 1e+30}}
  %o = fa.attention %q, %k, %v {scale = 1.0e30 : f32}
      : (tensor<1x4x128x64xf16>, tensor<1x4x128x64xf16>, tensor<1x4x128x64xf16>) -> tensor<1x4x128x64xf16>
  return
}

// -----

func.func @attention$tiny_scale(%q: tensor<1x4x128x64xf16>, %k: tensor<1x4x128x64xf16>,
    %v: tensor<1x4x128x64xf16>) {
  // expected-error @+1 {{'fa.attention' op scale must be finite with |scale| in [1e-06, 1e+06], but is -1e-07}}
  %o = fa.attention %q, %k, %v {scale = -1.0e-7 : f32}
      : (tensor<1x4x128x64xf16>, tensor<1x4x128x64xf16>, tensor<1x4x128x64xf16>) -> tensor<1x4x128x64xf16>
  return
}

// -----

// Just below the bound as an f32 (the bound itself verifies: ops.mlir).
func.func @attention$scale_below_bound(%q: tensor<1x4x128x64xf16>, %k: tensor<1x4x128x64xf16>,
    %v: tensor<1x4x128x64xf16>) {
  // expected-error @+1 {{'fa.attention' op scale must be finite with |scale| in [1e-06, 1e+06], but is 9.9e-07}}
  %o = fa.attention %q, %k, %v {scale = 9.9e-7 : f32}
      : (tensor<1x4x128x64xf16>, tensor<1x4x128x64xf16>, tensor<1x4x128x64xf16>) -> tensor<1x4x128x64xf16>
  return
}

// -----

func.func @attention$tiny_softcap(%q: tensor<1x4x128x64xf16>, %k: tensor<1x4x128x64xf16>,
    %v: tensor<1x4x128x64xf16>) {
  // expected-error @+1 {{'fa.attention' op softcap must be 0 (off) or in [0.001, 1e+06], but is 1.4013e-45}}
  %o = fa.attention %q, %k, %v {softcap = 1.0e-45 : f32}
      : (tensor<1x4x128x64xf16>, tensor<1x4x128x64xf16>, tensor<1x4x128x64xf16>) -> tensor<1x4x128x64xf16>
  return
}

// -----

func.func @attention$huge_softcap(%q: tensor<1x4x128x64xf16>, %k: tensor<1x4x128x64xf16>,
    %v: tensor<1x4x128x64xf16>) {
  // expected-error @+1 {{'fa.attention' op softcap must be 0 (off) or in [0.001, 1e+06], but is 1e+07}}
  %o = fa.attention %q, %k, %v {softcap = 1.0e7 : f32}
      : (tensor<1x4x128x64xf16>, tensor<1x4x128x64xf16>, tensor<1x4x128x64xf16>) -> tensor<1x4x128x64xf16>
  return
}

// -----

func.func @attention$window_left_too_far(%q: tensor<1x4x128x64xf16>, %k: tensor<1x4x128x64xf16>,
    %v: tensor<1x4x128x64xf16>) {
  // expected-error @+1 {{window left bound (9223372036854775807) exceeds the longest accepted sequence, 2^40 = 1099511627776; use -1 for unbounded}}
  %o = fa.attention %q, %k, %v {mask = #fa.mask<window(9223372036854775807, 0)>}
      : (tensor<1x4x128x64xf16>, tensor<1x4x128x64xf16>, tensor<1x4x128x64xf16>) -> tensor<1x4x128x64xf16>
  return
}

// -----

func.func @attention$window_right_too_far(%q: tensor<1x4x128x64xf16>, %k: tensor<1x4x128x64xf16>,
    %v: tensor<1x4x128x64xf16>) {
  // expected-error @+1 {{window right bound (1099511627777) exceeds the longest accepted sequence, 2^40 = 1099511627776; use -1 for unbounded}}
  %o = fa.attention %q, %k, %v {mask = #fa.mask<window(-1, 1099511627777)>}
      : (tensor<1x4x128x64xf16>, tensor<1x4x128x64xf16>, tensor<1x4x128x64xf16>) -> tensor<1x4x128x64xf16>
  return
}

// -----

func.func @attention$tile_zero_block(%q: tensor<1x4x128x64xf16>, %k: tensor<1x4x128x64xf16>,
    %v: tensor<1x4x128x64xf16>) {
  // expected-error @+1 {{block_m must be a power of two or a multiple of 16 in [1, 2^40], but is 0}}
  %o = fa.attention %q, %k, %v {tile = #fa.tile<block_m = 0, block_n = 64, stages = 2, warps = 4>}
      : (tensor<1x4x128x64xf16>, tensor<1x4x128x64xf16>, tensor<1x4x128x64xf16>) -> tensor<1x4x128x64xf16>
  return
}

// -----

func.func @attention$tile_negative_block(%q: tensor<1x4x128x64xf16>, %k: tensor<1x4x128x64xf16>,
    %v: tensor<1x4x128x64xf16>) {
  // expected-error @+1 {{block_n must be a power of two or a multiple of 16 in [1, 2^40], but is -64}}
  %o = fa.attention %q, %k, %v {tile = #fa.tile<block_m = 64, block_n = -64, stages = 2, warps = 4>}
      : (tensor<1x4x128x64xf16>, tensor<1x4x128x64xf16>, tensor<1x4x128x64xf16>) -> tensor<1x4x128x64xf16>
  return
}

// -----

func.func @attention$tile_huge_block(%q: tensor<1x4x128x64xf16>, %k: tensor<1x4x128x64xf16>,
    %v: tensor<1x4x128x64xf16>) {
  // expected-error @+1 {{block_m must be a power of two or a multiple of 16 in [1, 2^40], but is 4611686018427387904}}
  %o = fa.attention %q, %k, %v {tile = #fa.tile<block_m = 4611686018427387904, block_n = 64, stages = 2, warps = 4>}
      : (tensor<1x4x128x64xf16>, tensor<1x4x128x64xf16>, tensor<1x4x128x64xf16>) -> tensor<1x4x128x64xf16>
  return
}

// -----

func.func @attention$tile_zero_stages(%q: tensor<1x4x128x64xf16>, %k: tensor<1x4x128x64xf16>,
    %v: tensor<1x4x128x64xf16>) {
  // expected-error @+1 {{stages must be >= 1, but is 0}}
  %o = fa.attention %q, %k, %v {tile = #fa.tile<block_m = 64, block_n = 64, stages = 0, warps = 4>}
      : (tensor<1x4x128x64xf16>, tensor<1x4x128x64xf16>, tensor<1x4x128x64xf16>) -> tensor<1x4x128x64xf16>
  return
}

// -----

func.func @attention$tile_zero_warps(%q: tensor<1x4x128x64xf16>, %k: tensor<1x4x128x64xf16>,
    %v: tensor<1x4x128x64xf16>) {
  // expected-error @+1 {{warps must be in [1, 32], but is 0}}
  %o = fa.attention %q, %k, %v {tile = #fa.tile<block_m = 64, block_n = 64, stages = 2, warps = 0>}
      : (tensor<1x4x128x64xf16>, tensor<1x4x128x64xf16>, tensor<1x4x128x64xf16>) -> tensor<1x4x128x64xf16>
  return
}

// -----

func.func @attention$zero_alibi_slopes(%q: tensor<?x?x128x64xf16>, %k: tensor<1x4x128x64xf16>,
    %v: tensor<1x4x128x64xf16>, %slopes: tensor<0xf32>) {
  // expected-error @+1 {{'fa.attention' op Hq of alibi_slopes must be >= 1, but is 0}}
  %o = fa.attention %q, %k, %v alibi(%slopes)
      : (tensor<?x?x128x64xf16>, tensor<1x4x128x64xf16>, tensor<1x4x128x64xf16>, tensor<0xf32>) -> tensor<?x?x128x64xf16>
  return
}

// -----

func.func @attention_grad$zero_query_len(%q: tensor<1x4x0x64xf16>, %k: tensor<1x2x256x64xf16>,
    %v: tensor<1x2x256x64xf16>, %o: tensor<1x4x0x64xf16>, %do: tensor<1x4x0x64xf16>, %lse: tensor<1x4x0xf32>) {
  // expected-error @+1 {{'fa.attention_grad' op M of query must be >= 1, but is 0}}
  %dq, %dk, %dv = fa.attention_grad %q, %k, %v, %o, %do, %lse {scale = 0.125 : f32}
      : (tensor<1x4x0x64xf16>, tensor<1x2x256x64xf16>, tensor<1x2x256x64xf16>, tensor<1x4x0x64xf16>, tensor<1x4x0x64xf16>, tensor<1x4x0xf32>)
      -> (tensor<1x4x0x64xf16>, tensor<1x2x256x64xf16>, tensor<1x2x256x64xf16>)
  return
}

// -----

func.func @attention_grad$zero_scale(%q: tensor<1x4x256x64xf16>, %k: tensor<1x2x256x64xf16>,
    %v: tensor<1x2x256x64xf16>, %o: tensor<1x4x256x64xf16>, %do: tensor<1x4x256x64xf16>, %lse: tensor<1x4x256xf32>) {
  // expected-error @+1 {{'fa.attention_grad' op scale must be finite with |scale| in [1e-06, 1e+06], but is 0}}
  %dq, %dk, %dv = fa.attention_grad %q, %k, %v, %o, %do, %lse {scale = 0.0 : f32}
      : (tensor<1x4x256x64xf16>, tensor<1x2x256x64xf16>, tensor<1x2x256x64xf16>, tensor<1x4x256x64xf16>, tensor<1x4x256x64xf16>, tensor<1x4x256xf32>)
      -> (tensor<1x4x256x64xf16>, tensor<1x2x256x64xf16>, tensor<1x2x256x64xf16>)
  return
}

// -----

// A result may not leave open a size its operands fix: the passes build O
// and LSE at Q's sizes.
func.func @attention$dynamic_result_static_operands(%q: tensor<1x2x64x64xbf16>,
    %k: tensor<1x2x64x64xbf16>, %v: tensor<1x2x64x64xbf16>) -> tensor<?x2x?x64xbf16> {
  // expected-error @+1 {{'fa.attention' op B of output is dynamic, but B of query is static (1): a result's size must be static wherever the operands give it}}
  %o = fa.attention %q, %k, %v
      : (tensor<1x2x64x64xbf16>, tensor<1x2x64x64xbf16>, tensor<1x2x64x64xbf16>) -> tensor<?x2x?x64xbf16>
  return %o : tensor<?x2x?x64xbf16>
}

// -----

func.func @attention$dynamic_lse_static_operands(%q: tensor<1x2x64x64xbf16>,
    %k: tensor<1x2x64x64xbf16>, %v: tensor<1x2x64x64xbf16>)
    -> (tensor<1x2x64x64xbf16>, tensor<1x2x?xf32>) {
  // expected-error @+1 {{'fa.attention' op M of lse is dynamic, but M of query is static (64): a result's size must be static wherever the operands give it}}
  %o, %lse = fa.attention %q, %k, %v
      : (tensor<1x2x64x64xbf16>, tensor<1x2x64x64xbf16>, tensor<1x2x64x64xbf16>)
      -> (tensor<1x2x64x64xbf16>, tensor<1x2x?xf32>)
  return %o, %lse : tensor<1x2x64x64xbf16>, tensor<1x2x?xf32>
}

// -----

// A block mask's blocks are powers of two, so that every tile up to them
// divides them.
func.func @attention$block_sparse_size(%q: tensor<1x2x256x64xbf16>,
    %k: tensor<1x2x256x64xbf16>, %v: tensor<1x2x256x64xbf16>) -> tensor<1x2x256x64xbf16> {
  // expected-error @+2 {{kv_block must be a power of two in [16, 2^20], but is 96}}
  %o = fa.attention %q, %k, %v
      {block_sparse = #fa.block_sparse<q_block = 128, kv_block = 96>}
      : (tensor<1x2x256x64xbf16>, tensor<1x2x256x64xbf16>, tensor<1x2x256x64xbf16>) -> tensor<1x2x256x64xbf16>
  return %o : tensor<1x2x256x64xbf16>
}

// -----

func.func @attention$block_sparse_tile(%q: tensor<1x2x256x64xbf16>,
    %k: tensor<1x2x256x64xbf16>, %v: tensor<1x2x256x64xbf16>) -> tensor<1x2x256x64xbf16> {
  // expected-error @+1 {{'fa.attention' op tile block_n = 48 does not divide the block mask's block of 128}}
  %o = fa.attention %q, %k, %v
      {block_sparse = #fa.block_sparse<q_block = 128, kv_block = 128>,
       tile = #fa.tile<block_m = 128, block_n = 48, stages = 2, warps = 4>}
      : (tensor<1x2x256x64xbf16>, tensor<1x2x256x64xbf16>, tensor<1x2x256x64xbf16>) -> tensor<1x2x256x64xbf16>
  return %o : tensor<1x2x256x64xbf16>
}
