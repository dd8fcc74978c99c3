/*===- fa_runtime.h - C API of the fa-mlir runtime -----------------------===*
 *
 * Part of fa-mlir.
 *
 * Load a kernel fa-compile generated (NAME.json + NAME.ptx) and launch it on
 * device pointers, with strides, on a CUDA stream. Needs no MLIR and links
 * no libcuda (it is opened at run time). Every call reports failure by its
 * return value; fa_last_error() says why. Nothing aborts. fa_spec.h (included
 * here) holds the spec language and the checks of a call's tensors.
 *
 *===----------------------------------------------------------------------===*/

#ifndef FA_RUNTIME_C_API_H
#define FA_RUNTIME_C_API_H

#include <stdint.h>

#include "fa/runtime/fa_spec.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct fa_kernel fa_kernel;

/* Tensors: Q [B,Hq,M,D], K [B,Hkv,N,D], V [B,Hkv,N,Dv] in the kernel's
 * dtype (f8e4m3fn: one e4m3 byte each), O [B,Hq,M,Dv] in its output dtype
 * (the dtype; bf16 for f8e4m3fn kernels); LSE [B,Hq,M] f32. Strides in
 * elements, ordered (batch, head, sequence); the last dimension must be
 * contiguous, and the pointers and all three strides (in bytes) multiples
 * of 16: the kernels copy and store 16 bytes at a time (a launch that
 * breaks this is refused with the tensor's name). */
typedef struct fa_forward_args {
  const void *q, *k, *v;
  void *o;
  float *lse;
  int64_t batch, q_heads, kv_heads, q_len, kv_len;
  int64_t q_stride[3], k_stride[3], v_stride[3], o_stride[3];
  int64_t lse_stride[2];
  /* ALiBi slopes (f32) for kernels compiled with ALiBi, else NULL:
   * [Hq] (alibi_stride_b = 0) or [B, Hq] (alibi_stride_b = Hq). */
  const float *alibi_slopes;
  int64_t alibi_stride_b;
  /* f8e4m3fn kernels: Q's, K's and V's descale factors (f32, device
   * memory; the kernel computes with stored value x descale). The factor
   * of batch b and KV head h is at [b * descale_stride[0] +
   * h * descale_stride[1]]: {0, 0} for one factor per tensor, {Hkv, 1}
   * for [B, Hkv] tensors (query head h uses KV head h / (Hq / Hkv)).
   * NULL and {0, 0} for 16-bit kernels. (Appended last: the fields above
   * keep their offsets.) */
  const float *q_descale, *k_descale, *v_descale;
  int64_t descale_stride[2];
} fa_forward_args;

/* NULL on failure (see fa_last_error); fa_no_gpu() tells "no GPU here". */
fa_kernel *fa_kernel_load(const char *manifest_path);
/* 0 on success. `stream` is a CUstream (NULL: the default stream). */
int fa_kernel_forward(const fa_kernel *kernel, const fa_forward_args *args,
                      void *stream);
void fa_kernel_free(fa_kernel *kernel);

/* A captured value of a variant kernel (one compiled from score_mod /
 * mask_mod regions; its manifest's "variant" lists the captures' types):
 * a tensor as a contiguous row-major device buffer `data` with `rank`
 * `extents` (those its type fixes must match), or a scalar (`data` NULL,
 * rank 0) as `real` (a float capture) or `integer`. */
typedef struct fa_capture {
  const void *data;
  const int64_t *extents;
  int64_t rank;
  double real;
  int64_t integer;
} fa_capture;
/* How many captured values the kernel takes (0: not a variant kernel). */
int64_t fa_kernel_num_captures(const fa_kernel *kernel);
/* fa_kernel_forward with the kernel's `num_captures` captured values, in
 * the manifest's order: new values never recompile. 0 on success. */
int fa_kernel_forward_captures(const fa_kernel *kernel,
                               const fa_forward_args *args,
                               const fa_capture *captures,
                               int64_t num_captures, void *stream);

/* A block-sparse kernel's block mask (FlexAttention's BlockMask): int32
 * device arrays, contiguous, kv_num_blocks and full_kv_num_blocks
 * [batch, heads, q_blocks], kv_indices and full_kv_indices [batch, heads,
 * q_blocks, kv_blocks]. Row (b, h, i) lists query block i's partial KV
 * blocks (the mask is evaluated) and its full ones (every element visible),
 * counts first. batch is 1 or B, heads 1 or Hq (1 broadcasts); q_blocks =
 * ceil(M / q_block_size), kv_blocks = ceil(N / kv_block_size), the sizes
 * the kernel's. The lists must cover every visible element. */
