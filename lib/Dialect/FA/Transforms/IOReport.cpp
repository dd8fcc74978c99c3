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

#include "llvm/Support/Format.h"
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

static int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

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
    int64_t heads = B * Hq;
    // 2·M·N·D for S = QKᵀ plus 2·M·N·Dv for P·V, per query head.
    int64_t flops = heads * 2 * M * N * (D + Dv);
    int64_t qkvBytes = e * (heads * M * D + B * Hkv * N * (D + Dv));
    int64_t outBytes = e * heads * M * Dv;

    // Standard attention: S = QKᵀ written, read for softmax, P written,
    // read for P·V (all M×N per head, in the input precision).
    Traffic standard;
    standard.readBytes = qkvBytes + 2 * e * heads * M * N;
    standard.writeBytes = 2 * e * heads * M * N + outBytes;

    auto tiled = [&](int64_t blockM, int64_t blockN) {
      Traffic t;
      // Q once; K and V once per Q block of each query head.
      t.readBytes = e * heads * M * D +
                    e * heads * ceilDiv(M, blockM) * N * (D + Dv);
      t.writeBytes = outBytes + 4 * heads * M; // O and the f32 LSE
      (void)blockN;
      return t;
    };
    auto onChipBytes = [&](int64_t blockM, int64_t blockN) {
      // Q block, K and V blocks (input precision); S/P tile, acc, m and l (f32).
      return e * (blockM * D + blockN * (D + Dv)) +
             4 * (blockM * blockN + blockM * Dv + 2 * blockM);
    };
    // FlashAttention's choice for on-chip memory of S elements:
    // B_c = ceil(S / 4d), B_r = min(B_c, d).
    int64_t sramElements = sramBytes / e;
    int64_t paperBlockN = ceilDiv(sramElements, 4 * D);
    int64_t paperBlockM = std::min(paperBlockN, D);

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
         tiled(blockM, blockN));
    int64_t needed = onChipBytes(blockM, blockN);
    os << "  on-chip bytes per block: " << needed
       << (needed <= sramBytes ? " (fits)" : " (does not fit)") << "\n";
    line(("tiled from sram block_m=" + Twine(paperBlockM) +
          " block_n=" + Twine(paperBlockN))
             .str(),
         tiled(paperBlockM, paperBlockN));
  }

  void runOnOperation() override {
    if (blockM <= 0 || blockN <= 0 || sramBytes <= 0) {
      getOperation().emitError("fa-io-report: sizes must be > 0");
      return signalPassFailure();
    }
    getOperation().walk([&](AttentionOp op) { report(op); });
  }
};

} // namespace
