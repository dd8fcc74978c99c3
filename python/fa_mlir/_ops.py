"""The PyTorch ops: fa_mlir::forward and fa_mlir::backward (torch.library
custom ops with fake implementations, so torch.compile traces through them),
the autograd formula tying them together, and the FlashAttention- and
SDPA-shaped entries.

Tensors are [B, S, H, D] views (FlashAttention's layout); an SDPA-shaped
[B, H, S, D] tensor is passed as its transpose, a view: the runtime takes
any (batch, head, sequence) strides with a contiguous last dimension and
16-byte-aligned rows, so such inputs are never copied. Kernels run on
PyTorch's current CUDA stream. The forward launches through the C++
function of _native.py where it is built (flash_attn_func's calls that
record no graph go straight to it, which checks the tensors as _check
does), else through ctypes; the backward through ctypes (kernel-bound).
The checks are the runtime's (fa_check_forward, fa_check_backward), here
and in the C++ function alike.
"""

import os
import threading
from typing import Optional, Tuple

import torch

from . import _native
from ._checks import check_backward_tensors, check_forward_tensors as _check
from ._kernels import KernelSpec, KernelStore, mask_of
from ._runtime import BackwardArgs, FaMlirError, ForwardArgs, Runtime, check_backward_range

_DTYPES = {torch.bfloat16: "bf16", torch.float16: "f16"}
_lock = threading.Lock()
_runtime = None
_stores = {}


def target_of(device):
    """The chip fa-compile targets for `device` (FA_MLIR_TARGET overrides)."""
    forced = os.environ.get("FA_MLIR_TARGET")
    if forced:
        return forced
    major, minor = torch.cuda.get_device_capability(device)
    if major == 9:
        return "sm_90a"
    if major >= 8:
        return "sm_80"
    raise FaMlirError(f"fa_mlir: compute capability {major}.{minor} is not supported "
                      "(fa-mlir's kernels are sm_80 and sm_90a)")


# The largest budget fa-compile takes (kLargestSharedMemoryBudget in
# include/fa/Conversion/FAToGPU/AttentionKernel.h, 227 KB, as fa-run --spec
# caps it): a GPU reporting more compiles within that.
_LARGEST_BUDGET_KB = 227


def shared_memory_budget_of(device):
    """The KB of shared memory a block may take on `device` (its opt-in
    maximum: an H100's 227, an A100's 163): the budget its kernels are
    compiled within, so each GPU gets the tiles it holds (0 where PyTorch
    does not say: the chip's default, any kernel matching)."""
    properties = torch.cuda.get_device_properties(device)
    optin = getattr(properties, "shared_memory_per_block_optin", 0) // 1024
    return min(optin, _LARGEST_BUDGET_KB)


def _state(device):
    global _runtime
    with _lock:
        if _runtime is None:
            _runtime = Runtime()
        key = (target_of(device), shared_memory_budget_of(device))
        if key not in _stores:
            _stores[key] = KernelStore(key[0], shared_memory_budget_kb=key[1])
        return _runtime, _stores[key]


def _rows(t):
    """(batch, head, sequence) strides of a [B, S, H, W] tensor."""
    return (t.stride(0), t.stride(2), t.stride(1))


def _usable(t):
    """`t`, or a contiguous copy where the runtime cannot take its strides."""
    if t.data_ptr() % 16 == 0 and t.is_contiguous() and (t.shape[-1] * t.element_size()) % 16 == 0:
        return t  # the common case, decided without a stride walk
    aligned = (t.stride(-1) == 1 and t.data_ptr() % 16 == 0
               and all((s * t.element_size()) % 16 == 0 for s in t.stride()[:-1]))
    return t if aligned else t.clone(memory_format=torch.contiguous_format)


def _stream(device):
    """PyTorch's current CUDA stream on `device`, as the runtime takes it."""
    try:
        return torch._C._cuda_getCurrentRawStream(device.index or 0)
    except AttributeError:  # a PyTorch without the raw getter
        return torch.cuda.current_stream(device).cuda_stream


def _spec(q, v, scale, mask, softcap, alibi_slopes):
    alibi = "none" if alibi_slopes is None else ("head" if alibi_slopes.dim() == 1 else "batch_head")
    return KernelSpec(_DTYPES[q.dtype], q.shape[3], v.shape[3], mask, float(scale),
                      float(softcap), alibi)


