// RUN: fa-opt %s -split-input-file -verify-diagnostics

// One case per verifier error of the distributed-level ops
// (lib/Dialect/FA/IR/FAGPUOps.cpp).

#wg = #gpu.address_space<workgroup>

func.func @shared_tile$no_layout(%smem: memref<64x64xbf16, #wg>) {
  // expected-error @+1 {{'fa.shared_tile' op result must carry a #fa.shared or #fa.tma_shared layout}}
  %t = fa.shared_tile %smem : memref<64x64xbf16, #wg> -> tensor<64x64xbf16>
  return
}

// -----

#wg = #gpu.address_space<workgroup>

// A staged buffer read without a stage index.
func.func @shared_tile$missing_stage(%smem: memref<2x64x64xbf16, #wg>) {
  // expected-error @+1 {{'fa.shared_tile' op buffer must be [rows, width]}}
  %t = fa.shared_tile %smem : memref<2x64x64xbf16, #wg> -> tensor<64x64xbf16, #fa.shared<rowElements = 64>>
  return
}

// -----

#wg = #gpu.address_space<workgroup>

func.func @shared_tile$stage_of_unstaged(%smem: memref<64x64xbf16, #wg>, %stage: index) {
  // expected-error @+1 {{'fa.shared_tile' op buffer must be [rows, width] behind a stage index ([stages, rows, width])}}
  %t = fa.shared_tile %smem[%stage] : memref<64x64xbf16, #wg> -> tensor<64x64xbf16, #fa.shared<rowElements = 64>>
  return
}

// -----

#wg = #gpu.address_space<workgroup>

// The layout's row width must be the buffer's.
func.func @shared_tile$row_elements(%smem: memref<64x128xbf16, #wg>) {
  // expected-error @+1 {{'fa.shared_tile' op tile 'tensor<64x64xbf16, #fa.shared<rowElements = 64>>' does not fit buffer rows of 128 elements}}
  %t = fa.shared_tile %smem : memref<64x128xbf16, #wg> -> tensor<64x64xbf16, #fa.shared<rowElements = 64>>
  return
}

// -----

#wg = #gpu.address_space<workgroup>

// A tile wider than the row, or with other rows, does not fit either.
func.func @shared_tile$too_wide(%smem: memref<64x64xbf16, #wg>) {
  // expected-error @+1 {{'fa.shared_tile' op tile 'tensor<64x72xbf16, #fa.shared<rowElements = 64>>' does not fit buffer rows of 64 elements}}
  %t = fa.shared_tile %smem : memref<64x64xbf16, #wg> -> tensor<64x72xbf16, #fa.shared<rowElements = 64>>
  return
}

// -----

#wg = #gpu.address_space<workgroup>

func.func @shared_tile$rows(%smem: memref<2x64x64xbf16, #wg>, %stage: index) {
  // expected-error @+1 {{'fa.shared_tile' op tile 'tensor<128x64xbf16, #fa.shared<rowElements = 64>>' does not fit buffer rows of 64 elements}}
  %t = fa.shared_tile %smem[%stage] : memref<2x64x64xbf16, #wg> -> tensor<128x64xbf16, #fa.shared<rowElements = 64>>
  return
}

// -----

#wg = #gpu.address_space<workgroup>

func.func @shared_tile$element_type(%smem: memref<64x64xbf16, #wg>) {
  // expected-error @+1 {{'fa.shared_tile' op tile and buffer element types differ}}
  %t = fa.shared_tile %smem : memref<64x64xbf16, #wg> -> tensor<64x64xf16, #fa.shared<rowElements = 64>>
  return
}

// -----

func.func @load_operand$not_shared(%t: tensor<64x64xbf16, #fa.fragment<warps = 4, mTiles = 1>>) {
  // expected-error @+1 {{'fa.load_operand' op operand must carry a #fa.shared layout}}
  %a = fa.load_operand %t : tensor<64x64xbf16, #fa.fragment<warps = 4, mTiles = 1>> -> tensor<64x64xbf16, #fa.operand<warps = 4, mTiles = 1>>
  return
}

// -----

func.func @load_operand$not_operand(%t: tensor<64x64xbf16, #fa.shared<rowElements = 64>>) {
  // expected-error @+1 {{'fa.load_operand' op result must carry a #fa.operand layout}}
  %a = fa.load_operand %t : tensor<64x64xbf16, #fa.shared<rowElements = 64>> -> tensor<64x64xbf16, #fa.fragment<warps = 4, mTiles = 1>>
  return
}

