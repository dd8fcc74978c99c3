"""ctypes bindings to libfa_runtime's C API (runtime/include/fa/runtime/fa_runtime.h
and fa_spec.h).

The structures mirror fa_forward_args, fa_backward_args, fa_spec and
fa_tensor_desc field for field; every call reports failure through its
return value and fa_last_error(), which become FaMlirError (NoGpuError where
fa_no_gpu() says so). The spec language (parse_spec, spec_of, format_spec)
and the checks of a call's tensors (check_forward, check_backward) are the
runtime's: the package has no parser or checks of its own.
"""

import ctypes
import functools
import os
import threading
from pathlib import Path

_I64 = ctypes.c_int64
_I32 = ctypes.c_int32
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


class Spec(ctypes.Structure):
    """fa_spec (fa_spec.h): enumerated fields hold fa_dtype, fa_mask_kind,
    fa_alibi_kind and fa_descale_kind values; zeros in value_dim, scale,
    block_m and block_n mean "not stated"."""

    _fields_ = [
        ("head_dim", _I64), ("value_dim", _I64),
        ("dtype", _I32), ("mask", _I32),
        ("window_left", _I64), ("window_right", _I64),
        ("scale", ctypes.c_double), ("softcap", ctypes.c_double),
        ("alibi", _I32), ("descale", _I32),
        ("block_m", _I64), ("block_n", _I64),
    ]


class TensorDesc(ctypes.Structure):
    """fa_tensor_desc: a tensor as the checks see it."""

    _fields_ = [
        ("shape", ctypes.POINTER(_I64)), ("rank", _I64),
        ("dtype", _I32), ("device", _I32),
        ("dtype_name", ctypes.c_char_p), ("device_name", ctypes.c_char_p),
    ]


# fa_dtype and fa_layout (fa_spec.h), as the checks take them.
DTYPE_F16, DTYPE_BF16, DTYPE_F8E4M3FN, DTYPE_F32, DTYPE_OTHER = 0, 1, 2, 3, -1
LAYOUT_BSHD, LAYOUT_BHSD = 0, 1


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


_SIGNATURES = {
    "fa_kernel_load": (_P, [ctypes.c_char_p]),
    "fa_kernel_forward": (ctypes.c_int, [_P, ctypes.POINTER(ForwardArgs), _P]),
    "fa_kernel_free": (None, [_P]),
    "fa_backward_kernel_load": (_P, [ctypes.c_char_p]),
    "fa_backward_workspace_size": (_I64, [_P, _I64, _I64, _I64]),
    "fa_kernel_backward": (ctypes.c_int, [_P, ctypes.POINTER(BackwardArgs), _P]),
    "fa_backward_kernel_free": (None, [_P]),
    "fa_spec_init": (None, [ctypes.POINTER(Spec)]),
    "fa_spec_parse": (ctypes.c_int, [ctypes.c_char_p, ctypes.POINTER(Spec)]),
    "fa_spec_set": (ctypes.c_int, [ctypes.POINTER(Spec), ctypes.c_char_p, ctypes.c_char_p]),
    "fa_spec_format": (_I64, [ctypes.POINTER(Spec), ctypes.c_char_p, _I64]),
    "fa_spec_check_backward": (ctypes.c_int, [ctypes.POINTER(Spec)]),
    "fa_check_forward": (ctypes.c_int, [_I32] + [ctypes.POINTER(TensorDesc)] * 4),
    "fa_check_backward": (ctypes.c_int, [_I32] + [ctypes.POINTER(TensorDesc)] * 7),
    "fa_last_error": (ctypes.c_char_p, []),
    "fa_no_gpu": (ctypes.c_int, []),
}

_libraries = {}
_libraries_lock = threading.Lock()


def library(path=None):
    """libfa_runtime.so (find_library's, or `path`), loaded once per path,
    its functions typed."""
    path = Path(path) if path else find_library()
    with _libraries_lock:
        lib = _libraries.get(str(path))
        if lib is None:
            lib = ctypes.CDLL(str(path))
            for name, (restype, argtypes) in _SIGNATURES.items():
                fn = getattr(lib, name)
                fn.restype, fn.argtypes = restype, argtypes
            _libraries[str(path)] = lib
        return lib


