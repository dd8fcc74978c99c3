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
    import torch as _torch
except ImportError:  # the kernel store and runtime work without PyTorch
    _torch = None

# The ops are torch.library custom ops (PyTorch 2.4 and later).
if _torch is None:
    _NO_OPS = "PyTorch is not installed"
elif not hasattr(_torch.library, "custom_op"):
    _NO_OPS = (f"PyTorch {_torch.__version__} has no torch.library.custom_op "
               "(PyTorch 2.4 or later)")
else:
    _NO_OPS = None

if _NO_OPS is None:
    from ._ops import flash_attn_func, sdpa, target_of
    from ._transformers import fa_mlir_attention, register as register_transformers
else:
    def _needs_torch(*args, **kwargs):
        raise ImportError(f"fa_mlir: {_NO_OPS}; flash_attn_func, sdpa and "
                          "register_transformers need it")

    flash_attn_func = sdpa = register_transformers = _needs_torch

__all__ = ["flash_attn_func", "sdpa", "register_transformers", "KernelSpec",
           "KernelStore", "Runtime", "FaMlirError", "NoGpuError"]
