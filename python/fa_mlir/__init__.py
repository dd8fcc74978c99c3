"""fa_mlir: fa-mlir's attention kernels from PyTorch.

    from fa_mlir import flash_attn_func        # FlashAttention's signature
    out = flash_attn_func(q, k, v, causal=True)  # q, k, v: [B, S, H, D]

    import fa_mlir; fa_mlir.register_transformers()
    model = AutoModelForCausalLM.from_config(cfg, attn_implementation="fa_mlir")

Kernels are found in the cache (~/.cache/fa-mlir), among those shipped with
the package, or compiled by fa-compile (_kernels.py says how); the runtime is
libfa_runtime.so, loaded through ctypes (_runtime.py); forwards launch
through a small C++ function built on first use (_native.py, csrc/), or
through ctypes where it cannot be built.
"""

from ._kernels import KernelSpec, KernelStore
from ._runtime import FaMlirError, NoGpuError, Runtime

try:
    import torch as _torch  # noqa: F401
except ImportError:  # the kernel store and runtime work without PyTorch
    _torch = None

if _torch is not None:
    from ._ops import flash_attn_func, sdpa, target_of
    from ._transformers import fa_mlir_attention, register as register_transformers
else:
    def _needs_torch(*args, **kwargs):
        raise ImportError("fa_mlir: PyTorch is not installed; flash_attn_func, sdpa and "
                          "register_transformers need it")

    flash_attn_func = sdpa = register_transformers = _needs_torch

__all__ = ["flash_attn_func", "sdpa", "register_transformers", "KernelSpec",
           "KernelStore", "Runtime", "FaMlirError", "NoGpuError"]
