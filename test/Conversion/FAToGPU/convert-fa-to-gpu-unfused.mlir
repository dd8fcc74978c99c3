// Without fa-fuse-online-softmax there is no online loop to map to a kernel:
// fa-gpu-distribute (the first pass of convert-fa-to-gpu) says what to run.
// RUN: not fa-opt %s --fa-tile --convert-fa-to-gpu 2>&1 | FileCheck %s
// RUN: not fa-opt %s --fa-tile --fa-gpu-distribute 2>&1 | FileCheck %s
// CHECK: error: the GPU lowering expects the fused online-softmax form: run fa-tile and fa-fuse-online-softmax first
func.func @attention(%q: tensor<1x1x128x64xbf16>, %k: tensor<1x1x128x64xbf16>, %v: tensor<1x1x128x64xbf16>)
    -> tensor<1x1x128x64xbf16> {
  %o = fa.attention %q, %k, %v
      : (tensor<1x1x128x64xbf16>, tensor<1x1x128x64xbf16>, tensor<1x1x128x64xbf16>) -> tensor<1x1x128x64xbf16>
  return %o : tensor<1x1x128x64xbf16>
}