typedef struct fa_block_mask {
  const int32_t *kv_num_blocks, *kv_indices;
  const int32_t *full_kv_num_blocks, *full_kv_indices;
  int64_t batch, heads, q_blocks, kv_blocks, q_block_size, kv_block_size;
} fa_block_mask;
/* 1 if the kernel is block-sparse (its blocks into the non-null size
 * pointers), 0 if not, -1 on a null kernel. */
int fa_kernel_block_sparse(const fa_kernel *kernel, int64_t *q_block_size,
                           int64_t *kv_block_size);
/* fa_kernel_forward_captures with a block mask: required by a
 * block-sparse kernel, NULL for any other. 0 on success. */
int fa_kernel_forward_sparse(const fa_kernel *kernel,
                             const fa_forward_args *args,
                             const fa_capture *captures, int64_t num_captures,
                             const fa_block_mask *block_mask, void *stream);

/* Facts from the manifest. */
int64_t fa_kernel_head_dim(const fa_kernel *kernel);
int64_t fa_kernel_value_dim(const fa_kernel *kernel);
const char *fa_kernel_name(const fa_kernel *kernel);

/* The backward of a kernel fa-compile generated (a manifest of kind
 * "backward": three kernels in one PTX module, launched in order). */
typedef struct fa_backward_kernel fa_backward_kernel;

/* The forward's tensors and sizes (O and LSE as the forward wrote them),
 * dO [B,Hq,M,Dv], and the gradients dQ [B,Hq,M,D], dK [B,Hkv,N,D], dV
 * [B,Hkv,N,Dv], all in the kernel's dtype, with strides as for the forward.
 * `workspace`: fa_backward_workspace_size() bytes of device memory,
 * 256-byte aligned (cuMemAlloc's are), not shared by backwards running at
 * the same time; its contents need not be initialised. */
typedef struct fa_backward_args {
  fa_forward_args forward;
  const void *d_out;
  void *dq, *dk, *dv;
  int64_t d_out_stride[3], dq_stride[3], dk_stride[3], dv_stride[3];
  void *workspace;
  /* 1: dQ accumulated in a fixed order, bit-identical across runs (slower);
   * only for kernels whose manifest has "deterministic_mode": true.
   * 0: the default. Anything else is refused. */
  int deterministic;
} fa_backward_args;

/* NULL on failure (see fa_last_error); fa_no_gpu() tells "no GPU here". */
fa_backward_kernel *fa_backward_kernel_load(const char *manifest_path);
/* The workspace's bytes for these sizes; -1 on failure. */
int64_t fa_backward_workspace_size(const fa_backward_kernel *kernel,
                                   int64_t batch, int64_t q_heads,
                                   int64_t q_len);
/* 0 on success: the three kernels are queued on `stream` (a CUstream;
 * NULL: the default stream), which the caller synchronises. */
int fa_kernel_backward(const fa_backward_kernel *kernel,
                       const fa_backward_args *args, void *stream);
/* fa_kernel_backward of a variant's backward (fa-compile F.mlir --bwd),
 * with the forward's captured values. 0 on success. */
int fa_kernel_backward_captures(const fa_backward_kernel *kernel,
                                const fa_backward_args *args,
                                const fa_capture *captures,
                                int64_t num_captures, void *stream);
void fa_backward_kernel_free(fa_backward_kernel *kernel);

/* The GPU's opt-in maximum of shared memory per block, in bytes (an
 * H100's 232448): divided by 1024, the budget to compile this device's
 * kernels within (fa-compile --shared-memory-budget,
 * faCompileKernelWithBudget). -1 on failure (fa_no_gpu tells a missing GPU). */
int64_t fa_device_shared_memory_per_block(void);

/* The reason of the last failure on this thread ("" if none). */
const char *fa_last_error(void);
/* 1 if the last failure was that no GPU or driver is present. */
int fa_no_gpu(void);

#ifdef __cplusplus
}
#endif

#endif /* FA_RUNTIME_C_API_H */
