// Configurations the sm_80 strategy refuses: fa-gpu-distribute reports the
// strategy's reason, prefixed with the chip, on the function.
// RUN: fa-opt %s --split-input-file --verify-diagnostics --fa-tile --fa-fuse-online-softmax --convert-fa-to-gpu="chip=sm_80"
// RUN: fa-opt %s --split-input-file --verify-diagnostics --fa-tile --fa-fuse-online-softmax --fa-gpu-distribute="chip=sm_80"
// An unknown chip names the registry.
// RUN: not fa-opt %s --split-input-file --fa-tile --fa-fuse-online-softmax --convert-fa-to-gpu="chip=sm_90" 2>&1 | FileCheck %s --check-prefix=CHIP
// The default chip is sm_80: the same refusals.
// RUN: fa-opt %s --split-input-file --verify-diagnostics --fa-tile --fa-fuse-online-softmax --fa-gpu-distribute
// CHIP: error: unknown chip 'sm_90' (supported: sm_80, sm_90a)

// expected-error @+1 {{sm_80: sm_80 kernels need D and Dv multiples of 8 from 8 to 256, got D=36 Dv=36 (pad the head dim with zeros to the next multiple of 8)}}
func.func @head_dim$not_multiple_of_8(%q: tensor<1x1x128x36xbf16>, %k: tensor<1x1x128x36xbf16>, %v: tensor<1x1x128x36xbf16>)
    -> tensor<1x1x128x36xbf16> {
  %o = fa.attention %q, %k, %v
      : (tensor<1x1x128x36xbf16>, tensor<1x1x128x36xbf16>, tensor<1x1x128x36xbf16>) -> tensor<1x1x128x36xbf16>
  return %o : tensor<1x1x128x36xbf16>
}

// -----

// expected-error @+1 {{sm_80: sm_80 kernels need D and Dv multiples of 8 from 8 to 256, got D=64 Dv=36}}
func.func @value_dim$not_multiple_of_8(%q: tensor<1x1x128x64xbf16>, %k: tensor<1x1x128x64xbf16>, %v: tensor<1x1x128x36xbf16>)
    -> tensor<1x1x128x36xbf16> {
  %o = fa.attention %q, %k, %v
      : (tensor<1x1x128x64xbf16>, tensor<1x1x128x64xbf16>, tensor<1x1x128x36xbf16>) -> tensor<1x1x128x36xbf16>
  return %o : tensor<1x1x128x36xbf16>
}

// -----

// expected-error @+1 {{sm_80: sm_80 kernels need D and Dv multiples of 8 from 8 to 256, got D=264 Dv=264}}
func.func @head_dim$too_large(%q: tensor<1x1x128x264xbf16>, %k: tensor<1x1x128x264xbf16>, %v: tensor<1x1x128x264xbf16>)
    -> tensor<1x1x128x264xbf16> {
  %o = fa.attention %q, %k, %v
      : (tensor<1x1x128x264xbf16>, tensor<1x1x128x264xbf16>, tensor<1x1x128x264xbf16>) -> tensor<1x1x128x264xbf16>
  return %o : tensor<1x1x128x264xbf16>
}

// -----

// expected-error @+1 {{sm_80: block_m must be 16 * warps or 32 * warps (64 or 128), got 32}}
func.func @block_m$not_warps(%q: tensor<1x1x128x64xbf16>, %k: tensor<1x1x128x64xbf16>, %v: tensor<1x1x128x64xbf16>)
    -> tensor<1x1x128x64xbf16> {
  %o = fa.attention %q, %k, %v {tile = #fa.tile<block_m = 32, block_n = 64, stages = 2, warps = 4>}
      : (tensor<1x1x128x64xbf16>, tensor<1x1x128x64xbf16>, tensor<1x1x128x64xbf16>) -> tensor<1x1x128x64xbf16>
  return %o : tensor<1x1x128x64xbf16>
}

// -----

// expected-error @+1 {{sm_80: the sm_80 pipeline has 1 or 2 stages, got 3}}
func.func @stages$three(%q: tensor<1x1x128x64xbf16>, %k: tensor<1x1x128x64xbf16>, %v: tensor<1x1x128x64xbf16>)
    -> tensor<1x1x128x64xbf16> {
  %o = fa.attention %q, %k, %v {tile = #fa.tile<block_m = 64, block_n = 64, stages = 3, warps = 4>}
      : (tensor<1x1x128x64xbf16>, tensor<1x1x128x64xbf16>, tensor<1x1x128x64xbf16>) -> tensor<1x1x128x64xbf16>
  return %o : tensor<1x1x128x64xbf16>
}

// -----

// Q [128][256] + K, V [2][64][256] in bf16 = 192 KiB.
// expected-error @+1 {{sm_80: the tile needs 196608 bytes of shared memory with 2 K/V stages, more than the budget's 166912 bytes (sm_80's default, an A100's opt-in maximum; --shared-memory-budget raises it)}}
func.func @shared_memory$too_large(%q: tensor<1x1x128x256xbf16>, %k: tensor<1x1x128x256xbf16>, %v: tensor<1x1x128x256xbf16>)
    -> tensor<1x1x128x256xbf16> {
  %o = fa.attention %q, %k, %v {tile = #fa.tile<block_m = 128, block_n = 64, stages = 2, warps = 4>}
      : (tensor<1x1x128x256xbf16>, tensor<1x1x128x256xbf16>, tensor<1x1x128x256xbf16>) -> tensor<1x1x128x256xbf16>
  return %o : tensor<1x1x128x256xbf16>
}
