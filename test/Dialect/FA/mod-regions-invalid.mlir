// RUN: fa-opt %s -split-input-file -verify-diagnostics
// A variant region that breaks its contract (docs/dialect.md, "Variant
// regions") is refused with one line naming what is wrong.

func.func @wrong_yield_type(%q: tensor<1x1x16x16xf16>, %k: tensor<1x1x16x16xf16>,
                            %v: tensor<1x1x16x16xf16>) -> tensor<1x1x16x16xf16> {
  // expected-error @+1 {{'fa.attention' op score_mod must yield 'f32', but yields 'f16'}}
  %o = fa.attention %q, %k, %v score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %h16 = arith.truncf %s : f32 to f16
    fa.yield %h16 : f16
  } : (tensor<1x1x16x16xf16>, tensor<1x1x16x16xf16>, tensor<1x1x16x16xf16>)
      -> tensor<1x1x16x16xf16>
  return %o : tensor<1x1x16x16xf16>
}

// -----

func.func @mask_yields_f32(%q: tensor<1x1x16x16xf16>, %k: tensor<1x1x16x16xf16>,
                           %v: tensor<1x1x16x16xf16>) -> tensor<1x1x16x16xf16> {
  // expected-error @+1 {{'fa.attention' op mask_mod must yield 'i1', but yields 'f32'}}
  %o = fa.attention %q, %k, %v mask_mod {
  ^bb0(%b: index, %h: index, %i: index, %j: index):
    %c = arith.constant 1.0 : f32
    fa.yield %c : f32
  } : (tensor<1x1x16x16xf16>, tensor<1x1x16x16xf16>, tensor<1x1x16x16xf16>)
      -> tensor<1x1x16x16xf16>
  return %o : tensor<1x1x16x16xf16>
}

// -----

func.func @unsupported_op(%q: tensor<1x1x16x16xf16>, %k: tensor<1x1x16x16xf16>,
                          %v: tensor<1x1x16x16xf16>) -> tensor<1x1x16x16xf16> {
  // expected-error @+1 {{'fa.attention' op mask_mod: 'tensor.empty' is not allowed (arith and math ops, tensor.extract of a captured tensor, fa.yield)}}
  %o = fa.attention %q, %k, %v mask_mod {
  ^bb0(%b: index, %h: index, %i: index, %j: index):
    %e = tensor.empty() : tensor<4xi1>
    %t = arith.constant true
    fa.yield %t : i1
  } : (tensor<1x1x16x16xf16>, tensor<1x1x16x16xf16>, tensor<1x1x16x16xf16>)
      -> tensor<1x1x16x16xf16>
  return %o : tensor<1x1x16x16xf16>
}

// -----

func.func @wrong_arguments(%q: tensor<1x1x16x16xf16>, %k: tensor<1x1x16x16xf16>,
                           %v: tensor<1x1x16x16xf16>, %bias: tensor<16xf32>)
    -> tensor<1x1x16x16xf16> {
  // expected-error @+1 {{'fa.attention' op score_mod arguments must be ('f32', 'index', 'index', 'index', 'index', 'tensor<16xf32>'): score, b, h, q_idx, kv_idx, then the captured values; got ('f32', 'index', 'index', 'index', 'index', 'tensor<8xf32>')}}
  %o = fa.attention %q, %k, %v captures(%bias) score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index, %t: tensor<8xf32>):
    %x = tensor.extract %t[%j] : tensor<8xf32>
    %r = arith.addf %s, %x : f32
    fa.yield %r : f32
  } : (tensor<1x1x16x16xf16>, tensor<1x1x16x16xf16>, tensor<1x1x16x16xf16>,
       tensor<16xf32>) -> tensor<1x1x16x16xf16>
  return %o : tensor<1x1x16x16xf16>
}

// -----

func.func @tensor_math(%q: tensor<1x1x16x16xf16>, %k: tensor<1x1x16x16xf16>,
                       %v: tensor<1x1x16x16xf16>, %bias: tensor<16xf32>)
    -> tensor<1x1x16x16xf16> {
  // expected-error @+1 {{'fa.attention' op score_mod: 'arith.addf' makes a 'tensor<16xf32>'; a score_mod body computes on scalars}}
  %o = fa.attention %q, %k, %v captures(%bias) score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index, %t: tensor<16xf32>):
    %tt = arith.addf %t, %t : tensor<16xf32>
    fa.yield %s : f32
  } : (tensor<1x1x16x16xf16>, tensor<1x1x16x16xf16>, tensor<1x1x16x16xf16>,
       tensor<16xf32>) -> tensor<1x1x16x16xf16>
  return %o : tensor<1x1x16x16xf16>
}

// -----

func.func @bad_capture(%q: tensor<1x1x16x16xf16>, %k: tensor<1x1x16x16xf16>,
                       %v: tensor<1x1x16x16xf16>, %x: f64)
    -> tensor<1x1x16x16xf16> {
  // expected-error @+1 {{'fa.attention' op captured operand #0 has type 'f64'; a capture is an f16, bf16, f32, integer or index scalar or a ranked tensor of those with no dimension of size 0}}
  %o = fa.attention %q, %k, %v captures(%x) score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index, %y: f64):
    fa.yield %s : f32
  } : (tensor<1x1x16x16xf16>, tensor<1x1x16x16xf16>, tensor<1x1x16x16xf16>,
       f64) -> tensor<1x1x16x16xf16>
  return %o : tensor<1x1x16x16xf16>
}