// -----

func.func @load_operand$shape(%t: tensor<64x64xbf16, #fa.shared<rowElements = 64>>) {
  // expected-error @+1 {{'fa.load_operand' op shapes differ}}
  %a = fa.load_operand %t : tensor<64x64xbf16, #fa.shared<rowElements = 64>> -> tensor<64x32xbf16, #fa.operand<warps = 4, mTiles = 1>>
  return
}

// -----

// Only row statistics change layout: a 2-D tile is refused.
func.func @convert_layout$tile(%t: tensor<64x64xf32, #fa.fragment<warps = 4, mTiles = 1, quadPartial = true>>) {
  // expected-error @+1 {{'fa.convert_layout' op converts 1-D #fa.fragment rows}}
  %r = fa.convert_layout %t : tensor<64x64xf32, #fa.fragment<warps = 4, mTiles = 1, quadPartial = true>> -> tensor<64x64xf32, #fa.fragment<warps = 4, mTiles = 1>>
  return
}

// -----

func.func @convert_layout$no_layout(%t: tensor<64xf32>) {
  // expected-error @+1 {{'fa.convert_layout' op converts 1-D #fa.fragment rows}}
  %r = fa.convert_layout %t : tensor<64xf32> -> tensor<64xf32, #fa.fragment<warps = 4, mTiles = 1>>
  return
}

// -----

// Full rows to quad-partial rows is not a conversion (it is not defined).
func.func @convert_layout$to_partial(%t: tensor<64xf32, #fa.fragment<warps = 4, mTiles = 1>>) {
  // expected-error @+1 {{'fa.convert_layout' op only quad-partial rows to full rows is defined}}
  %r = fa.convert_layout %t : tensor<64xf32, #fa.fragment<warps = 4, mTiles = 1>> -> tensor<64xf32, #fa.fragment<warps = 4, mTiles = 1, quadPartial = true>>
  return
}

// -----

// The conversion keeps the warps and m tiles.
func.func @convert_layout$other_tiling(%t: tensor<64xf32, #fa.fragment<warps = 4, mTiles = 1, quadPartial = true>>) {
  // expected-error @+1 {{'fa.convert_layout' op only quad-partial rows to full rows is defined}}
  %r = fa.convert_layout %t : tensor<64xf32, #fa.fragment<warps = 4, mTiles = 1, quadPartial = true>> -> tensor<64xf32, #fa.fragment<warps = 2, mTiles = 2>>
  return
}

// -----

func.func @store_fragment$partial(%l: tensor<64xf32, #fa.fragment<warps = 4, mTiles = 1, quadPartial = true>>,
                                  %out: memref<?xf32>, %i: index) {
  // expected-error @+1 {{'fa.store_fragment' op tile must carry a #fa.fragment layout (not quad-partial)}}
  fa.store_fragment %l, %out[%i] rows [%i, %i] : tensor<64xf32, #fa.fragment<warps = 4, mTiles = 1, quadPartial = true>>, memref<?xf32>
  return
}

// -----

func.func @store_fragment$no_layout(%o: tensor<64x64xbf16>, %out: memref<?xbf16>, %i: index) {
  // expected-error @+1 {{'fa.store_fragment' op tile must carry a #fa.fragment layout (not quad-partial)}}
  fa.store_fragment %o, %out[%i] rows [%i, %i] stride %i : tensor<64x64xbf16>, memref<?xbf16>
  return
}

// -----

// 4 warps x 2 m tiles x 16 rows = 128 rows, not 64.
func.func @store_fragment$rows(%o: tensor<64x64xbf16, #fa.fragment<warps = 4, mTiles = 2>>,
                               %out: memref<?xbf16>, %i: index) {
  // expected-error @+1 {{'fa.store_fragment' op tile has 64 rows, its layout 128}}
  fa.store_fragment %o, %out[%i] rows [%i, %i] stride %i : tensor<64x64xbf16, #fa.fragment<warps = 4, mTiles = 2>>, memref<?xbf16>
  return
}

// -----

