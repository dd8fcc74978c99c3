// Each pipeline says what it takes, and what to run first, before any pass
// runs: distributed-level IR (tiles with a GPU layout, fa-gpu-distribute's
// output) sent to a pipeline used to end in "failed to legalize operation
// 'func.return'", "unresolved materialization" or "op was not bufferized".
// RUN: not fa-opt %s --split-input-file --fa-to-ptx="chip=sm_80" 2>&1 | FileCheck %s --check-prefixes=GPU,L1 -DP=fa-to-ptx
// RUN: not fa-opt %s --split-input-file --fa-to-ptx="chip=sm_90a" 2>&1 | FileCheck %s --check-prefixes=GPU,L1 -DP=fa-to-ptx
// RUN: not fa-opt %s --split-input-file --convert-fa-to-gpu 2>&1 | FileCheck %s --check-prefixes=GPU,L2,GPUL2 -DP=convert-fa-to-gpu
// RUN: not fa-opt %s --split-input-file --fa-gpu-distribute 2>&1 | FileCheck %s --check-prefixes=GPU,L2,GPUL2 -DP=fa-gpu-distribute
// RUN: not fa-opt %s --split-input-file --fa-compile-cpu 2>&1 | FileCheck %s --check-prefixes=CPU,L1 -DP=fa-compile-cpu
// RUN: not fa-opt %s --split-input-file --fa-to-cpu 2>&1 | FileCheck %s --check-prefixes=CPU,L2,CPUL2 -DP=fa-to-cpu
//
// fa-gpu-distribute's own output, printed and parsed again, is no input
// for a pipeline either.
// RUN: fa-opt %fa_src_root/examples/attention.mlir --fa-tile --fa-fuse-online-softmax --fa-gpu-distribute="chip=sm_80" -o %t.distributed.mlir
// RUN: not fa-opt %t.distributed.mlir --fa-to-ptx="chip=sm_90a" 2>&1 | FileCheck %s --check-prefix=OUTPUT -DP=fa-to-ptx --implicit-check-not="see current operation"
// RUN: not fa-opt %t.distributed.mlir --fa-to-ptx="chip=sm_80" 2>&1 | FileCheck %s --check-prefix=OUTPUT -DP=fa-to-ptx --implicit-check-not="see current operation"
// RUN: not fa-opt %t.distributed.mlir --fa-to-cpu 2>&1 | FileCheck %s --check-prefix=OUTPUT -DP=fa-to-cpu --implicit-check-not="see current operation"
// RUN: not fa-opt %t.distributed.mlir --fa-compile-cpu 2>&1 | FileCheck %s --check-prefix=OUTPUT -DP=fa-compile-cpu --implicit-check-not="see current operation"
// OUTPUT: error: [[P]] takes {{.*}}, but 'fa.shared_tile' has tiles with a GPU layout (fa-gpu-distribute's output)
// OUTPUT-NOT: error

// A distributed step, in a function.
// GPU: :[[@LINE+7]]:8: error: [[P]] takes {{fa.attention or tiled IR|tiled IR}}, but 'fa.qk_scores' has tiles with a GPU layout (fa-gpu-distribute's output): run fa-gpu-lower-fragments on it instead
// CPU: :[[@LINE+6]]:8: error: [[P]] takes {{fa.attention or tiled IR|tiled IR}}, but 'fa.qk_scores' has tiles with a GPU layout (fa-gpu-distribute's output), which only the GPU lowering (fa-gpu-lower-fragments) takes
#shared = #fa.shared<rowElements = 64>
#operand = #fa.operand<warps = 4, mTiles = 2>
#row = #fa.fragment<warps = 4, mTiles = 2>
func.func @distributed_step(%qa: tensor<128x64xbf16, #operand>, %k: tensor<64x64xbf16, #shared>)
    -> tensor<128xf32, #row> {
  %s = fa.qk_scores %qa, %k {scale = 0.125 : f32} : tensor<128x64xbf16, #operand>, tensor<64x64xbf16, #shared> -> tensor<128x64xf32, #row>
  %m = fa.row_max %s : tensor<128x64xf32, #row> -> tensor<128xf32, #row>
  return %m : tensor<128xf32, #row>
}

// -----

// Such tiles at a function's boundary alone.
// GPU: :[[@LINE+2]]:1: error: [[P]] takes {{.*}}, but 'func.func' has tiles with a GPU layout
// CPU: :[[@LINE+1]]:1: error: [[P]] takes {{.*}}, but 'func.func' has tiles with a GPU layout
func.func @layouts(%a: tensor<64x96xbf16, #fa.shared<rowElements = 128>>) {
  return
}

// -----

// fa.attention where tiled IR is expected: what to run first.
// GPUL2: :[[@LINE+3]]:8: error: [[P]]: run fa-tile and fa-fuse-online-softmax first
// CPUL2: :[[@LINE+2]]:8: error: [[P]]: run fa-tile first
func.func @untiled(%q: tensor<1x1x64x64xbf16>, %k: tensor<1x1x64x64xbf16>, %v: tensor<1x1x64x64xbf16>) -> tensor<1x1x64x64xbf16> {
  %o = fa.attention %q, %k, %v : (tensor<1x1x64x64xbf16>, tensor<1x1x64x64xbf16>, tensor<1x1x64x64xbf16>) -> tensor<1x1x64x64xbf16>
  return %o : tensor<1x1x64x64xbf16>
}

// -----

// L2: :[[@LINE+5]]:19: error: [[P]]: run fa-recompute-backward first
// L1-NOT: error
func.func @untiled_grad(%q: tensor<1x2x64x64xbf16>, %k: tensor<1x1x64x64xbf16>, %v: tensor<1x1x64x64xbf16>,
                        %o: tensor<1x2x64x64xbf16>, %do: tensor<1x2x64x64xbf16>, %lse: tensor<1x2x64xf32>)
    -> (tensor<1x2x64x64xbf16>, tensor<1x1x64x64xbf16>, tensor<1x1x64x64xbf16>) {
  %dq, %dk, %dv = fa.attention_grad %q, %k, %v, %o, %do, %lse
      : (tensor<1x2x64x64xbf16>, tensor<1x1x64x64xbf16>, tensor<1x1x64x64xbf16>,
         tensor<1x2x64x64xbf16>, tensor<1x2x64x64xbf16>, tensor<1x2x64xf32>)
      -> (tensor<1x2x64x64xbf16>, tensor<1x1x64x64xbf16>, tensor<1x1x64x64xbf16>)
  return %dq, %dk, %dv : tensor<1x2x64x64xbf16>, tensor<1x1x64x64xbf16>, tensor<1x1x64x64xbf16>
}
