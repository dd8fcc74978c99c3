// Each pipeline checks its input before any pass runs: a function holding
// fa ops becomes a kernel of the same name, so a name that is not a PTX
// identifier is one line naming the rule, where LLVM used to abort the
// process ("Symbol name with unsupported characters"). The CPU path keeps
// the same rule, so that IR one path takes the other takes too.
// RUN: not fa-opt %s --split-input-file --fa-to-ptx="chip=sm_80" 2>&1 | FileCheck %s --check-prefixes=CHECK,GPU -DP=fa-to-ptx
// RUN: not fa-opt %s --split-input-file --fa-to-ptx="chip=sm_90a" 2>&1 | FileCheck %s --check-prefixes=CHECK,GPU -DP=fa-to-ptx
// RUN: not fa-opt %s --split-input-file --fa-to-ptx="chip=sm_80 deterministic=true" 2>&1 | FileCheck %s --check-prefixes=CHECK,GPU -DP=fa-to-ptx
// RUN: not fa-opt %s --split-input-file --fa-tile --fa-fuse-online-softmax --fa-recompute-backward --convert-fa-to-gpu 2>&1 | FileCheck %s --check-prefixes=CHECK,GPU -DP=convert-fa-to-gpu
// RUN: not fa-opt %s --split-input-file --fa-compile-cpu 2>&1 | FileCheck %s --check-prefixes=CHECK,CPU -DP=fa-compile-cpu
// RUN: not fa-opt %s --split-input-file --fa-tile --fa-fuse-online-softmax --fa-recompute-backward --fa-to-cpu 2>&1 | FileCheck %s --check-prefixes=CHECK,CPU -DP=fa-to-cpu

// CHECK: :[[@LINE+1]]:1: error: [[P]]: function name 'a-b' is not a PTX identifier ([A-Za-z_][A-Za-z0-9_$]*, at most 256 characters): the kernel takes its name
func.func @"a-b"(%q: tensor<1x1x128x64xbf16>, %k: tensor<1x1x128x64xbf16>, %v: tensor<1x1x128x64xbf16>)
    -> (tensor<1x1x128x64xbf16>, tensor<1x1x128xf32>) {
  %o, %lse = fa.attention %q, %k, %v
      : (tensor<1x1x128x64xbf16>, tensor<1x1x128x64xbf16>, tensor<1x1x128x64xbf16>)
      -> (tensor<1x1x128x64xbf16>, tensor<1x1x128xf32>)
  return %o, %lse : tensor<1x1x128x64xbf16>, tensor<1x1x128xf32>
}

// -----

// A control byte in the name is printed escaped, not copied into the line.
// CHECK: :[[@LINE+1]]:1: error: [[P]]: function name 'a b\x00c' is not a PTX identifier
func.func @"a b\00c"(%q: tensor<1x1x128x64xbf16>, %k: tensor<1x1x128x64xbf16>, %v: tensor<1x1x128x64xbf16>)
    -> tensor<1x1x128x64xbf16> {
  %o = fa.attention %q, %k, %v
      : (tensor<1x1x128x64xbf16>, tensor<1x1x128x64xbf16>, tensor<1x1x128x64xbf16>)
      -> tensor<1x1x128x64xbf16>
  return %o : tensor<1x1x128x64xbf16>
}

// -----

// A backward's three GPU entries append _preprocess, _main, _postprocess:
// its name leaves room for the longest (245 characters do not).
// GPU: :[[@LINE+2]]:1: error: [[P]]: function name '{{k+}}' is not a PTX identifier ([A-Za-z_][A-Za-z0-9_$]*, at most 244 characters: a backward's entries append _postprocess): the kernel takes its name
// CPU-NOT: function name '{{k+}}'
func.func @kkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkk(%q: tensor<1x2x64x64xbf16>, %k: tensor<1x1x64x64xbf16>, %v: tensor<1x1x64x64xbf16>,
                %o: tensor<1x2x64x64xbf16>, %do: tensor<1x2x64x64xbf16>, %lse: tensor<1x2x64xf32>)
    -> (tensor<1x2x64x64xbf16>, tensor<1x1x64x64xbf16>, tensor<1x1x64x64xbf16>) {
  %dq, %dk, %dv = fa.attention_grad %q, %k, %v, %o, %do, %lse
      : (tensor<1x2x64x64xbf16>, tensor<1x1x64x64xbf16>, tensor<1x1x64x64xbf16>,
         tensor<1x2x64x64xbf16>, tensor<1x2x64x64xbf16>, tensor<1x2x64xf32>)
      -> (tensor<1x2x64x64xbf16>, tensor<1x1x64x64xbf16>, tensor<1x1x64x64xbf16>)
  return %dq, %dk, %dv : tensor<1x2x64x64xbf16>, tensor<1x1x64x64xbf16>, tensor<1x1x64x64xbf16>
}

// -----

// A function already in a gpu.module is compiled to PTX under its name too.
// GPU: :[[@LINE+4]]:5: error: [[P]]: symbol name 'a-b' is not a PTX identifier ([A-Za-z_][A-Za-z0-9_$]*, at most 256 characters): it is compiled to PTX under it
// CPU-NOT: symbol name
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @"a-b"() kernel {
      gpu.return
    }
  }
}