// -----

func.func @captures_unread(%q: tensor<1x1x16x16xf16>, %k: tensor<1x1x16x16xf16>,
                           %v: tensor<1x1x16x16xf16>, %x: f32)
    -> tensor<1x1x16x16xf16> {
  // expected-error @+1 {{'fa.attention' op has captured operands but no score_mod or mask_mod to read them}}
  %o = fa.attention %q, %k, %v captures(%x)
      : (tensor<1x1x16x16xf16>, tensor<1x1x16x16xf16>, tensor<1x1x16x16xf16>,
         f32) -> tensor<1x1x16x16xf16>
  return %o : tensor<1x1x16x16xf16>
}

// -----

func.func @uses_from_above(%q: tensor<1x1x16x16xf16>, %k: tensor<1x1x16x16xf16>,
                           %v: tensor<1x1x16x16xf16>, %x: f32)
    -> tensor<1x1x16x16xf16> {
  // expected-note @+1 {{required by region isolation constraints}}
  %o = fa.attention %q, %k, %v score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    // expected-error @+1 {{using value defined outside the region}}
    %r = arith.addf %s, %x : f32
    fa.yield %r : f32
  } : (tensor<1x1x16x16xf16>, tensor<1x1x16x16xf16>, tensor<1x1x16x16xf16>)
      -> tensor<1x1x16x16xf16>
  return %o : tensor<1x1x16x16xf16>
}

// -----

func.func @extract_of_constant(%s: tensor<16x8xf32>, %q0: index, %k0: index,
                               %b: index, %h: index) -> tensor<16x8xf32> {
  %m = arith.constant 30 : index
  // expected-error @+1 {{'fa.score_mod' op score_mod: 'arith.constant' makes a 'tensor<2xf32>'; a score_mod body computes on scalars}}
  %r = fa.score_mod %s at [%q0, %k0] in [%m, %m] head [%b, %h]
      : tensor<16x8xf32> {
  ^bb0(%x: f32, %bb: index, %hh: index, %i: index, %j: index):
    %t = arith.constant dense<1.0> : tensor<2xf32>
    fa.yield %x : f32
  }
  return %r : tensor<16x8xf32>
}

// -----

func.func @no_yield(%q: tensor<1x1x16x16xf16>, %k: tensor<1x1x16x16xf16>,
                    %v: tensor<1x1x16x16xf16>) -> tensor<1x1x16x16xf16> {
  %o = "fa.attention"(%q, %k, %v) <{operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 0>}> ({
  }, {
  ^bb0(%b: index, %h: index, %i: index, %j: index):
    // expected-error @+1 {{block with no terminator}}
    %t = arith.constant true
  }) : (tensor<1x1x16x16xf16>, tensor<1x1x16x16xf16>, tensor<1x1x16x16xf16>)
      -> tensor<1x1x16x16xf16>
  return %o : tensor<1x1x16x16xf16>
}

// -----

func.func @nested_region(%q: tensor<1x1x16x16xf16>, %k: tensor<1x1x16x16xf16>,
                         %v: tensor<1x1x16x16xf16>) -> tensor<1x1x16x16xf16> {
  // expected-error @+1 {{'fa.attention' op score_mod: 'scf.execute_region' is not allowed (arith and math ops, tensor.extract of a captured tensor, fa.yield)}}
  %o = fa.attention %q, %k, %v score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index):
    %r = scf.execute_region -> f32 {
      scf.yield %s : f32
    }
    fa.yield %r : f32
  } : (tensor<1x1x16x16xf16>, tensor<1x1x16x16xf16>, tensor<1x1x16x16xf16>)
      -> tensor<1x1x16x16xf16>
  return %o : tensor<1x1x16x16xf16>
}

// -----

func.func @empty_capture(%q: tensor<1x1x16x16xf16>, %k: tensor<1x1x16x16xf16>,
                         %v: tensor<1x1x16x16xf16>, %t: tensor<0xf32>)
    -> tensor<1x1x16x16xf16> {
  // expected-error @+1 {{'fa.attention' op captured operand #0 has type 'tensor<0xf32>'}}
  %o = fa.attention %q, %k, %v captures(%t) score_mod {
  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: index, %x: tensor<0xf32>):
    %e = tensor.extract %x[%j] : tensor<0xf32>
    %r = arith.addf %s, %e : f32
    fa.yield %r : f32
  } : (tensor<1x1x16x16xf16>, tensor<1x1x16x16xf16>, tensor<1x1x16x16xf16>,
       tensor<0xf32>) -> tensor<1x1x16x16xf16>
  return %o : tensor<1x1x16x16xf16>
}

// -----

func.func @yield_outside(%x: f32) -> f32 {
  // expected-error @+1 {{'fa.yield' op expects parent op to be one of}}
  fa.yield %x : f32
}
