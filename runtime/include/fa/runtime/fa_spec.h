/*===- fa_spec.h - the spec language and call checks of the C API --------===*
 *
 * Part of fa-mlir.
 *
 * The contract a kernel and its callers share, in one place: the
 * enumerations (mask, dtype, ALiBi, descale) that the runtime, the spec
 * language and the compiler's #fa.mask all use (the C++ enums of
 * fa/runtime/Mask.h, Numerics.h and Spec.h take their values from these);
 * the spec language's parser and printer ("d=128,dtype=bf16,mask=causal");
 * and the checks of a forward's or backward's tensors as a framework holds
 * them. Part of libfa_runtime (fa_runtime.h includes this header). Every
 * call reports failure by its return value with a one-line reason in
 * fa_last_error(); nothing aborts.
 *
 *===----------------------------------------------------------------------===*/

#ifndef FA_RUNTIME_C_SPEC_H
#define FA_RUNTIME_C_SPEC_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Which keys a query may attend to (the spec's mask=, #fa.mask<...>).
 * With M queries and N keys, key j is visible to query i when:
 * NONE always; CAUSAL j <= i + N - M (bottom-right aligned);
 * CAUSAL_TOP_LEFT j <= i; WINDOW(left, right)
 * i + N - M - left <= j <= i + N - M + right, -1 unbounded. */
typedef enum fa_mask_kind {
  FA_MASK_NONE = 0,
  FA_MASK_CAUSAL = 1,
  FA_MASK_CAUSAL_TOP_LEFT = 2,
  FA_MASK_WINDOW = 3
} fa_mask_kind;

/* Element types. Kernels take F16, BF16 or F8E4M3FN inputs; LSE and ALiBi
 * slopes are F32. FA_DTYPE_OTHER describes any other tensor to the checks. */
typedef enum fa_dtype {
  FA_DTYPE_F16 = 0,
  FA_DTYPE_BF16 = 1,
  FA_DTYPE_F8E4M3FN = 2,
  FA_DTYPE_F32 = 3,
  FA_DTYPE_OTHER = -1
} fa_dtype;

/* ALiBi slopes: none, one per query head ([Hq]), one per batch and query
 * head ([B, Hq]). */
typedef enum fa_alibi_kind {
  FA_ALIBI_NONE = 0,
  FA_ALIBI_HEAD = 1,
  FA_ALIBI_BATCH_HEAD = 2
} fa_alibi_kind;

/* F8E4M3FN's descale factors: one per tensor, or one per (batch, KV head). */
typedef enum fa_descale_kind {
  FA_DESCALE_TENSOR = 0,
  FA_DESCALE_HEAD = 1
} fa_descale_kind;

/* A spec: what a kernel is compiled for. Enumerated fields are int32_t
 * holding the enums above. Zero in value_dim, scale, block_m or block_n
 * means "not stated": Dv = D, scale = 1/sqrt(D), and the compiler's tuned
 * tile. */
typedef struct fa_spec {
  int64_t head_dim;
  int64_t value_dim;
  int32_t dtype;   /* fa_dtype: F16, BF16 or F8E4M3FN */
  int32_t mask;    /* fa_mask_kind */
  int64_t window_left, window_right; /* FA_MASK_WINDOW's bounds; else -1 */
  double scale;
  double softcap;  /* 0: none */
  int32_t alibi;   /* fa_alibi_kind */
  int32_t descale; /* fa_descale_kind (F8E4M3FN only) */
  int64_t block_m, block_n;
} fa_spec;

/* The defaults: D unset (0), bf16, no mask, no softcap, no ALiBi, per-tensor
 * descales, nothing else stated. */
void fa_spec_init(fa_spec *spec);

/* Parses "key=value,..." (keys d, dv, dtype, mask, softcap, alibi, descale,
 * scale, block_m, block_n, each at most once; d required) into `spec`,
 * with Dv and the scale resolved and an unstated block 0. 0 on success;
 * -1 with the reason (which names the key and what it takes). */
int fa_spec_parse(const char *text, fa_spec *spec);

/* Sets one key from its text, as fa_spec_parse reads it (a value is never
 * pasted into spec text: "causal,d=64" is a bad mask). 0 or -1. */
int fa_spec_set(fa_spec *spec, const char *key, const char *value);

/* 0 if `spec` is one a kernel can be compiled for (the ranges of
 * fa_spec_parse), else -1 with the reason. */
int fa_spec_check(const fa_spec *spec);

/* 0 if a backward can be compiled for `spec`: fa_spec_check's ranges, and
 * 16-bit inputs with |scale| <= 100 (the backward recomputes P from the
 * f32 LSE; docs/dialect.md says why). Else -1 with the reason. */
int fa_spec_check_backward(const fa_spec *spec);

/* The spec's text, which fa_spec_parse reads back exactly: every key but
 * an unstated block, Dv and the scale resolved, doubles printed so that
 * they round-trip bit for bit. Writes it NUL-terminated to `text` when it
 * fits in `capacity` bytes; returns its length (without the NUL) either
 * way, as snprintf does, or -1 when fa_spec_check refuses `spec`. */
int64_t fa_spec_format(const fa_spec *spec, char *text, int64_t capacity);

/* The checks of a call's tensors. */

/* A tensor as a framework holds it. `shape` points at `rank` sizes, in the
 * layout the check is given. `dtype_name` and `device_name` (may be NULL)
 * name the dtype and a non-CUDA device in the caller's words, for the
 * messages ("torch.float32", "cpu"). */
typedef struct fa_tensor_desc {
  const int64_t *shape;
  int64_t rank;
  int32_t dtype;  /* fa_dtype */
  int32_t device; /* the CUDA device's index; -1: not on a CUDA device */
  const char *dtype_name;
  const char *device_name;
} fa_tensor_desc;

/* How Q, K, V, O and dO lay out their dimensions. LSE is [B, Hq, M] in
 * both, ALiBi slopes [Hq] or [B, Hq]. */
typedef enum fa_layout {
  FA_LAYOUT_BSHD = 0, /* [batch, seqlen, heads, head_dim]: FlashAttention's */
  FA_LAYOUT_BHSD = 1  /* [batch, heads, seqlen, head_dim]: SDPA's */
} fa_layout;

/* A 16-bit forward's tensors: q [B, M, Hq, D], k [B, N, Hkv, D],
 * v [B, N, Hkv, Dv] (in BSHD), all F16 or all BF16 on CUDA device 0 (the
 * runtime's context), Hq a multiple of Hkv, the sizes within the runtime's
 * limits; `alibi_slopes` (NULL: none) F32 [Hq] or [B, Hq] on the same
 * device. Strides are the launch's to check (fa_kernel_forward), as are
 * f8e4m3fn calls. 0, or -1 with the first violation, naming the tensor. */
int fa_check_forward(int32_t layout, const fa_tensor_desc *q,
                     const fa_tensor_desc *k, const fa_tensor_desc *v,
                     const fa_tensor_desc *alibi_slopes);

/* A backward's: the forward's as fa_check_forward checks them, and
 * out and d_out [B, M, Hq, Dv] of q's dtype, lse F32 [B, Hq, M], on q's
 * device. */
int fa_check_backward(int32_t layout, const fa_tensor_desc *q,
                      const fa_tensor_desc *k, const fa_tensor_desc *v,
                      const fa_tensor_desc *alibi_slopes,
                      const fa_tensor_desc *out, const fa_tensor_desc *lse,
                      const fa_tensor_desc *d_out);

#ifdef __cplusplus
}
#endif

#endif /* FA_RUNTIME_C_SPEC_H */