func.func @store_fragment$no_stride(%o: tensor<64x64xbf16, #fa.fragment<warps = 4, mTiles = 1>>,
                                    %out: memref<?xbf16>, %i: index) {
  // expected-error @+1 {{'fa.store_fragment' op a 2-D tile needs a row stride}}
  fa.store_fragment %o, %out[%i] rows [%i, %i] : tensor<64x64xbf16, #fa.fragment<warps = 4, mTiles = 1>>, memref<?xbf16>
  return
}

// -----

func.func @store_fragment$element_type(%o: tensor<64x64xf32, #fa.fragment<warps = 4, mTiles = 1>>,
                                       %out: memref<?xbf16>, %i: index) {
  // expected-error @+1 {{'fa.store_fragment' op tile and buffer element types differ}}
  fa.store_fragment %o, %out[%i] rows [%i, %i] stride %i : tensor<64x64xf32, #fa.fragment<warps = 4, mTiles = 1>>, memref<?xbf16>
  return
}

// -----

// A rank-0 tile has no rows to store (this crashed the verifier once).
func.func @store_fragment$rank0(%t: tensor<f32, #fa.fragment<warps = 4, mTiles = 1>>,
                                %out: memref<?xf32>, %i: index) {
  // expected-error @+1 {{'fa.store_fragment' op stores a 1-D (rows) or 2-D tile, got rank 0}}
  fa.store_fragment %t, %out[%i] rows [%i, %i] : tensor<f32, #fa.fragment<warps = 4, mTiles = 1>>, memref<?xf32>
  return
}

// -----

func.func @convert_layout$shape(%l: tensor<64xf32, #fa.fragment<warps = 4, mTiles = 1, quadPartial = true>>) {
  // expected-error @+1 {{'fa.convert_layout' op converts the layout only: shape and element type must not change}}
  %r = fa.convert_layout %l : tensor<64xf32, #fa.fragment<warps = 4, mTiles = 1, quadPartial = true>> -> tensor<128xf32, #fa.fragment<warps = 4, mTiles = 1>>
  return
}

// -----

func.func @load_operand$element_type(%q: tensor<64x64xbf16, #fa.shared<rowElements = 64>>) {
  // expected-error @+1 {{'fa.load_operand' op element types differ}}
  %a = fa.load_operand %q : tensor<64x64xbf16, #fa.shared<rowElements = 64>> -> tensor<64x64xf16, #fa.operand<warps = 4, mTiles = 1>>
  return
}

// -----

// expected-error @+1 {{warps and mTiles must be >= 1, got 0 and -3}}
func.func @fragment$warps(%t: tensor<64xf32, #fa.fragment<warps = 0, mTiles = -3>>) {
  return
}

// -----

// expected-error @+1 {{warps and mTiles must be >= 1, got 4 and 0}}
func.func @operand$m_tiles(%t: tensor<64x64xbf16, #fa.operand<warps = 4, mTiles = 0>>) {
  return
}

// -----

// expected-error @+1 {{deferredScale must be > 0 (the row max commutes only with a positive scale)}}
func.func @fragment$scale(%t: tensor<64x64xf32, #fa.fragment<warps = 4, mTiles = 1, deferredScale = -1.0 : f32>>) {
  return
}

// -----

// expected-error @+1 {{deferredDescale needs a deferredScale}}
func.func @fragment$descale(%t: tensor<64x64xf32, #fa.fragment<warps = 4, mTiles = 1, deferredDescale = true>>) {
  return
}

// -----

// expected-error @+1 {{rowElements must be a positive multiple of 64, got 96}}
func.func @shared$row(%t: tensor<64x96xbf16, #fa.shared<rowElements = 96>>) {
  return
}

// -----

#wg = #gpu.address_space<workgroup>

// A TMA-layout tile reads [panels, rows, 64] (behind a stage index).
func.func @tma_tile$missing_stage(%smem: memref<2x2x64x64xbf16, #wg>) {
  // expected-error @+1 {{'fa.shared_tile' op buffer must be [panels, rows, panel width]}}
  %t = fa.shared_tile %smem : memref<2x2x64x64xbf16, #wg> -> tensor<64x128xbf16, #fa.tma_shared<swizzleBytes = 128>>
  return
}

// -----

#wg = #gpu.address_space<workgroup>

// Panels must be one swizzle span (128 bytes = 64 16-bit elements) wide.
func.func @tma_tile$panel_width(%smem: memref<2x64x32xbf16, #wg>) {
  // expected-error @+1 {{'fa.shared_tile' op panels must be 128 bytes wide}}
  %t = fa.shared_tile %smem : memref<2x64x32xbf16, #wg> -> tensor<64x64xbf16, #fa.tma_shared<swizzleBytes = 128>>
  return
}