def _forward_args(q, k, v, out, lse, alibi_slopes):
    args = ForwardArgs()
    args.q, args.k, args.v, args.o, args.lse = (t.data_ptr() for t in (q, k, v, out, lse))
    args.batch, args.q_len, args.q_heads = q.shape[0], q.shape[1], q.shape[2]
    args.kv_len, args.kv_heads = k.shape[1], k.shape[2]
    args.q_stride[:], args.k_stride[:], args.v_stride[:], args.o_stride[:] = (
        _rows(q), _rows(k), _rows(v), _rows(out))
    args.lse_stride[:] = (lse.stride(0), lse.stride(1))
    if alibi_slopes is not None:
        args.alibi_slopes = alibi_slopes.data_ptr()
        args.alibi_stride_b = alibi_slopes.shape[-1] if alibi_slopes.dim() == 2 else 0
    return args


# The loaded forward kernel per spec (dtype, D, Dv, mask, scale, softcap,
# ALiBi): fa_kernel handles of libfa_runtime, which both launch paths take.
_kernels = {}


def _forward_kernel(q, v, scale, mask, softcap, alibi_slopes):
    alibi = None if alibi_slopes is None else alibi_slopes.dim()
    key = (q.dtype, q.shape[3], v.shape[3], mask, scale, softcap, alibi)
    kernel = _kernels.get(key)
    if kernel is None:
        runtime, store = _state(q.device)
        kernel = _kernels[key] = runtime.forward_kernel(
            store.manifest(_spec(q, v, scale, mask, softcap, alibi_slopes)))
    return kernel


def _native_forward(op, q, k, v, alibi_slopes, kernel):
    """O and LSE by the C++ launch (csrc/native_forward.cpp), its refusals
    (ValueError) and failures (RuntimeError) as FaMlirError."""
    try:
        return op(q, k, v, alibi_slopes, kernel)
    except (ValueError, RuntimeError) as error:
        raise FaMlirError((str(error).strip().splitlines() or ["fa_mlir: launch failed"])[0]) from None


# The ctypes path, per call signature (device, dtypes, shapes, strides,
# options): an argument block with the sizes and strides filled in; a call
# then sets the pointers and launches.
_launches = {}


def _signature(tensors, options):
    return (options, *((t.dtype, t.device, t.shape, t.stride()) for t in tensors))


def _forward_impl(q, k, v, scale, mask, softcap, alibi_slopes):
    kernel = _forward_kernel(q, v, scale, mask, softcap, alibi_slopes)
    op = _native.forward_op()
    if op is not None:
        return _native_forward(op, q, k, v, alibi_slopes, kernel)
    q, k, v = _usable(q), _usable(k), _usable(v)
    if alibi_slopes is not None:
        alibi_slopes = alibi_slopes.contiguous()
    B, M, Hq, _ = q.shape
    out = torch.empty((B, M, Hq, v.shape[3]), dtype=q.dtype, device=q.device)
    lse = torch.empty((B, Hq, M), dtype=torch.float32, device=q.device)
    key = _signature((q, k, v) if alibi_slopes is None else (q, k, v, alibi_slopes),
                     ("fwd", scale, mask, softcap))
    args = _launches.get(key)
    if args is None:
        args = _launches[key] = _forward_args(q, k, v, out, lse, alibi_slopes)
    args.q, args.k, args.v, args.o, args.lse = (
        q.data_ptr(), k.data_ptr(), v.data_ptr(), out.data_ptr(), lse.data_ptr())
    if alibi_slopes is not None:
        args.alibi_slopes = alibi_slopes.data_ptr()
    _runtime.forward(kernel, args, _stream(q.device))  # set by _forward_kernel's _state
    return out, lse


@torch.library.custom_op("fa_mlir::forward", mutates_args=())
def forward_op(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, scale: float, mask: str,
               softcap: float, alibi_slopes: Optional[torch.Tensor],
               deterministic: bool) -> Tuple[torch.Tensor, torch.Tensor]:
    """O [B, M, Hq, Dv] and LSE [B, Hq, M] (f32). `deterministic` is the
    backward's (kept for autograd's context)."""
    return _forward_impl(q, k, v, scale, mask, softcap, alibi_slopes)


@forward_op.register_fake
def _(q, k, v, scale, mask, softcap, alibi_slopes, deterministic):
    # Under torch.compile the checks run here, on the traced shapes: a
    # ctypes call in the traced Python would break the graph.
    _check(q, k, v, alibi_slopes)
    B, M, Hq, _ = q.shape
    return (q.new_empty((B, M, Hq, v.shape[3])),
            q.new_empty((B, Hq, M), dtype=torch.float32))


