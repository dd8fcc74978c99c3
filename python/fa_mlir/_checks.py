"""The checks of a call's PyTorch tensors: libfa_runtime's fa_check_forward
and fa_check_backward (fa_spec.h), which the C++ launch (csrc/) calls too,
on [B, S, H, D] tensors described in PyTorch's words. Needs PyTorch, not a
GPU, and not the custom-op API _ops.py needs.
"""

import ctypes

import torch

from ._runtime import (DTYPE_BF16, DTYPE_F16, DTYPE_F32, DTYPE_OTHER, LAYOUT_BSHD,
                       TensorDesc, check_backward, check_forward)

# fa_dtype of the dtypes the checks tell apart (any other: DTYPE_OTHER).
_DTYPE_CODES = {torch.float16: DTYPE_F16, torch.bfloat16: DTYPE_BF16, torch.float32: DTYPE_F32}


def describe(t):
    """The runtime's view of a tensor (fa_tensor_desc), in PyTorch's words
    for its messages ("torch.float32", "cpu")."""
    shape = (ctypes.c_int64 * t.dim())(*t.shape)
    desc = TensorDesc(ctypes.cast(shape, ctypes.POINTER(ctypes.c_int64)), t.dim(),
                      _DTYPE_CODES.get(t.dtype, DTYPE_OTHER),
                      t.device.index if t.is_cuda else -1, str(t.dtype).encode(),
                      None if t.is_cuda else str(t.device).encode())
    desc.keep = shape  # the shape lives as long as the description
    return desc


def _optional(t):
    return None if t is None else describe(t)


def check_forward_tensors(q, k, v, alibi_slopes):
    """q, k, v [B, S, H, D] and the ALiBi slopes (or None) as a forward
    takes them: FaMlirError with the first violation, in one line."""
    check_forward(LAYOUT_BSHD, describe(q), describe(k), describe(v), _optional(alibi_slopes))


def check_backward_tensors(q, k, v, alibi_slopes, out, lse, d_out):
    """The forward's tensors, and O, LSE and dO as the backward takes them."""
    check_backward(LAYOUT_BSHD, describe(q), describe(k), describe(v), _optional(alibi_slopes),
                   describe(out), describe(lse), describe(d_out))
