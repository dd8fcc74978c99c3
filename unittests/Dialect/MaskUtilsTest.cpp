//===- MaskUtilsTest.cpp - the mask's tile ranges against its pairs -------===//
//
// Part of fa-mlir.
//
// buildUnmaskedKeyRange (and its transpose, buildUnmaskedQueryRange, for
// KV-outer loops) decides which tiles a schedule runs without the mask
// (sm_90a: a loop of their own). Checked exhaustively on small sizes,
// for every mask kind, against the per-(query, key) definition
// (buildKeyVisible) and the per-tile one (buildTileNeedsMask): a tile inside
// the range needs no mask and every pair of it is visible, and every tile
// outside it does need the mask. The IR is evaluated by a small
// interpreter of the index arithmetic these builders emit.
//
//===----------------------------------------------------------------------===//

#include "fa/Dialect/FA/Utils/MaskUtils.h"

#include "fa/Dialect/FA/IR/FADialect.h"
#include "fa/Dialect/FA/IR/FAOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include "llvm/ADT/TypeSwitch.h"

#include <gtest/gtest.h>

using namespace mlir;
using namespace mlir::fa;

namespace {

/// Evaluates the index / i1 arithmetic of `block` given the arguments.
class Evaluator {
public:
  explicit Evaluator(Block &block) : block(block) {}

