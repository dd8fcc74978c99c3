//===- IOReport.cpp - fa-io-report ----------------------------------------===//
//
// Part of fa-mlir.
//
// The IO-complexity argument of FlashAttention (Dao et al. 2022, Theorem 2),
// evaluated for concrete problems: standard attention writes S and P to HBM
// and reads them back, Θ(N·d + N²) bytes per head; the tiled form never does,
// and reads K and V once per Q block, Θ(N²·d / B_r) = Θ(N²·d²/M) bytes for
// on-chip memory M. Closed forms: docs/passes.md.
//
//===----------------------------------------------------------------------===//

#include "fa/Dialect/FA/Transforms/Passes.h"

#include "TileBuilder.h"

#include "llvm/Support/Format.h"
#include <algorithm>
#include <initializer_list>
#include "llvm/Support/raw_ostream.h"

namespace mlir {
namespace fa {
#define GEN_PASS_DEF_FAIOREPORT
#include "fa/Dialect/FA/Transforms/Passes.h.inc"
} // namespace fa
} // namespace mlir

using namespace mlir;
using namespace mlir::fa;

namespace {

struct Traffic {
  int64_t readBytes = 0, writeBytes = 0;
};

/// int64 arithmetic that remembers an overflow instead of wrapping: the
/// verifier bounds each tensor (2^45 elements), not products such as
/// B·Hq·M·N·D, which reach 2^90 on verified input.
struct CheckedMath {
  bool overflowed = false;

  int64_t mul(int64_t a, int64_t b) {
    int64_t product;
    overflowed |= __builtin_mul_overflow(a, b, &product);
    return product;
  }
  int64_t add(int64_t a, int64_t b) {
    int64_t sum;
    overflowed |= __builtin_add_overflow(a, b, &sum);
    return sum;
  }
  int64_t mul(std::initializer_list<int64_t> factors) {
    int64_t product = 1;
    for (int64_t factor : factors)
      product = mul(product, factor);
    return product;
  }
};

/// ceil(a / b) for a >= 0, b >= 1, without forming a + b - 1 (b may be huge).
static int64_t ceilDiv(int64_t a, int64_t b) { return a / b + (a % b != 0); }

struct FAIOReportPass : fa::impl::FAIOReportBase<FAIOReportPass> {
  using FAIOReportBase::FAIOReportBase;

  void report(AttentionOp op) {
    auto q = op.getQuery().getType(), k = op.getKey().getType(),
         v = op.getValue().getType();
    if (!q.hasStaticShape() || !k.hasStaticShape() || !v.hasStaticShape()) {
      op.emitOpError("fa-io-report needs static shapes");
      return signalPassFailure();
    }
    int64_t B = q.getDimSize(0), Hq = q.getDimSize(1), Hkv = k.getDimSize(1),
            M = q.getDimSize(2), N = k.getDimSize(2), D = q.getDimSize(3),
            Dv = v.getDimSize(3);
    int64_t e = (q.getElementTypeBitWidth() + 7) / 8; // bytes per element
    CheckedMath c;
    int64_t heads = c.mul(B, Hq);
    // 2·M·N·D for S = QKᵀ plus 2·M·N·Dv for P·V, per query head.
    int64_t flops = c.mul({heads, 2, M, N, D + Dv});
    int64_t qkvBytes =
        c.mul(e, c.add(c.mul({heads, M, D}), c.mul({B, Hkv, N, D + Dv})));
    int64_t outBytes = c.mul({e, heads, M, Dv});

    // Standard attention: S = QKᵀ written, read for softmax, P written,
    // read for P·V (all M×N per head, in the input precision).
    Traffic standard;
    int64_t scoreBytes = c.mul({2, e, heads, M, N});
    standard.readBytes = c.add(qkvBytes, scoreBytes);
    standard.writeBytes = c.add(scoreBytes, outBytes);

    auto tiled = [&](int64_t blockM) {
      Traffic t;
      // Q once; K and V once per Q block of each query head.
      t.readBytes = c.add(c.mul({e, heads, M, D}),
                          c.mul({e, heads, ceilDiv(M, blockM), N, D + Dv}));
      t.writeBytes = c.add(outBytes, c.mul({4, heads, M})); // O, f32 LSE
      return t;
    };
    auto onChipBytes = [&](int64_t blockM, int64_t blockN) {
      // Q block, K and V blocks (input precision); S/P tile, acc, m and l (f32).
      return c.add(
          c.mul(e, c.add(c.mul(blockM, D), c.mul(blockN, D + Dv))),
          c.mul(4, c.add(c.add(c.mul(blockM, blockN), c.mul(blockM, Dv)),
                         c.mul(2, blockM))));
    };
    // FlashAttention's choice for on-chip memory of S elements:
    // B_c = ceil(S / 4d), B_r = min(B_c, d); at least one row when the
    // memory holds less than one element.
    int64_t sramElements = sramBytes / e;
    int64_t paperBlockN = std::max<int64_t>(1, ceilDiv(sramElements, c.mul(4, D)));
    int64_t paperBlockM = std::min(paperBlockN, D);

    Traffic tiledTraffic = tiled(blockM);
    Traffic paperTraffic = tiled(paperBlockM);
    int64_t needed = onChipBytes(blockM, blockN);
    c.add(standard.readBytes, standard.writeBytes);
    c.add(tiledTraffic.readBytes, tiledTraffic.writeBytes);
    c.add(paperTraffic.readBytes, paperTraffic.writeBytes);
    if (c.overflowed) {
      op.emitOpError() << "fa-io-report: the FLOP or byte counts of this "
                          "problem (B="
                       << B << " Hq=" << Hq << " M=" << M << " N=" << N
                       << " D=" << D << " Dv=" << Dv
                       << ", block_m=" << static_cast<int64_t>(blockM)
                       << " block_n=" << static_cast<int64_t>(blockN)
                       << ") overflow int64";
      return signalPassFailure();
    }

    llvm::raw_ostream &os = llvm::outs();
    auto line = [&](StringRef name, const Traffic &t) {
      int64_t total = t.readBytes + t.writeBytes;
      os << "  " << name << ": read " << t.readBytes << " B, write "
         << t.writeBytes << " B, total " << total << " B, intensity ";
      os << llvm::format("%.2f", static_cast<double>(flops) / total)
         << " FLOP/B\n";
    };
    os << "fa-io-report: B=" << B << " Hq=" << Hq << " Hkv=" << Hkv
       << " M=" << M << " N=" << N << " D=" << D << " Dv=" << Dv
       << " element-bytes=" << e << " sram-bytes=" << sramBytes << "\n";
    os << "  flops: " << flops << "\n";
    line("standard", standard);
    line(("tiled block_m=" + Twine(blockM) + " block_n=" + Twine(blockN)).str(),
         tiledTraffic);
    os << "  on-chip bytes per block: " << needed
       << (needed <= sramBytes ? " (fits)" : " (does not fit)") << "\n";
    line(("tiled from sram block_m=" + Twine(paperBlockM) +
          " block_n=" + Twine(paperBlockN))
             .str(),
         paperTraffic);
  }

  void runOnOperation() override {
    // The blocks follow fa-tile's rule (that is the tiling reported on).
    if (failed(verifyBlockOptions(getOperation(), "fa-io-report", blockM,
                                  blockN)))
      return signalPassFailure();
    if (sramBytes <= 0) {
      getOperation().emitError()
          << "fa-io-report: sram-bytes must be > 0, but is "
          << static_cast<int64_t>(sramBytes);
      return signalPassFailure();
    }
    getOperation().walk([&](AttentionOp op) { report(op); });
  }
};

} // namespace
