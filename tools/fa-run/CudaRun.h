//===- CudaRun.h - fa-run --device cuda's pieces ----------------*- C++ -*-===//
//
// Part of fa-mlir.
//
// What the forward (CudaRun.cpp) and the backward (CudaBackward.cpp) of
// --device cuda share: tensors in either memory layout, their host copies
// and device buffers.
//
//===----------------------------------------------------------------------===//

#ifndef FA_TOOLS_FARUN_CUDARUN_H
#define FA_TOOLS_FARUN_CUDARUN_H

#include "FaRun.h"

#include "fa/runtime/BlockMask.h"
#include "fa/runtime/BackwardKernel.h"
#include "fa/runtime/Cuda.h"
#include "fa/runtime/Kernel.h"

#include <memory>
#include <random>
#include <string>
#include <vector>

namespace fa {
namespace cudarun {

/// A tensor's logical [B, H, S, W] shape and its physical strides.
struct Layout {
  int64_t batch, heads, seq, width;
  int64_t stride[3]; // batch, head, sequence

  static Layout make(int64_t b, int64_t h, int64_t s, int64_t w,
                     bool sequenceMajor) {
    Layout l{b, h, s, w, {}};
    if (sequenceMajor) { // [B, S, H, W]
      l.stride[0] = s * h * w;
      l.stride[1] = w;
      l.stride[2] = h * w;
    } else { // [B, H, S, W]
      l.stride[0] = h * s * w;
      l.stride[1] = s * w;
      l.stride[2] = w;
    }
    return l;
  }
  int64_t count() const { return batch * heads * seq * width; }
  int64_t physical(int64_t logical) const {
    int64_t e = logical % width, s = (logical / width) % seq,
            h = (logical / width / seq) % heads,
            b = logical / width / seq / heads;
    return b * stride[0] + h * stride[1] + s * stride[2] + e;
  }
};

/// Host copies: the logical values (as doubles) and the stored bits in
/// the physical layout (f16/bf16 in `bits`, f8E4M3FN in `bytes`).
struct HostData {
  std::vector<double> logical;
  std::vector<uint16_t> bits;
  std::vector<uint8_t> bytes;
  /// The stored elements, as uploaded.
  const void *data() const {
    return bytes.empty() ? static_cast<const void *>(bits.data())
                         : bytes.data();
  }
};

/// Fresh random normal values rounded to `type`, drawn in logical order
/// (so that a seed gives the same tensor in every layout, and on the CPU).
HostData randomData(const Layout &l, ElementType type, std::mt19937_64 &gen);

/// The logical values of `bits`, stored in layout `l`.
std::vector<double> logicalValues(const Layout &l, ElementType type,
                                  const std::vector<uint16_t> &bits);

/// Device buffers; freed on scope exit.
struct DeviceBuffer {
  cuda::Driver *cu = nullptr;
  cuda::CUdeviceptr ptr = 0;
  size_t bytes = 0;
  DeviceBuffer() = default;
  DeviceBuffer(const DeviceBuffer &) = delete;
  DeviceBuffer &operator=(const DeviceBuffer &) = delete;
  ~DeviceBuffer() {
    if (ptr)
      cu->cuMemFree(ptr);
  }
};

bool allocate(cuda::Driver &cu, DeviceBuffer &buffer, size_t bytes,
              std::string &error);
bool upload(cuda::Driver &cu, DeviceBuffer &buffer, const void *data,
            std::string &error);
bool download(cuda::Driver &cu, void *data, const DeviceBuffer &buffer,
              std::string &error);

/// Prints "fa-run: `message`" to stderr and returns `code`.
int fail(const std::string &message, int code);

/// One buffer of a copied input set for --bench: the argument to point at
/// the copy, its bytes, and what to fill it with (null: nothing, for an
/// output or scratch).
struct BufferCopy {
  cuda::CUdeviceptr *field;
  size_t bytes;
  const void *host;
};
/// Allocates (and fills) a buffer for each of `copies` and points its
/// field at it; `owned` keeps them.
bool copyBuffers(cuda::Driver &cu, const std::vector<BufferCopy> &copies,
                 std::vector<std::unique_ptr<DeviceBuffer>> &owned,
                 std::string &error);
/// How many input sets of `setBytes` --bench rotates among, so that
/// together they are larger than L2 and each launch reads from HBM, as a
/// real model does (at most 8).
int64_t benchSets(size_t setBytes);

/// The median of `times` (which it sorts).
float median(std::vector<float> &times);

/// docs/design.md's forward FLOPs: 4·B·Hq·M·N·D, halved for the causal masks.
double forwardFlops(const AttentionSpec &spec, const ProblemSize &size);

/// One run's tensors: their layouts, the host copies and the device
/// buffers (dq, dk, dv hold Q, K and V; the gradients are the backward's).
/// Neither copied nor moved (it owns device memory), and it must go before
/// the Kernel whose driver frees that memory.
struct Tensors {
  /// The run's random stream: Q, K, V, then (--bwd) dO, as --device cpu
  /// draws them for the same seed.
  std::mt19937_64 gen;
  Layout qL, kL, vL, oL;
  HostData q, k, v;
  /// The output (in outputElementType: bf16 for f8E4M3FN) and LSE as the
  /// kernel stored them (NaN before the run).
  std::vector<uint16_t> outBits;
  std::vector<float> lse;
  /// The same, as logical values.
  std::vector<double> output, lseValues;
  /// ALiBi slopes for the reference, and as f32 for the kernel.
  std::vector<double> alibiSlopes;
  std::vector<float> slopeBits;
  /// f8E4M3FN: Q's, K's and V's descales as drawn (QuantisedInputs; the
  /// reference's); empty for 16-bit inputs.
  std::vector<float> descales;
  DeviceBuffer dq, dk, dv, dout, dlse, dslopes;
  /// The descales the kernel reads (kernelDescales), one buffer a tensor.
  DeviceBuffer dqDescale, dkDescale, dvDescale;
  /// A variant kernel's captured values: as the reference reads them, and
  /// the tensors' device buffers (null for a scalar).
  std::vector<CaptureValue> captures;
  std::vector<std::unique_ptr<DeviceBuffer>> dcaptures;
  /// A block-sparse kernel's block mask, built from the reference's
  /// visibility (the kernel's blocks), and its four device arrays.
  HostBlockMask blockMask;
  DeviceBuffer dkvNumBlocks, dkvIndices, dfullKvNumBlocks, dfullKvIndices;
};

/// The user's regions as written (a variant kernel's), on the captured
/// values the kernel got, into the reference's problem.
void addVariant(ref::Problem &problem, const Variant &variant, const Tensors &t);

/// --bwd: reads the backward kernel's manifest (--bwd-kernel, or the one
/// named after the forward kernel beside it) into `path` and `out`, and
/// checks it against the forward kernel's and the run. kPass, or the exit
/// code.
int readBackwardManifest(const Options &o, const Manifest &forward,
                         const ProblemSize &size, std::string &path,
                         BackwardManifest &out);

/// --bwd, after the forward ran: draws dO, runs the backward kernel on
/// NaN-poisoned gradients, prints its line, and with --verify checks dQ,
/// dK and dV (`pass` is cleared on a mismatch); --bench times forward and
/// backward together, --dump adds dO and the gradients. kPass, or the
/// exit code.
int runBackward(const Options &o, const Kernel &forward,
                const BackwardKernel &backward, const AttentionSpec &spec,
                const ProblemSize &size, const ForwardArgs &forwardArgs,
                Tensors &t, bool &pass);

} // namespace cudarun
} // namespace fa

#endif // FA_TOOLS_FARUN_CUDARUN_H