  int64_t operator()(Value result, ArrayRef<int64_t> args) {
    values.clear();
    for (auto [arg, v] : llvm::zip(block.getArguments(), args))
      values[arg] = v;
    for (Operation &op : block) {
      if (op.getNumResults() != 1)
        continue;
      values[op.getResult(0)] = evaluate(&op);
      if (op.getResult(0) == result)
        break;
    }
    return values.at(result);
  }

private:
  int64_t get(Value v) { return values.at(v); }
  int64_t evaluate(Operation *op) {
    using P = arith::CmpIPredicate;
    auto lhs = [&] { return get(op->getOperand(0)); };
    auto rhs = [&] { return get(op->getOperand(1)); };
    return llvm::TypeSwitch<Operation *, int64_t>(op)
        .Case([&](arith::ConstantOp c) {
          return cast<IntegerAttr>(c.getValue()).getValue().getSExtValue();
        })
        .Case([&](arith::AddIOp) { return lhs() + rhs(); })
        .Case([&](arith::SubIOp) { return lhs() - rhs(); })
        .Case([&](arith::AndIOp) { return lhs() & rhs(); })
        .Case([&](arith::OrIOp) { return lhs() | rhs(); })
        .Case([&](arith::MulIOp) { return lhs() * rhs(); })
        .Case([&](arith::DivUIOp) { return lhs() / rhs(); })
        .Case([&](arith::MinSIOp) { return std::min(lhs(), rhs()); })
        .Case([&](arith::MaxSIOp) { return std::max(lhs(), rhs()); })
        .Case([&](arith::SelectOp) {
          return get(op->getOperand(0)) ? get(op->getOperand(1))
                                        : get(op->getOperand(2));
        })
        .Case([&](arith::CmpIOp cmp) -> int64_t {
          int64_t x = lhs(), y = rhs();
          switch (cmp.getPredicate()) {
          case P::slt: return x < y;
          case P::sle: return x <= y;
          case P::sgt: return x > y;
          case P::sge: return x >= y;
          case P::eq: return x == y;
          case P::ne: return x != y;
          // The regions' positions are never negative.
          case P::ult: return x < y;
          case P::ule: return x <= y;
          case P::ugt: return x > y;
          case P::uge: return x >= y;
          default: break;
          }
          ADD_FAILURE() << "unexpected predicate";
          return 0;
        })
        .Default([&](Operation *other) {
          ADD_FAILURE() << "unexpected op " << other->getName().getStringRef().str();
          return int64_t(0);
        });
  }
  Block &block;
  DenseMap<Value, int64_t> values;
};

class MaskUtilsTest : public ::testing::Test {
protected:
  MaskUtilsTest() {
    context.loadDialect<FADialect, arith::ArithDialect, func::FuncDialect>();
  }
  /// Every kind; windows with one, two or no edges.
  SmallVector<MaskAttr> masks() {
    SmallVector<MaskAttr> all = {MaskAttr::get(&context, MaskKind::None),
                                 MaskAttr::get(&context, MaskKind::Causal),
                                 MaskAttr::get(&context, MaskKind::CausalTopLeft)};
    for (auto [left, right] : {std::pair<int64_t, int64_t>{0, 0}, {3, 0}, {5, 2},
                               {-1, 1}, {6, -1}, {9, 9}})
      all.push_back(MaskAttr::get(&context, MaskKind::Window, left, right));
    return all;
  }
  static std::string where(MaskAttr mask, int64_t M, int64_t N, int64_t q0,
                           int64_t k0) {
    return "mask " + std::to_string(int(mask.getKind())) + "(" +
           std::to_string(mask.getLeft()) + "," + std::to_string(mask.getRight()) +
           ") M=" + std::to_string(M) + " N=" + std::to_string(N) +
           " q0=" + std::to_string(q0) + " k0=" + std::to_string(k0);
  }
  /// The per-tile and per-pair definitions the ranges are checked
  /// against, over six index arguments added to `block` (q0, k0, query,
  /// key, queryLen, keyLen): whether the blockM x blockN tile at (q0, k0)
  /// needs a mask (buildTileNeedsMask), and whether (query, key) is visible
  /// (buildKeyVisible).
  struct Definitions {
    Value tileNeedsMask, keyVisible;
  };
  static Definitions buildDefinitions(OpBuilder &b, Block &block, MaskAttr mask,
                                      int64_t blockM, int64_t blockN) {
    Location loc = b.getUnknownLoc();
    for (int i = 0; i < 6; ++i)
      block.addArgument(b.getIndexType(), loc);
    b.setInsertionPointToEnd(&block);
    auto arg = [&](int i) { return block.getArgument(i); };
    return {buildTileNeedsMask(b, loc, mask, arg(0), arg(1), blockM, blockN, arg(4),
                               arg(5)),
            buildKeyVisible(b, loc, mask, arg(2), arg(3), arg(4), arg(5))};
  }
  /// Every pair of rows [q0, rowEnd) and keys [k0, k0 + blockN) is visible.
  static void expectAllVisible(Evaluator &eval, Value keyVisible, int64_t q0,
                               int64_t rowEnd, int64_t k0, int64_t blockN,
                               int64_t M, int64_t N, const std::string &at) {
    for (int64_t i = q0; i < rowEnd; ++i)
      for (int64_t j = k0; j < k0 + blockN; ++j)
        EXPECT_TRUE(eval(keyVisible, {q0, k0, i, j, M, N}))
            << at << " query " << i << " key " << j;
  }
  MLIRContext context;
};

TEST_F(MaskUtilsTest, UnmaskedKeyRangeIsExactlyTheTilesWithoutAMask) {
  constexpr int64_t blockM = 4, blockN = 4;
  OpBuilder b(&context);
  Location loc = b.getUnknownLoc();
  for (MaskAttr mask : masks()) {
    Block block;
    auto [needs, visible] = buildDefinitions(b, block, mask, blockM, blockN);
    auto arg = [&](int i) { return block.getArgument(i); };
    auto [begin, end] =
        buildUnmaskedKeyRange(b, loc, mask, arg(0), blockM, arg(4), arg(5));
    Evaluator eval(block);
    for (int64_t M = 1; M <= 13; ++M)
      for (int64_t N = 1; N <= 13; ++N)
        for (int64_t q0 = 0; q0 < M; q0 += blockM) {
          int64_t lo = eval(begin, {q0, 0, 0, 0, M, N});
          int64_t hi = eval(end, {q0, 0, 0, 0, M, N});
          for (int64_t k0 = -blockN; k0 < N + blockN; ++k0) {
            bool inside = k0 >= lo && k0 + blockN <= hi;
            bool tileNeeds = eval(needs, {q0, k0, 0, 0, M, N});
            std::string at = where(mask, M, N, q0, k0);
            // Tiles past the keys' start are not tiles any schedule runs.
            if (k0 >= 0) {
              EXPECT_EQ(inside, !tileNeeds) << at;
            }
            if (inside)
              expectAllVisible(eval, visible, q0, q0 + blockM, k0, blockN, M, N, at);
          }
        }
    block.clear();
  }
}

TEST_F(MaskUtilsTest, UnmaskedQueryRangeIsExactlyTheBlocksWithoutAMask) {
  constexpr int64_t blockM = 3, blockN = 4;
  OpBuilder b(&context);
  Location loc = b.getUnknownLoc();
  for (MaskAttr mask : masks()) {
    Block block;
    auto [needs, visible] = buildDefinitions(b, block, mask, blockM, blockN);
    auto arg = [&](int i) { return block.getArgument(i); };
    auto [begin, end] =
        buildUnmaskedQueryRange(b, loc, mask, arg(1), blockN, arg(4), arg(5));
    Evaluator eval(block);
    for (int64_t M = 1; M <= 13; ++M)
      for (int64_t N = 1; N <= 13; ++N)
        for (int64_t k0 = 0; k0 < N; k0 += blockN) {
          int64_t lo = eval(begin, {0, k0, 0, 0, M, N});
          for (int64_t q0 = 0; q0 < M; ++q0) {
            bool inside = q0 >= lo;
            if (end)
              inside = inside && q0 + blockM <= eval(end, {0, k0, 0, 0, M, N});
            std::string at = where(mask, M, N, q0, k0);
            EXPECT_EQ(inside, !eval(needs, {q0, k0, 0, 0, M, N})) << at;
            if (inside)
              expectAllVisible(eval, visible, q0, std::min(q0 + blockM, M), k0, blockN,
                               M, N, at);
          }
        }
    block.clear();
  }
}


/// A mask_mod's key band (analyzeMaskModKeyBand) bounds the region: every
/// key the region shows a row lies in the row block's band range
/// (buildBandKeyRange), and where the band is exact, every pair of a tile
/// it does not cut (buildTileLeavesBand) is visible.
TEST_F(MaskUtilsTest, MaskModBandBoundsTheRegion) {
  context.loadDialect<tensor::TensorDialect, math::MathDialect>();
  struct Case {
    const char *body;
    bool bounded, exact;
  };
  Case cases[] = {
      {"%c = arith.cmpi ule, %j, %i : index\n fa.yield %c : i1", true, true},
      {"%c3 = arith.constant 3 : index\n %r = arith.addi %j, %c3 : index\n"
       " %a = arith.cmpi ule, %i, %r : index\n %z = arith.cmpi sle, %j, %i : index\n"
       " %c = arith.andi %a, %z : i1\n fa.yield %c : i1", true, true},
      {"%c5 = arith.constant 5 : index\n %p = arith.cmpi ult, %j, %c5 : index\n"
       " %z = arith.cmpi ule, %j, %i : index\n %c = arith.ori %p, %z : i1\n"
       " fa.yield %c : i1", false, false},
      {"%same = arith.cmpi eq, %b, %h : index\n %z = arith.cmpi ule, %j, %i : index\n"
       " %c = arith.andi %same, %z : i1\n fa.yield %c : i1", true, false},
      {"%c2 = arith.constant 2 : index\n %d = arith.subi %i, %j : index\n"
       " %a = arith.cmpi ule, %d, %c2 : index\n fa.yield %a : i1", false, false},
      {"%c4 = arith.constant 4 : index\n %c9 = arith.constant 9 : index\n"
       " %lo = arith.cmpi sge, %j, %c4 : index\n %hi = arith.cmpi slt, %j, %c9 : index\n"
       " %c = arith.andi %lo, %hi : i1\n fa.yield %c : i1", true, true},
  };
  for (const Case &c : cases) {
    std::string text =
        "func.func @f(%q: tensor<1x1x8x8xf16>) -> tensor<1x1x8x8xf16> {\n"
        "  %o = fa.attention %q, %q, %q mask_mod {\n"
        "  ^bb0(%b: index, %h: index, %i: index, %j: index):\n  " +
        std::string(c.body) +
        "\n  } : (tensor<1x1x8x8xf16>, tensor<1x1x8x8xf16>, tensor<1x1x8x8xf16>)"
        " -> tensor<1x1x8x8xf16>\n  return %o : tensor<1x1x8x8xf16>\n}\n";
    OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(text, &context);
    ASSERT_TRUE(module) << text;
    AttentionOp attention;
    module->walk([&](AttentionOp op) { attention = op; });
    Region &region = attention.getMaskMod();
    MaskModKeyBand band = analyzeMaskModKeyBand(region);
    EXPECT_EQ(band.bounded(), c.bounded) << c.body;
    EXPECT_EQ(band.exact, c.exact) << c.body;
    Block &body = region.front();
    Value visible = body.getTerminator()->getOperand(0);
    Evaluator region_(body);
    // The band's range and cut, over (q0, k0, rows, keyLen).
    OpBuilder b(&context);
    auto func = func::FuncOp::create(b, b.getUnknownLoc(), "band",
                                     b.getFunctionType({}, {}));
    Block &block = *func.addEntryBlock();
    for (int i = 0; i < 4; ++i)
      block.addArgument(b.getIndexType(), b.getUnknownLoc());
    b.setInsertionPointToEnd(&block);
    auto arg = [&](int i) { return block.getArgument(i); };
    constexpr int64_t blockM = 4, blockN = 4;
    auto [begin, end] = buildBandKeyRange(b, b.getUnknownLoc(), band, arg(0),
                                          arg(2), arg(3), blockN);
    Value leaves = buildTileLeavesBand(b, b.getUnknownLoc(), band, arg(0),
                                       arg(1), blockM, blockN);
    // The transpose over (k0, cols, queryLen).
    auto [queryBegin, queryEnd] = buildBandQueryRange(
        b, b.getUnknownLoc(), band, arg(1), arg(2), arg(3), blockM);
    Evaluator eval(block);
    for (int64_t M : {1, 5, 11})
      for (int64_t N : {1, 6, 13})
        for (int64_t k0 = 0; k0 < N; k0 += blockN) {
          int64_t cols = std::min(blockN, N - k0);
          int64_t first = eval(queryBegin, {0, k0, cols, M});
          int64_t last = eval(queryEnd, {0, k0, cols, M});
          EXPECT_EQ(first % blockM, 0);
          for (int64_t i = 0; i < M; ++i)
            for (int64_t j = k0; j < k0 + cols; ++j) {
              if (region_(visible, {0, 0, i, j})) {
                EXPECT_TRUE(first <= i && i < last)
                    << c.body << " M=" << M << " N=" << N << " i=" << i << " j=" << j;
              }
            }
        }
    for (int64_t M : {1, 5, 11})
      for (int64_t N : {1, 6, 13})
        for (int64_t q0 = 0; q0 < M; q0 += blockM) {
          int64_t rows = std::min(blockM, M - q0);
          int64_t first = eval(begin, {q0, 0, rows, N});
          int64_t last = eval(end, {q0, 0, rows, N});
          EXPECT_EQ(first % blockN, 0);
          for (int64_t i = q0; i < q0 + rows; ++i)
            for (int64_t j = 0; j < N; ++j) {
              if (region_(visible, {0, 0, i, j})) {
                EXPECT_TRUE(first <= j && j < last)
                    << c.body << " M=" << M << " N=" << N << " i=" << i << " j=" << j;
              }
            }
          if (!band.exact)
            continue;
          for (int64_t k0 = 0; k0 < N; k0 += blockN) {
            if (eval(leaves, {q0, k0, rows, N}))
              continue;
            for (int64_t i = q0; i < q0 + blockM; ++i)
              for (int64_t j = k0; j < k0 + blockN; ++j)
                EXPECT_TRUE(region_(visible, {0, 0, i, j}))
                    << c.body << " tile (" << q0 << ", " << k0 << ") i=" << i << " j=" << j;
          }
        }
    func->erase();
  }
}

} // namespace
