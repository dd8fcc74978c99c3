//===- AttentionVerifierTest.cpp - fa.attention verifier, built in C++ ----===//
//
// Part of fa-mlir.
//
// Builds fa.attention programmatically, the way a framework embedding fa-mlir
// would, and checks the verifier's accept/reject decision (and the named
// operand in its message) across a table of shapes.
//
//===----------------------------------------------------------------------===//

#include "fa/Dialect/FA/IR/FAOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"

#include <gtest/gtest.h>

using namespace mlir;

namespace {

enum class Elt { F16, BF16, F8, F32 };

struct ShapeCase {
  const char *name;
  SmallVector<int64_t> query, key, value, output;
  Elt inputType = Elt::F16;
  Elt outputType = Elt::F16;
  std::optional<SmallVector<int64_t>> lse;
  /// Empty when the op must verify; else a fragment of the expected error.
  const char *expectedError = "";
};

/// Names the case in gtest output instead of dumping its bytes.
void PrintTo(const ShapeCase &c, std::ostream *os) { *os << c.name; }

class AttentionVerifierTest : public ::testing::TestWithParam<ShapeCase> {
protected:
  AttentionVerifierTest() {
    context.loadDialect<fa::FADialect, func::FuncDialect>();
  }

  Type elementType(Elt elt) {
    Builder b(&context);
    switch (elt) {
    case Elt::F16:
      return b.getF16Type();
    case Elt::BF16:
      return b.getBF16Type();
    case Elt::F8:
      return b.getType<Float8E4M3FNType>();
    case Elt::F32:
      return b.getF32Type();
    }
    return {};
  }

  /// Builds `func @f(q, k, v[, descales]) { fa.attention ... }` and returns
  /// the verifier's verdict with its diagnostics.
  LogicalResult buildAndVerify(const ShapeCase &c, std::string &diagnostics) {
    OpBuilder builder(&context);
    Location loc = builder.getUnknownLoc();
    Type in = elementType(c.inputType);
    SmallVector<Type> argTypes = {RankedTensorType::get(c.query, in),
                                  RankedTensorType::get(c.key, in),
                                  RankedTensorType::get(c.value, in)};
    if (c.inputType == Elt::F8)
      argTypes.append(3, builder.getF32Type());
    module = ModuleOp::create(loc);
    builder.setInsertionPointToEnd(module->getBody());
    auto func = func::FuncOp::create(builder, loc, "f",
                                     builder.getFunctionType(argTypes, {}));
    Block *body = func.addEntryBlock();
    builder.setInsertionPointToEnd(body);

    SmallVector<Type> resultTypes = {
        RankedTensorType::get(c.output, elementType(c.outputType))};
    if (c.lse)
      resultTypes.push_back(RankedTensorType::get(*c.lse, builder.getF32Type()));
    auto attention = fa::AttentionOp::create(
        builder, loc, resultTypes, body->getArgument(0), body->getArgument(1),
        body->getArgument(2), body->getArguments().drop_front(3),
        /*alibiSlopes=*/Value(), /*captures=*/ValueRange{}, fa::MaskAttr::get(&context, fa::MaskKind::Causal),
        /*scale=*/nullptr, /*softcap=*/nullptr, /*tile=*/nullptr, /*block_sparse=*/nullptr);
    func::ReturnOp::create(builder, loc);

    llvm::raw_string_ostream os(diagnostics);
    ScopedDiagnosticHandler handler(&context, [&](Diagnostic &diag) {
      os << diag.str();
      return success();
    });
    return attention.verify();
  }