def _backward_impl(d_out, q, k, v, out, lse, scale, mask, softcap, alibi_slopes,
                   deterministic):
    check_backward_tensors(q, k, v, alibi_slopes, out, lse, d_out)
    d_out, q, k, v, out = (_usable(t) for t in (d_out, q, k, v, out))
    if alibi_slopes is not None:
        alibi_slopes = alibi_slopes.contiguous()
    dq, dk, dv = (torch.empty(t.shape, dtype=t.dtype, device=t.device) for t in (q, k, v))
    runtime, store = _state(q.device)
    spec = _spec(q, v, scale, mask, softcap, alibi_slopes)
    kernel = runtime.backward_kernel(store.manifest(spec, backward=True, deterministic=deterministic))
    workspace = torch.empty(runtime.workspace_bytes(kernel, q.shape[0], q.shape[2], q.shape[1]),
                            dtype=torch.uint8, device=q.device)
    args = BackwardArgs()
    args.forward = _forward_args(q, k, v, out, lse, alibi_slopes)
    args.d_out, args.dq, args.dk, args.dv = (t.data_ptr() for t in (d_out, dq, dk, dv))
    args.d_out_stride[:], args.dq_stride[:], args.dk_stride[:], args.dv_stride[:] = (
        _rows(d_out), _rows(dq), _rows(dk), _rows(dv))
    args.workspace = workspace.data_ptr()
    args.deterministic = int(deterministic)
    runtime.backward(kernel, args, _stream(q.device))
    return dq, dk, dv


@torch.library.custom_op("fa_mlir::backward", mutates_args=())
def backward_op(d_out: torch.Tensor, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor,
                out: torch.Tensor, lse: torch.Tensor, scale: float, mask: str, softcap: float,
                alibi_slopes: Optional[torch.Tensor],
                deterministic: bool) -> Tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """dQ, dK, dV (GQA: dK, dV summed over each group's query heads)."""
    return _backward_impl(d_out, q, k, v, out, lse, scale, mask, softcap, alibi_slopes,
                          deterministic)


@backward_op.register_fake
def _(d_out, q, k, v, out, lse, scale, mask, softcap, alibi_slopes, deterministic):
    check_backward_tensors(q, k, v, alibi_slopes, out, lse, d_out)
    # Contiguous, as the real op allocates them (not empty_like's strides).
    return q.new_empty(q.shape), k.new_empty(k.shape), v.new_empty(v.shape)


def _remember(ctx, inputs, output):
    """What the backward needs, from the forward's inputs and outputs."""
    q, k, v, scale, mask, softcap, alibi_slopes, deterministic = inputs
    out, lse = output
    ctx.save_for_backward(q, k, v, out, lse, alibi_slopes)
    ctx.options = (scale, mask, softcap, deterministic)


def _gradients(ctx, d_out, backward):
    """The forward's inputs' gradients by `backward` (the custom op, or its
    implementation); the LSE's gradient is not taken (FlashAttention's is
    not either)."""
    q, k, v, out, lse, alibi_slopes = ctx.saved_tensors
    scale, mask, softcap, deterministic = ctx.options
    dq, dk, dv = backward(d_out, q, k, v, out, lse, scale, mask, softcap,
                          alibi_slopes, deterministic)
    return dq, dk, dv, None, None, None, None, None


def _check_differentiable(q, scale):
    """Refuses, before the forward runs, a call whose backward could not be
    built (the runtime's fa_spec_check_backward, remembered per D and
    scale)."""
    check_backward_range(q.shape[-1], scale)


def _setup_context(ctx, inputs, output):
    _check_differentiable(inputs[0], inputs[3])
    _remember(ctx, inputs, output)


def _backward(ctx, d_out, d_lse):
    return _gradients(ctx, d_out, backward_op)


forward_op.register_autograd(_backward, setup_context=_setup_context)


class _EagerAttention(torch.autograd.Function):
    """The same forward and backward as the custom ops, without their
    dispatch: what eager calls take (torch.compile traces the custom ops)."""

    @staticmethod
    def forward(ctx, *inputs):
        q, k, v, scale, mask, softcap, alibi_slopes, _ = inputs
        out, lse = _forward_impl(q, k, v, scale, mask, softcap, alibi_slopes)
        _remember(ctx, inputs, (out, lse))
        ctx.mark_non_differentiable(lse)
        return out, lse

    @staticmethod
    def backward(ctx, d_out, d_lse):
        return _gradients(ctx, d_out, _backward_impl)


