"""ctypes bindings to libfa_runtime's C API (runtime/include/fa/runtime/fa_runtime.h).

The structures mirror fa_forward_args and fa_backward_args field for field;
every call reports failure through its return value and fa_last_error(),
which become FaMlirError (NoGpuError where fa_no_gpu() says so).
"""

import ctypes
import os
from pathlib import Path

_I64 = ctypes.c_int64
_P = ctypes.c_void_p


class FaMlirError(RuntimeError):
    """A refusal or failure of fa-mlir, with its one-line reason."""


class NoGpuError(FaMlirError):
    """No GPU or CUDA driver on this machine."""


class ForwardArgs(ctypes.Structure):
    _fields_ = [
        ("q", _P), ("k", _P), ("v", _P), ("o", _P), ("lse", _P),
        ("batch", _I64), ("q_heads", _I64), ("kv_heads", _I64),
        ("q_len", _I64), ("kv_len", _I64),
        ("q_stride", _I64 * 3), ("k_stride", _I64 * 3),
        ("v_stride", _I64 * 3), ("o_stride", _I64 * 3),
        ("lse_stride", _I64 * 2),
        ("alibi_slopes", _P), ("alibi_stride_b", _I64),
        # f8e4m3fn kernels: device f32 descales, [b * descale_stride[0] +
        # h * descale_stride[1]] ({0, 0}: one per tensor); NULL otherwise.
        ("q_descale", _P), ("k_descale", _P), ("v_descale", _P),
        ("descale_stride", _I64 * 2),
    ]


class BackwardArgs(ctypes.Structure):
    _fields_ = [
        ("forward", ForwardArgs),
        ("d_out", _P), ("dq", _P), ("dk", _P), ("dv", _P),
        ("d_out_stride", _I64 * 3), ("dq_stride", _I64 * 3),
        ("dk_stride", _I64 * 3), ("dv_stride", _I64 * 3),
        ("workspace", _P), ("deterministic", ctypes.c_int),
    ]


def _library_candidates():
    env = os.environ.get("FA_MLIR_RUNTIME_LIB")
    if env:
        yield Path(env)
    here = Path(__file__).resolve().parent
    yield here / "lib" / "libfa_runtime.so"  # an installed package
    root = here.parent.parent  # a source checkout: python/fa_mlir/
    for build in ("build-gpu", "build"):
        yield root / build / "runtime" / "libfa_runtime.so"


def find_library():
    """The path of libfa_runtime.so, or FaMlirError saying where it looked."""
    tried = []
    for path in _library_candidates():
        if path.is_file():
            return path
        tried.append(str(path))
    raise FaMlirError(
        "fa_mlir: libfa_runtime.so not found (tried " + ", ".join(tried) +
        "); build it with cmake -S . -B build-gpu -DFA_ENABLE_COMPILER=OFF && "
        "ninja -C build-gpu, or set FA_MLIR_RUNTIME_LIB")


class Runtime:
    """One loaded libfa_runtime; kernels are loaded once each (by path)."""

    def __init__(self, path=None):
        self.path = Path(path) if path else find_library()
        lib = ctypes.CDLL(str(self.path))
        sig = {
            "fa_kernel_load": (_P, [ctypes.c_char_p]),
            "fa_kernel_forward": (ctypes.c_int, [_P, ctypes.POINTER(ForwardArgs), _P]),
            "fa_kernel_free": (None, [_P]),
            "fa_backward_kernel_load": (_P, [ctypes.c_char_p]),
            "fa_backward_workspace_size": (_I64, [_P, _I64, _I64, _I64]),
            "fa_kernel_backward": (ctypes.c_int, [_P, ctypes.POINTER(BackwardArgs), _P]),
            "fa_backward_kernel_free": (None, [_P]),
            "fa_last_error": (ctypes.c_char_p, []),
            "fa_no_gpu": (ctypes.c_int, []),
        }
        for name, (restype, argtypes) in sig.items():
            fn = getattr(lib, name)
            fn.restype, fn.argtypes = restype, argtypes
        self.lib = lib
        self._forward = {}
        self._backward = {}

    def _fail(self, what):
        reason = (self.lib.fa_last_error() or b"").decode(errors="replace")
        error = NoGpuError if self.lib.fa_no_gpu() else FaMlirError
        raise error(f"fa_mlir: {what}: {reason}")

    def _load_once(self, loaded, load, manifest):
        key = str(manifest)
        if key not in loaded:
            handle = load(key.encode())
            if not handle:
                self._fail(f"cannot load {manifest}")
            loaded[key] = handle
        return loaded[key]

    def forward_kernel(self, manifest):
        return self._load_once(self._forward, self.lib.fa_kernel_load, manifest)

    def backward_kernel(self, manifest):
        return self._load_once(self._backward, self.lib.fa_backward_kernel_load, manifest)

    def forward(self, kernel, args, stream):
        if self.lib.fa_kernel_forward(kernel, ctypes.byref(args), stream) != 0:
            self._fail("forward launch")

    def workspace_bytes(self, kernel, batch, q_heads, q_len):
        size = self.lib.fa_backward_workspace_size(kernel, batch, q_heads, q_len)
        if size < 0:
            self._fail("backward workspace size")
        return size

    def backward(self, kernel, args, stream):
        if self.lib.fa_kernel_backward(kernel, ctypes.byref(args), stream) != 0:
            self._fail("backward launch")