// -----

#wg = #gpu.address_space<workgroup>

func.func @tma_tile$too_wide(%smem: memref<2x64x64xbf16, #wg>) {
  // expected-error @+1 {{'fa.shared_tile' op tile 'tensor<64x192xbf16, #fa.tma_shared<swizzleBytes = 128>>' does not fit 2 panels of 64 rows}}
  %t = fa.shared_tile %smem : memref<2x64x64xbf16, #wg> -> tensor<64x192xbf16, #fa.tma_shared<swizzleBytes = 128>>
  return
}

// -----

// expected-error @+1 {{swizzleBytes must be 128, got 64}}
func.func @tma_layout$swizzle(%t: tensor<64x64xbf16, #fa.tma_shared<swizzleBytes = 64>>) {
  return
}

// -----

// fa.mma_wait waits for the MMA that defines its operand, and only for it.
func.func @mma_wait$not_an_mma(%t: tensor<64x64xf32, #fa.fragment<warps = 4, mTiles = 1>>) {
  // expected-error @+1 {{'fa.mma_wait' op operand must be the only use of an fa.qk_scores or fa.matmul result (the MMA it waits for)}}
  %w = fa.mma_wait %t pending = 0 : tensor<64x64xf32, #fa.fragment<warps = 4, mTiles = 1>>
  return
}

// -----

func.func @load_fragment$no_stride(%b: memref<?xbf16>, %i: index) {
  // expected-error @+1 {{'fa.load_fragment' op a 2-D tile needs a row stride}}
  %t = fa.load_fragment %b[%i] rows [%i, %i] padding 0.0 : memref<?xbf16> -> tensor<64x64xbf16, #fa.fragment<warps = 4, mTiles = 1>>
  return
}

// -----

func.func @load_fragment$rows(%b: memref<?xf32>, %i: index) {
  // expected-error @+1 {{'fa.load_fragment' op result has 32 rows, its layout 64}}
  %t = fa.load_fragment %b[%i] rows [%i, %i] padding 0.0 : memref<?xf32> -> tensor<32xf32, #fa.fragment<warps = 4, mTiles = 1>>
  return
}

// -----

func.func @store_shared$narrow(%t: tensor<64x64xbf16, #fa.fragment<warps = 4, mTiles = 1>>,
                               %smem: memref<64x32xbf16, #gpu.address_space<workgroup>>) {
  // expected-error @+1 {{'fa.store_shared' op buffer must be [rows, W], W >= the tile's columns and a multiple of 64 (#fa.shared rows)}}
  fa.store_shared %t, %smem : tensor<64x64xbf16, #fa.fragment<warps = 4, mTiles = 1>>, memref<64x32xbf16, #gpu.address_space<workgroup>>
  return
}

// -----

func.func @store_shared$panels(%t: tensor<64x64xf32, #fa.fragment<warps = 4, mTiles = 1>>,
                               %smem: memref<2x64x64xf32, #gpu.address_space<workgroup>>) {
  // expected-error @+1 {{'fa.store_shared' op a panel buffer must be [P, rows, 32] with 32·P >= the tile's columns}}
  fa.store_shared %t, %smem : tensor<64x64xf32, #fa.fragment<warps = 4, mTiles = 1>>, memref<2x64x64xf32, #gpu.address_space<workgroup>>
  return
}

// -----

func.func @store_shared$types(%t: tensor<64x64xbf16, #fa.fragment<warps = 4, mTiles = 1>>,
                              %smem: memref<64x64xf16, #gpu.address_space<workgroup>>) {
  // expected-error @+1 {{'fa.store_shared' op stores a 16-bit or f32 tile into a buffer of its type}}
  fa.store_shared %t, %smem : tensor<64x64xbf16, #fa.fragment<warps = 4, mTiles = 1>>, memref<64x64xf16, #gpu.address_space<workgroup>>
  return
}

// -----

