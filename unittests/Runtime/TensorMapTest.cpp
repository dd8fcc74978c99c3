//===- TensorMapTest.cpp - the TMA maps the runtime encodes ---------------===//
//
// Part of fa-mlir.
//
// detail::encodeTensorMap against a stand-in for the driver's
// cuTensorMapEncodeTiled that records its arguments: the data type, the
// sizes, the byte strides and the box of each element type, and the strides
// TMA cannot take, without a GPU.
//
//===----------------------------------------------------------------------===//

#include "KernelCommon.h"

#include <gtest/gtest.h>

#include <vector>

using namespace fa;

namespace {

/// What the last cuTensorMapEncodeTiled call was given.
struct Encoded {
  int calls = 0, dataType = -1, swizzle = -1;
  unsigned rank = 0;
  void *base = nullptr;
  std::vector<uint64_t> dims, strides;
  std::vector<unsigned> box;
};
Encoded last;

cuda::CUresult recordEncode(void *, int dataType, unsigned rank, void *base,
                            const uint64_t *dims, const uint64_t *strides,
                            const unsigned *box, const unsigned *,
                            int, int swizzle, int, int) {
  ++last.calls;
  last.dataType = dataType;
  last.rank = rank;
  last.base = base;
  last.swizzle = swizzle;
  last.dims.assign(dims, dims + rank);
  last.strides.assign(strides, strides + rank - 1);
  last.box.assign(box, box + rank);
  return 0;
}

cuda::Driver fakeDriver() {
  cuda::Driver d{};
  d.cuTensorMapEncodeTiled = recordEncode;
  return d;
}

/// Q of [B=2, H=3, S=100, D=128] in [B, H, S, D] (stride in elements).
const int64_t kStride[3] = {3 * 100 * 128, 100 * 128, 128};

detail::TensorMapSource querySource(const int64_t *stride) {
  detail::TensorMapSource s;
  s.tensor = "q";
  s.base = 0x10000;
  s.stride = stride;
  s.width = 128;
  s.rows = 100;
  s.heads = 3;
  s.batch = 2;
  s.boxRows = 128;
  return s;
}

bool encode(ElementType type, const detail::TensorMapSource &source,
            std::string &error) {
  cuda::Driver d = fakeDriver();
  detail::TensorMapStorage map;
  last = Encoded();
  return detail::encodeTensorMap(d, type, source, map, error);
}

/// 16-bit inputs: the data type of their own, two bytes an element, a box
/// of one 128-byte panel row (64 elements) by block rows.
TEST(TensorMap, SixteenBitTypes) {
  std::string error;
  ASSERT_TRUE(encode(ElementType::BF16, querySource(kStride), error)) << error;
  EXPECT_EQ(last.dataType, 9); // CU_TENSOR_MAP_DATA_TYPE_BFLOAT16
  EXPECT_EQ(last.rank, 4u);
  EXPECT_EQ(last.dims, (std::vector<uint64_t>{128, 100, 3, 2}));
  EXPECT_EQ(last.strides,
            (std::vector<uint64_t>{128 * 2, 100 * 128 * 2, 300 * 128 * 2}));
  EXPECT_EQ(last.box, (std::vector<unsigned>{64, 128, 1, 1}));
  EXPECT_EQ(last.swizzle, 3); // 128B
  ASSERT_TRUE(encode(ElementType::F16, querySource(kStride), error)) << error;
  EXPECT_EQ(last.dataType, 6); // CU_TENSOR_MAP_DATA_TYPE_FLOAT16
}

/// f8E4M3FN: moved as bytes (UINT8, TMA has no fp8 type), one byte an
/// element, so a 128-byte panel row is 128 elements.
TEST(TensorMap, Fp8IsBytes) {
  std::string error;
  ASSERT_TRUE(encode(ElementType::F8E4M3FN, querySource(kStride), error))
      << error;
  EXPECT_EQ(last.calls, 1);
  EXPECT_EQ(last.dataType, 0); // CU_TENSOR_MAP_DATA_TYPE_UINT8
  EXPECT_EQ(last.dims, (std::vector<uint64_t>{128, 100, 3, 2}));
  EXPECT_EQ(last.strides,
            (std::vector<uint64_t>{128, 100 * 128, 300 * 128}));
  EXPECT_EQ(last.box, (std::vector<unsigned>{128, 128, 1, 1}));
  EXPECT_EQ(last.base, reinterpret_cast<void *>(0x10000));
}

/// The backward's dq_acc map is f32 whatever the kernel's type.
TEST(TensorMap, F32Accumulator) {
  std::string error;
  detail::TensorMapSource s = querySource(kStride);
  s.f32 = true;
  ASSERT_TRUE(encode(ElementType::BF16, s, error)) << error;
  EXPECT_EQ(last.dataType, 7); // CU_TENSOR_MAP_DATA_TYPE_FLOAT32
  EXPECT_EQ(last.strides,
            (std::vector<uint64_t>{128 * 4, 100 * 128 * 4, 300 * 128 * 4}));
  EXPECT_EQ(last.box, (std::vector<unsigned>{32, 128, 1, 1}));
}

/// TMA strides must be multiples of 16 bytes: 8 elements of a 16-bit type,
/// 16 of e4m3; the reason says which, and the driver is never called.
TEST(TensorMap, StridesMustBeSixteenBytes) {
  const int64_t eight[3] = {3 * 100 * 8, 100 * 8, 8};
  detail::TensorMapSource s = querySource(eight);
  s.width = 8;
  std::string error;
  EXPECT_TRUE(encode(ElementType::BF16, s, error)) << error;
  EXPECT_FALSE(encode(ElementType::F8E4M3FN, s, error));
  EXPECT_EQ(last.calls, 0);
  EXPECT_NE(error.find("multiples of 16 bytes (16 elements of f8E4M3FN), got "
                       "8, 800, 2400"),
            std::string::npos)
      << error;
  const int64_t four[3] = {3 * 100 * 4, 100 * 4, 4};
  s.stride = four;
  EXPECT_FALSE(encode(ElementType::BF16, s, error));
  EXPECT_NE(error.find("(8 elements of bf16)"), std::string::npos) << error;
  s = querySource(kStride);
  s.base = 0x10008;
  EXPECT_FALSE(encode(ElementType::F8E4M3FN, s, error));
  EXPECT_NE(error.find("16-byte aligned"), std::string::npos) << error;
}

/// The ABI's 16-byte rule for the sm_80 kernels' cp.async and st.global.v4
/// (TMA has its own, above): the base and every stride, in bytes.
TEST(VectorAlignment, BaseAndEveryStride) {
  std::string error;
  int64_t strides[3] = {4096 * 64, 64, 64 * 16}; // bf16 [B, S, H, 64]
  EXPECT_TRUE(detail::isVectorAligned("dk", 0x10000, strides, ElementType::BF16, error))
      << error;
  EXPECT_FALSE(detail::isVectorAligned("dk", 0x10008, strides, ElementType::BF16, error));
  EXPECT_NE(error.find("dk must be 16-byte aligned"), std::string::npos) << error;
  for (int i = 0; i < 3; ++i) {
    int64_t odd[3] = {strides[0], strides[1], strides[2]};
    odd[i] += 4; // 8 bytes off in one stride
    EXPECT_FALSE(detail::isVectorAligned("q", 0x10000, odd, ElementType::BF16, error)) << i;
  }
  // e4m3: one byte an element, so 16 elements.
  int64_t fp8[3] = {1024, 16, 48};
  EXPECT_TRUE(detail::isVectorAligned("q", 0x10000, fp8, ElementType::F8E4M3FN, error));
  fp8[1] = 8;
  EXPECT_FALSE(detail::isVectorAligned("q", 0x10000, fp8, ElementType::F8E4M3FN, error));
}

} // namespace