def _refusal(lib):
    """FaMlirError with the runtime's reason, as the package words it."""
    return FaMlirError("fa_mlir: " + (lib.fa_last_error() or b"").decode(errors="replace"))


def parse_spec(text):
    """The Spec of spec text ("d=128,dtype=bf16,mask=causal"), as fa-compile
    reads it: Dv and the scale resolved, an unstated block 0. FaMlirError
    with the one-line reason if the runtime refuses it."""
    lib = library()
    spec = Spec()
    if lib.fa_spec_parse(text.encode(), ctypes.byref(spec)) != 0:
        raise _refusal(lib)
    return spec


def spec_of(pairs):
    """The Spec of (key, value) pairs, each value read as spec text reads it
    (never pasted into spec text), unstated keys at their defaults."""
    lib = library()
    spec = Spec()
    lib.fa_spec_init(ctypes.byref(spec))
    for key, value in pairs:
        if lib.fa_spec_set(ctypes.byref(spec), key.encode(), str(value).encode()) != 0:
            raise _refusal(lib)
    return spec


def check_backward_spec(spec):
    """FaMlirError with the runtime's one-line reason if no backward can be
    compiled for `spec` (fa_spec_check_backward: e.g. |scale| past the
    backward's range)."""
    lib = library()
    if lib.fa_spec_check_backward(ctypes.byref(spec)) != 0:
        raise _refusal(lib)


def check_backward_range(head_dim, scale):
    """check_backward_spec of the spec (d=head_dim, scale=scale), as a call
    that records gradients asks it before each forward. An accepted pair is
    remembered (the check is a pure function of the two, and a few C calls
    cost more than a launch); a refused one is asked again each time, so it
    raises the same one-line error."""
    _backward_range_accepted(str(head_dim), repr(float(scale)))


@functools.lru_cache(maxsize=256)
def _backward_range_accepted(head_dim_text, scale_text):
    # Raises on a refusal, which lru_cache does not remember.
    check_backward_spec(spec_of([("d", head_dim_text), ("scale", scale_text)]))
    return True


def format_spec(spec):
    """A Spec's text, which parse_spec reads back exactly (FaMlirError if the
    runtime refuses the spec)."""
    lib = library()
    text = ctypes.create_string_buffer(256)
    length = lib.fa_spec_format(ctypes.byref(spec), text, len(text))
    if length < 0:
        raise _refusal(lib)
    if length >= len(text):
        text = ctypes.create_string_buffer(length + 1)
        lib.fa_spec_format(ctypes.byref(spec), text, len(text))
    return text.value.decode()


def check_forward(layout, q, k, v, alibi_slopes=None):
    """fa_check_forward on TensorDescs (alibi_slopes None: none); FaMlirError
    with the first violation."""
    lib = library()
    alibi = None if alibi_slopes is None else ctypes.byref(alibi_slopes)
    if lib.fa_check_forward(layout, ctypes.byref(q), ctypes.byref(k), ctypes.byref(v),
                            alibi) != 0:
        raise _refusal(lib)


def check_backward(layout, q, k, v, alibi_slopes, out, lse, d_out):
    """fa_check_backward on TensorDescs; FaMlirError with the first violation."""
    lib = library()
    alibi = None if alibi_slopes is None else ctypes.byref(alibi_slopes)
    if lib.fa_check_backward(layout, ctypes.byref(q), ctypes.byref(k), ctypes.byref(v), alibi,
                             ctypes.byref(out), ctypes.byref(lse), ctypes.byref(d_out)) != 0:
        raise _refusal(lib)


class Runtime:
    """One loaded libfa_runtime; kernels are loaded once each (by path)."""

    def __init__(self, path=None):
        self.path = Path(path) if path else find_library()
        self.lib = library(self.path)
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