  MLIRContext context;
  OwningOpRef<ModuleOp> module;
};

TEST_P(AttentionVerifierTest, AcceptsOrRejects) {
  const ShapeCase &c = GetParam();
  std::string diagnostics;
  LogicalResult verdict = buildAndVerify(c, diagnostics);
  if (*c.expectedError == '\0') {
    EXPECT_TRUE(succeeded(verdict)) << c.name << ": " << diagnostics;
    EXPECT_TRUE(diagnostics.empty()) << diagnostics;
  } else {
    EXPECT_TRUE(failed(verdict)) << c.name << " was accepted";
    EXPECT_NE(diagnostics.find(c.expectedError), std::string::npos)
        << c.name << ": got \"" << diagnostics << "\"";
  }
}

const int64_t kDyn = ShapedType::kDynamic;

// clang-format off
const ShapeCase kCases[] = {
  // Accepted: MHA, GQA, MQA, Dv != D, odd sizes, M = N = 1, fp8, dynamic.
  {"mha", {2, 8, 128, 64}, {2, 8, 128, 64}, {2, 8, 128, 64}, {2, 8, 128, 64}},
  {"gqa_with_lse", {2, 8, 113, 72}, {2, 2, 203, 72}, {2, 2, 203, 72}, {2, 8, 113, 72},
   Elt::BF16, Elt::BF16, SmallVector<int64_t>{2, 8, 113}},
  {"mqa", {1, 16, 64, 128}, {1, 1, 64, 128}, {1, 1, 64, 128}, {1, 16, 64, 128}},
  {"dv_differs", {1, 4, 64, 128}, {1, 4, 300, 128}, {1, 4, 300, 64}, {1, 4, 64, 64}},
  {"m1_n1", {1, 1, 1, 32}, {1, 1, 1, 32}, {1, 1, 1, 32}, {1, 1, 1, 32}},
  {"fp8", {1, 2, 256, 128}, {1, 2, 256, 128}, {1, 2, 256, 128}, {1, 2, 256, 128},
   Elt::F8, Elt::BF16},
  {"dynamic", {kDyn, 8, kDyn, 64}, {kDyn, 2, kDyn, 64}, {kDyn, 2, kDyn, 64},
   {kDyn, 8, kDyn, 64}},
  // Rejected, each naming the offending operand and dimension.
  {"rank", {8, 128, 64}, {1, 8, 128, 64}, {1, 8, 128, 64}, {1, 8, 128, 64},
   Elt::F16, Elt::F16, std::nullopt, "query must have rank 4"},
  {"head_dim", {1, 4, 64, 64}, {1, 4, 64, 128}, {1, 4, 64, 64}, {1, 4, 64, 64},
   Elt::F16, Elt::F16, std::nullopt, "D of key (128) does not match D of query (64)"},
  {"kv_len", {1, 4, 64, 64}, {1, 4, 64, 64}, {1, 4, 65, 64}, {1, 4, 64, 64},
   Elt::F16, Elt::F16, std::nullopt, "N of value (65) does not match N of key (64)"},
  {"heads", {1, 6, 64, 64}, {1, 4, 64, 64}, {1, 4, 64, 64}, {1, 6, 64, 64},
   Elt::F16, Elt::F16, std::nullopt, "Hq of query (6) is not a multiple of Hkv of key (4)"},
  {"batch", {2, 4, 64, 64}, {3, 4, 64, 64}, {3, 4, 64, 64}, {2, 4, 64, 64},
   Elt::F16, Elt::F16, std::nullopt, "B of key (3) does not match B of query (2)"},
  {"output_dv", {1, 4, 64, 64}, {1, 4, 64, 64}, {1, 4, 64, 32}, {1, 4, 64, 64},
   Elt::F16, Elt::F16, std::nullopt, "Dv of output (64) does not match Dv of value (32)"},
  {"output_heads", {1, 4, 64, 64}, {1, 4, 64, 64}, {1, 4, 64, 64}, {1, 2, 64, 64},
   Elt::F16, Elt::F16, std::nullopt, "Hq of output (2) does not match Hq of query (4)"},
  {"unsupported_f32", {1, 4, 64, 64}, {1, 4, 64, 64}, {1, 4, 64, 64}, {1, 4, 64, 64},
   Elt::F32, Elt::F32, std::nullopt, "element type of query ('f32') is not supported"},
  {"fp8_output_f16", {1, 2, 64, 64}, {1, 2, 64, 64}, {1, 2, 64, 64}, {1, 2, 64, 64},
   Elt::F8, Elt::F16, std::nullopt, "element type of output ('f16') must be 'bf16'"},
  {"lse_shape", {1, 4, 64, 64}, {1, 4, 64, 64}, {1, 4, 64, 64}, {1, 4, 64, 64},
   Elt::F16, Elt::F16, SmallVector<int64_t>{1, 4, 63}, "M of lse (63) does not match M of query (64)"},
};
// clang-format on

INSTANTIATE_TEST_SUITE_P(Shapes, AttentionVerifierTest,
                         ::testing::ValuesIn(kCases),
                         [](const ::testing::TestParamInfo<ShapeCase> &info) {
                           return std::string(info.param.name);
                         });

} // namespace