func.func @accumulate_fragment$bf16(%t: tensor<64x64xbf16, #fa.fragment<warps = 4, mTiles = 1>>,
                                    %b: memref<?xbf16>, %i: index) {
  // expected-error @+1 {{'fa.accumulate_fragment' op adds an f32 tile into an f32 buffer}}
  fa.accumulate_fragment %t, %b[%i] rows [%i, %i] stride %i : tensor<64x64xbf16, #fa.fragment<warps = 4, mTiles = 1>>, memref<?xbf16>
  return
}

// -----

func.func @load_fragment$mma_blocks_bf16(%b: memref<?xbf16>, %i: index) {
  // expected-error @+1 {{'fa.load_fragment' op mma_blocks reads a 2-D f32 tile}}
  %r = fa.load_fragment %b[%i] rows [%i, %i] stride %i padding 0.0 mma_blocks
      : memref<?xbf16> -> tensor<128x64xbf16, #fa.fragment<warps = 8, mTiles = 1>>
  return
}

// -----

func.func @load_fragment$predicated_2d(%b: memref<?xf32>, %i: index) {
  // expected-error @+1 {{'fa.load_fragment' op predicated reads a 1-D f32 tile}}
  %r = fa.load_fragment %b[%i] rows [%i, %i] stride %i padding 0.0 predicated
      : memref<?xf32> -> tensor<64x64xf32, #fa.fragment<warps = 4, mTiles = 1>>
  return
}

// -----

// The instruction ops (fa.wgmma, fa.wgmma_wait).

func.func @bad_type(%da: i64, %db: i64) {
  // expected-error @+1 {{input type must be f16, bf16 or f8E4M3FN, got 'f32'}}
  %d:4 = fa.wgmma a(desc %da + 0) b(desc %db + 0) : f32 -> f32, f32, f32, f32
  return
}

// -----

func.func @bad_n(%da: i64, %db: i64) {
  // expected-error @+1 {{N (two per result) must be a multiple of 8 in [8, 256], got 6}}
  %d:3 = fa.wgmma a(desc %da + 0) b(desc %db + 0) : bf16 -> f32, f32, f32
  return
}

// -----

func.func @bad_acc(%da: i64, %db: i64, %c: f32) {
  // expected-error @+1 {{takes no accumulators or one per result}}
  %d:4 = fa.wgmma a(desc %da + 0) b(desc %db + 0) acc(%c) : bf16 -> f32, f32, f32, f32
  return
}

// -----

func.func @both_a(%da: i64, %db: i64, %r: i32) {
  // expected-error @+1 {{A is either a descriptor or registers}}
  %d:4 = "fa.wgmma"(%da, %r, %r, %r, %r, %db) <{input_type = bf16, operandSegmentSizes = array<i32: 1, 4, 1, 0>}>
      : (i64, i32, i32, i32, i32, i64) -> (f32, f32, f32, f32)
  return
}

// -----

func.func @no_a(%db: i64) {
  // expected-error @+1 {{A is either a descriptor or registers}}
  %d:4 = fa.wgmma a() b(desc %db + 0) : bf16 -> f32, f32, f32, f32
  return
}

// -----

func.func @three_registers(%db: i64, %r: i32) {
  // expected-error @+1 {{A in registers is four i32 values}}
  %d:4 = fa.wgmma a(%r, %r, %r) b(desc %db + 0) : bf16 -> f32, f32, f32, f32
  return
}

// -----

func.func @register_transpose(%db: i64, %r: i32) {
  // expected-error @+1 {{only a shared-memory A has an offset or transposes}}
  %d:4 = fa.wgmma a(%r, %r, %r, %r) b(desc %db + 0) {transpose_a} : bf16 -> f32, f32, f32, f32
  return
}

// -----

func.func @bad_offset(%da: i64, %db: i64) {
  // expected-error @+1 {{descriptor offsets are non-negative multiples of 16 bytes, got 8}}
  %d:4 = fa.wgmma a(desc %da + 0) b(desc %db + 8) : bf16 -> f32, f32, f32, f32
  return
}

// -----

func.func @e4m3_transpose(%da: i64, %db: i64) {
  // expected-error @+1 {{an e4m3 wgmma reads its operands K-major only}}
  %d:4 = fa.wgmma a(desc %da + 0) b(desc %db + 0) {transpose_b} : f8E4M3FN -> f32, f32, f32, f32
  return
}

// -----

func.func @bad_pending(%a: f32) {
  // expected-error @+1 {{pending must be in [0, 7], got 8}}
  %w = fa.wgmma_wait 8, %a : f32
  return
}
