// RUN: fa-opt %s --split-input-file --verify-diagnostics --fa-tile --fa-fuse-online-softmax --convert-fa-to-gpu="chip=sm_80"

// expected-error @+1 {{convert-fa-to-gpu{chip=sm_80}: sm_80 kernels need D and Dv in {64, 128, 192, 256}, got D=32 Dv=32}}
func.func @head_dim_32(%q: tensor<1x1x128x32xbf16>, %k: tensor<1x1x128x32xbf16>, %v: tensor<1x1x128x32xbf16>)
    -> tensor<1x1x128x32xbf16> {
  %o = fa.attention %q, %k, %v
      : (tensor<1x1x128x32xbf16>, tensor<1x1x128x32xbf16>, tensor<1x1x128x32xbf16>) -> tensor<1x1x128x32xbf16>
  return %o : tensor<1x1x128x32xbf16>
}

// -----

// expected-error @+1 {{convert-fa-to-gpu{chip=sm_80}: softcap is not implemented on sm_80 yet}}
func.func @softcap(%q: tensor<1x1x128x64xbf16>, %k: tensor<1x1x128x64xbf16>, %v: tensor<1x1x128x64xbf16>)
    -> tensor<1x1x128x64xbf16> {
  %o = fa.attention %q, %k, %v {softcap = 30.0 : f32}
      : (tensor<1x1x128x64xbf16>, tensor<1x1x128x64xbf16>, tensor<1x1x128x64xbf16>) -> tensor<1x1x128x64xbf16>
  return %o : tensor<1x1x128x64xbf16>
}

// -----

// expected-error @+1 {{convert-fa-to-gpu{chip=sm_80}: block_m must be 16 * warps or 32 * warps (64 or 128), got 32}}
func.func @block_m_not_warps(%q: tensor<1x1x128x64xbf16>, %k: tensor<1x1x128x64xbf16>, %v: tensor<1x1x128x64xbf16>)
    -> tensor<1x1x128x64xbf16> {
  %o = fa.attention %q, %k, %v {tile = #fa.tile<block_m = 32, block_n = 64, stages = 2, warps = 4>}
      : (tensor<1x1x128x64xbf16>, tensor<1x1x128x64xbf16>, tensor<1x1x128x64xbf16>) -> tensor<1x1x128x64xbf16>
  return %o : tensor<1x1x128x64xbf16>
}
