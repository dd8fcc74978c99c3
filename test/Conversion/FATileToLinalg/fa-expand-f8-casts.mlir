// RUN: fa-opt %s --fa-expand-f8-casts | FileCheck %s --check-prefix=EXPAND
// RUN: fa-opt %s --fa-expand-f8-casts --convert-scf-to-cf --convert-vector-to-llvm --convert-math-to-llvm --convert-arith-to-llvm --convert-cf-to-llvm --convert-func-to-llvm --convert-index-to-llvm --reconcile-unrealized-casts \
// RUN:   | mlir-runner -e main -entry-point-result=void --shared-libs=%mlir_c_runner_utils | FileCheck %s

// fa-expand-f8-casts: no e4m3 cast is left, only integer ops on the bits.
// EXPAND-LABEL: func.func @code
// EXPAND-NOT: arith.truncf {{.*}} to f8E4M3FN
// EXPAND: math.roundeven
// EXPAND: arith.bitcast %{{.*}} : i8 to f8E4M3FN

// Run: all 256 codes round-trip (0 mismatches), then the codes of the
// chosen values.
// CHECK: 0
// CHECK-NEXT: 126
// CHECK-NEXT: 126
// CHECK-NEXT: 1
// CHECK-NEXT: 0
// CHECK-NEXT: 2
// CHECK-NEXT: 56
// CHECK-NEXT: 58
// CHECK-NEXT: 184
// CHECK-NEXT: 42
// CHECK-NEXT: 254
// CHECK-NEXT: 8

// Every e4m3 code extended to f32 and truncated back must round-trip
// (NaN codes to 0x7F with their sign dropped), and chosen f32 values must
// round to nearest even and saturate as the runtime's toF8E4M3FNBits does.
func.func @round_trip_mismatches() -> i32 {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c256 = arith.constant 256 : i32
  %c127 = arith.constant 127 : i32
  %nanMask = arith.constant 127 : i32
  %r = scf.for %i = %c0 to %c256 step %c1 iter_args(%bad = %c0) -> (i32) : i32 {
    %byte = arith.trunci %i : i32 to i8
    %f8 = arith.bitcast %byte : i8 to f8E4M3FN
    %f = arith.extf %f8 : f8E4M3FN to f32
    %back = arith.truncf %f : f32 to f8E4M3FN
    %bits = arith.bitcast %back : f8E4M3FN to i8
    %w = arith.extui %bits : i8 to i32
    %magnitude = arith.andi %i, %nanMask : i32
    %isNaN = arith.cmpi eq, %magnitude, %c127 : i32
    %expected = arith.select %isNaN, %c127, %i : i32
    %differs = arith.cmpi ne, %w, %expected : i32
    %inc = arith.extui %differs : i1 to i32
    %next = arith.addi %bad, %inc : i32
    scf.yield %next : i32
  }
  return %r : i32
}

func.func @code(%x: f32) -> i32 {
  %f8 = arith.truncf %x : f32 to f8E4M3FN
  %bits = arith.bitcast %f8 : f8E4M3FN to i8
  %w = arith.extui %bits : i8 to i32
  return %w : i32
}

func.func @main() {
  %bad = func.call @round_trip_mismatches() : () -> i32
  vector.print %bad : i32
  // 448 (0x7E); 500 saturates to 448; 2^-9 (0x01); 2^-10 ties to 0;
  // 3·2^-10 ties to even 2·2^-9 (0x02); 1.0625 ties to 1.0 (0x38);
  // 1.1875 ties to 1.25 (0x3A); -1.0 (0xB8); 0.3 to 0.3125 (0x2A);
  // -600 saturates (0xFE); 2^-6 (0x08).
  %values = arith.constant dense<[448.0, 500.0, 0.001953125, 0.0009765625,
      0.0029296875, 1.0625, 1.1875, -1.0, 0.3, -600.0, 0.015625]> : vector<11xf32>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c11 = arith.constant 11 : index
  scf.for %i = %c0 to %c11 step %c1 {
    %x = vector.extract %values[%i] : f32 from vector<11xf32>
    %c = func.call @code(%x) : (f32) -> i32
    vector.print %c : i32
  }
  return
}
