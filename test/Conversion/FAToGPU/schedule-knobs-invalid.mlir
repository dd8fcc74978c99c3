// A schedule override the chip does not have, or cannot build, is refused
// with one line naming the knob, at the function fa-gpu-distribute was to
// turn into a kernel.
// RUN: fa-opt %s --split-input-file --verify-diagnostics --fa-tile --fa-fuse-online-softmax --fa-gpu-distribute="chip=sm_90a"

// expected-error @below {{sm_90a: unknown schedule knob 'unroll' (the sm_90a forward's: mask_per_warp, splits_unmasked_tiles, staging_released_by_transpose, output_staging, tile_order, register_budget)}}
func.func @unknown(%q: tensor<1x1x256x128xbf16>, %k: tensor<1x1x256x128xbf16>, %v: tensor<1x1x256x128xbf16>)
    -> (tensor<1x1x256x128xbf16>, tensor<1x1x256xf32>) {
  %o, %lse = fa.attention %q, %k, %v
      {tile = #fa.tile<block_m = 128, block_n = 128, stages = 2, warps = 8, schedule = {unroll = 2}>}
      : (tensor<1x1x256x128xbf16>, tensor<1x1x256x128xbf16>, tensor<1x1x256x128xbf16>)
      -> (tensor<1x1x256x128xbf16>, tensor<1x1x256xf32>)
  return %o, %lse : tensor<1x1x256x128xbf16>, tensor<1x1x256xf32>
}

// -----

// expected-error @below {{sm_90a: schedule knob 'tile_order' takes per_block, strided or paired, got 'rows'}}
func.func @bad_value(%q: tensor<1x1x256x128xbf16>, %k: tensor<1x1x256x128xbf16>, %v: tensor<1x1x256x128xbf16>)
    -> (tensor<1x1x256x128xbf16>, tensor<1x1x256xf32>) {
  %o, %lse = fa.attention %q, %k, %v
      {tile = #fa.tile<block_m = 128, block_n = 128, stages = 2, warps = 8, schedule = {tile_order = "rows"}>}
      : (tensor<1x1x256x128xbf16>, tensor<1x1x256x128xbf16>, tensor<1x1x256x128xbf16>)
      -> (tensor<1x1x256x128xbf16>, tensor<1x1x256xf32>)
  return %o, %lse : tensor<1x1x256x128xbf16>, tensor<1x1x256xf32>
}

// -----

// A budget past the registers the block holds at entry would make
// setmaxnreg.inc wait for ever: refused, not built.
// expected-error @below {{sm_90a: register_budget 32/240 hands out 65536 registers, more than the 64512 the block holds at entry (168 per thread, 384 threads, 1 block per SM): setmaxnreg.inc would wait for ever}}
func.func @budget(%q: tensor<1x1x256x128xbf16>, %k: tensor<1x1x256x128xbf16>, %v: tensor<1x1x256x128xbf16>)
    -> (tensor<1x1x256x128xbf16>, tensor<1x1x256xf32>) {
  %o, %lse = fa.attention %q, %k, %v
      {tile = #fa.tile<block_m = 128, block_n = 128, stages = 2, warps = 8, schedule = {register_budget = "32/240"}>}
      : (tensor<1x1x256x128xbf16>, tensor<1x1x256x128xbf16>, tensor<1x1x256x128xbf16>)
      -> (tensor<1x1x256x128xbf16>, tensor<1x1x256xf32>)
  return %o, %lse : tensor<1x1x256x128xbf16>, tensor<1x1x256xf32>
}

// -----

// expected-error @below {{sm_90a: schedule knob 'staging_released_by_transpose' is for f8e4m3fn kernels only}}
func.func @not_for_bf16(%q: tensor<1x1x256x128xbf16>, %k: tensor<1x1x256x128xbf16>, %v: tensor<1x1x256x128xbf16>)
    -> (tensor<1x1x256x128xbf16>, tensor<1x1x256xf32>) {
  %o, %lse = fa.attention %q, %k, %v
      {tile = #fa.tile<block_m = 128, block_n = 128, stages = 2, warps = 8, schedule = {staging_released_by_transpose = true}>}
      : (tensor<1x1x256x128xbf16>, tensor<1x1x256x128xbf16>, tensor<1x1x256x128xbf16>)
      -> (tensor<1x1x256x128xbf16>, tensor<1x1x256xf32>)
  return %o, %lse : tensor<1x1x256x128xbf16>, tensor<1x1x256xf32>
}

// -----

func.func @not_a_knob_value(%q: tensor<1x1x256x128xbf16>, %k: tensor<1x1x256x128xbf16>, %v: tensor<1x1x256x128xbf16>)
    -> (tensor<1x1x256x128xbf16>, tensor<1x1x256xf32>) {
  // expected-error @+2 {{schedule knob 'section_mib' must be a bool, an integer or a string, but is 1.600000e+01 : f32}}
  %o, %lse = fa.attention %q, %k, %v
      {tile = #fa.tile<block_m = 128, block_n = 128, stages = 2, warps = 8, schedule = {section_mib = 16.0 : f32}>}
      : (tensor<1x1x256x128xbf16>, tensor<1x1x256x128xbf16>, tensor<1x1x256x128xbf16>)
      -> (tensor<1x1x256x128xbf16>, tensor<1x1x256xf32>)
  return %o, %lse : tensor<1x1x256x128xbf16>, tensor<1x1x256xf32>
}
