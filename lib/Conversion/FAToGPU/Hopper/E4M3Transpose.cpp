//===- E4M3Transpose.cpp - an e4m3 tile transposed in shared memory -------===//
//
// Part of fa-mlir.
//
//===----------------------------------------------------------------------===//

#include "E4M3Transpose.h"

#include "HopperPtx.h"
#include "ScheduleValues.h"

#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;
using namespace mlir::fa;
using namespace mlir::fa::hopper;

void hopper::transposeValueTile(OpBuilder &b, Location loc, Value thread,
                               Value source, Value destination, int64_t keys,
                               int64_t columns) {
  auto cst = [&](int64_t v) { return i32Constant(b, loc, v); };
  auto add = [&](Value x, Value y) { return arith::AddIOp::create(b, loc, x, y).getResult(); };
  auto mul = [&](Value x, int64_t y) { return arith::MulIOp::create(b, loc, x, cst(y)).getResult(); };
  auto div = [&](Value x, int64_t y) { return arith::DivUIOp::create(b, loc, x, cst(y)).getResult(); };
  auto rem = [&](Value x, int64_t y) { return arith::RemUIOp::create(b, loc, x, cst(y)).getResult(); };
  auto xorv = [&](Value x, Value y) { return arith::XOrIOp::create(b, loc, x, y).getResult(); };
  auto xorc = [&](Value x, int64_t y) { return y ? xorv(x, cst(y)) : x; };
  assert(keys % 32 == 0 && columns % 16 == 0 && "32-key steps of 16-column chunks");
  Value tid = toI32(b, loc, thread);
  Value warp = div(tid, 32), lane = rem(tid, 32);
  constexpr int64_t kWarps = kWarpgroupThreads / 32;
  // The last round only the warps below steps % 4 when the keys are not a
  // multiple of 128 (224: 2, 2, 2, 1).
  int64_t steps = keys / 32;
  int64_t stepsPerWarp = llvm::divideCeil(steps, kWarps);
  // Reads: lane L gives row L % 8 of matrix L / 8: key 32w + L % 8 (+ a
  // constant), chunk (c0 + L / 8) ^ (L % 8) = c0 ^ (L / 8 ^ L % 8).
  Value rowInMatrix = rem(lane, 8), matrix = div(lane, 8);
  Value readBase =
      add(source, add(mul(add(mul(warp, 32), rowInMatrix), kPanelRowBytes),
                      mul(xorv(matrix, rowInMatrix), 16)));
  // Writes: lane L gives row i = L % 8 of matrix j = L / 8 (chunk q0 + j /
  // 2, parity j % 2): Vᵀ row 16(j / 2) + 2i + (parity ^ i / 4) (+ 16 q0),
  // key chunk 2w (+ h) ^ row % 8.
  Value row = add(mul(rowInMatrix, 2), rem(xorv(matrix, div(lane, 4)), 2));
  Value writeBase = add(
      destination,
      add(mul(add(mul(div(matrix, 2), 16), row), kPanelRowBytes),
          mul(xorv(mul(warp, 2), rem(row, 8)), 16)));
  // Lane T's words for columns c and c + 1 (selectors 0x6420, 0x7531),
  // swapped where T / 4 >= 4: 0x1111 apart.
  Value swapped = div(lane, 16);
  Value evenSelector = add(cst(0x6420), mul(swapped, 0x1111));
  Value oddSelector = arith::SubIOp::create(b, loc, cst(0x7531), mul(swapped, 0x1111));
  // One task's chunks: 4, then 2, then 1 (each start a multiple of its
  // count) of a panel's min(8, columns left / 16).
  auto piecesOf = [](int64_t chunks) {
    SmallVector<std::pair<int64_t, int64_t>> pieces; // (c0, n)
    for (int64_t n = 4, c0 = 0; n >= 1; n /= 2)
      for (; chunks - c0 >= n; c0 += n)
        pieces.push_back({c0, n});
    return pieces;
  };
  // The matrix instructions come after the caller's barrier wait (which
  // orders every memory access); a task's two loads go first, then its
  // stores.
  auto transposeStep = [&](int64_t a) {
    for (int64_t h = 0; h < 2; ++h) {
      Value writeAt = xorc(writeBase, 16 * h);
      for (int64_t panel = 0; panel * 128 < columns; ++panel) {
        int64_t chunks = std::min<int64_t>(8, (columns - 128 * panel) / 16);
        for (auto [c0, n] : piecesOf(chunks)) {
          Value readAt = xorc(readBase, 16 * c0);
          int64_t readOffset = panel * keys * kPanelRowBytes +
                               (128 * a + 16 * h) * kPanelRowBytes;
          SmallVector<Value> low = loadMatrixTransposed(b, loc, readAt, readOffset, n);
          SmallVector<Value> high = loadMatrixTransposed(
              b, loc, readAt, readOffset + 8 * kPanelRowBytes, n);
          for (int64_t q0 = 0; q0 < n; q0 += 2) {
            // Byte k of low[q] is key (2t + k / 2)'s column c + k % 2.
            SmallVector<Value> words;
            for (int64_t q = q0; q < std::min(q0 + 2, n); ++q) {
              words.push_back(bytePermute(b, loc, low[q], high[q], evenSelector));
              words.push_back(bytePermute(b, loc, low[q], high[q], oddSelector));
            }
            storeMatrix(b, loc, writeAt,
                        16 * (8 * panel + c0 + q0) * kPanelRowBytes +
                            a * columns * kPanelRowBytes,
                        words);
          }
        }
      }
    }
  };
  for (int64_t a = 0; a < stepsPerWarp; ++a) {
    int64_t warpsInRound = std::min(kWarps, steps - a * kWarps);
    if (warpsInRound == kWarps) {
      transposeStep(a);
      continue;
    }
    // Warp-uniform: the matrix instructions are .sync.aligned.
    Value takes = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, warp,
                                        cst(warpsInRound));
    auto round = scf::IfOp::create(b, loc, takes, /*withElseRegion=*/false);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(round.thenBlock());
    transposeStep(a);
  }
}