def _attention(q, k, v, scale, mask, softcap, alibi_slopes, deterministic):
    if torch.compiler.is_compiling():
        return forward_op(q, k, v, scale, mask, softcap, alibi_slopes, deterministic)
    if not (torch.is_grad_enabled() and (q.requires_grad or k.requires_grad or v.requires_grad)):
        return _forward_impl(q, k, v, scale, mask, softcap, alibi_slopes)  # nothing to record
    _check_differentiable(q, scale)
    return _EagerAttention.apply(q, k, v, scale, mask, softcap, alibi_slopes, deterministic)


# flash_attn_func's options -> the kernel, for calls the C++ op launches
# without Python's checks or the autograd machinery (it checks the tensors
# itself); filled by the first call of each option set.
_fast_kernels = {}


def flash_attn_func(q, k, v, dropout_p=0.0, softmax_scale=None, causal=False,
                    window_size=(-1, -1), softcap=0.0, alibi_slopes=None,
                    deterministic=False, return_attn_probs=False):
    """FlashAttention's flash_attn_func on fa-mlir's kernels: q [B, M, Hq, D],
    k [B, N, Hkv, D], v [B, N, Hkv, Dv] (Hq a multiple of Hkv), bf16 or f16;
    causal and windows bottom-right aligned. Returns O [B, M, Hq, Dv], or
    (O, LSE [B, Hq, M], None) with return_attn_probs, as FlashAttention does.
    A row with no visible key gets O = 0 and LSE = -inf (FlashAttention 2
    writes +inf there)."""
    if dropout_p and dropout_p > 0.0:
        raise FaMlirError("fa_mlir: dropout_p > 0 is not supported (fa-mlir's kernels have no dropout)")
    op = _native._op
    options = None  # the fast path's key, where the C++ launch is built
    if op is not None and not torch.compiler.is_compiling():
        options = (q.dtype, q.shape[-1], v.shape[-1], causal, tuple(window_size),
                   softmax_scale, softcap, None if alibi_slopes is None else alibi_slopes.dim())
        kernel = _fast_kernels.get(options)
        if kernel is not None and not (torch.is_grad_enabled() and (
                q.requires_grad or k.requires_grad or v.requires_grad)):
            out, lse = _native_forward(op, q, k, v, alibi_slopes, kernel)
            return (out, lse, None) if return_attn_probs else out
    if not torch.compiler.is_compiling():  # compiled, forward_op's fake checks
        _check(q, k, v, alibi_slopes)
    scale = float(softmax_scale if softmax_scale is not None else q.shape[-1] ** -0.5)
    mask = mask_of(causal, tuple(window_size))
    softcap = float(softcap or 0.0)
    out, lse = _attention(q, k, v, scale, mask, softcap, alibi_slopes, bool(deterministic))
    if options is not None:
        _fast_kernels[options] = _forward_kernel(q, v, scale, mask, softcap, alibi_slopes)
    return (out, lse, None) if return_attn_probs else out


def sdpa(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None, *,
         enable_gqa=False):
    """torch.nn.functional.scaled_dot_product_attention's signature, shape
    ([B, H, S, D]) and semantics (is_causal is top-left aligned, as SDPA's
    is), on fa-mlir's kernels. attn_mask and dropout are not supported."""
    if dropout_p and dropout_p > 0.0:
        raise FaMlirError("fa_mlir.sdpa: dropout_p > 0 is not supported")
    if attn_mask is not None:
        raise FaMlirError("fa_mlir.sdpa: attn_mask is not supported (use is_causal)")
    if query.shape[1] != key.shape[1] and not enable_gqa:
        raise FaMlirError(f"fa_mlir.sdpa: {query.shape[1]} query heads and {key.shape[1]} "
                          "key/value heads need enable_gqa=True")
    q, k, v = (t.transpose(1, 2) for t in (query, key, value))
    if not torch.compiler.is_compiling():  # compiled, forward_op's fake checks
        _check(q, k, v, None)
    s = scale if scale is not None else query.shape[-1] ** -0.5
    mask = mask_of(is_causal, (-1, -1), top_left=True)
    out, _ = _attention(q, k, v, float(s), mask, 0.0, None, False)
    return out.transpose(1, 2)
