"""The forward's launch in C++ (csrc/native_forward.cpp), for launch-bound calls.

Python and ctypes spend ~60 us of CPU on a forward call (BENCHMARKS.md,
the PyTorch package); `fa_mlir_native.forward` (a pybind11 function) does
the checks, the allocations and the launch in one C++ call. It needs PyTorch's headers, so
it is built on the machine that runs it, on first use, by
torch.utils.cpp_extension (ninja and a C++ compiler; ~1 min once), into
<cache>/native/<hash of the sources, PyTorch and the runtime>/ beside the
kernel cache (FA_MLIR_CACHE_DIR or ~/.cache/fa-mlir), and loaded from there
afterwards.

`python3 -m fa_mlir._native` builds it ahead of the first call.
FA_MLIR_NATIVE=0 turns it off. Where it cannot be built the package warns
once, with the reason, and launches through ctypes (_runtime.py): the same
kernels and results, more CPU per call.
"""

import hashlib
import os
import threading
import warnings
from pathlib import Path

import torch

from ._runtime import find_library

_HERE = Path(__file__).resolve().parent
_SOURCE = _HERE / "csrc" / "native_forward.cpp"
_lock = threading.Lock()
_op = None
_reason = None  # why there is no op, once tried


def _header_dir():
    """The directory holding fa/runtime/fa_runtime.h and fa_spec.h (the C API)."""
    for candidate in (_HERE / "include", _HERE.parent.parent / "runtime" / "include"):
        if (candidate / "fa" / "runtime" / "fa_runtime.h").is_file():
            return candidate
    raise FileNotFoundError("fa/runtime/fa_runtime.h is neither in the package nor "
                            "in a source checkout")


def _build_dir(library, headers):
    digest = hashlib.sha256()
    c_api = [headers / "fa" / "runtime" / name for name in ("fa_runtime.h", "fa_spec.h")]
    for part in (_SOURCE.read_bytes(), *(path.read_bytes() for path in c_api),
                 torch.__version__.encode(), str(library).encode()):
        digest.update(part)
    root = Path(os.environ.get("FA_MLIR_CACHE_DIR", Path.home() / ".cache" / "fa-mlir"))
    return root / "native" / digest.hexdigest()[:20]


def _build():
    from torch.utils.cpp_extension import load

    library = find_library().resolve()  # -L and the rpath must not be relative
    headers = _header_dir()
    build = _build_dir(library, headers)
    build.mkdir(parents=True, exist_ok=True)
    module = load(name="fa_mlir_native", sources=[str(_SOURCE)],
                  extra_include_paths=[str(headers)], extra_cflags=["-O2"],
                  extra_ldflags=[f"-L{library.parent}", "-lfa_runtime",
                                 f"-Wl,-rpath,{library.parent}"],
                  build_directory=str(build), with_cuda=True, is_python_module=True,
                  verbose=False)
    return module.forward


def forward_op():
    """fa_mlir_native.forward (q, k, v, alibi_slopes, kernel handle) ->
    (O, LSE), built or loaded on first use; None where it is turned off or
    cannot be built (reason())."""
    global _op, _reason
    if _op is not None or _reason is not None:
        return _op
    with _lock:
        if _op is None and _reason is None:
            if os.environ.get("FA_MLIR_NATIVE", "1") == "0":
                _reason = "turned off by FA_MLIR_NATIVE=0"
            else:
                try:
                    _op = _build()
                except Exception as error:  # noqa: BLE001: any build failure
                    first = (str(error).strip().splitlines() or [type(error).__name__])[0]
                    _reason = f"could not be built ({first})"
                    warnings.warn(f"fa_mlir: the C++ launch {_reason}; launching through "
                                  "ctypes (more CPU per call)", RuntimeWarning, stacklevel=3)
    return _op


def reason():
    """Why forward_op() is None ("" when it is not)."""
    return _reason or ""


if __name__ == "__main__":
    import time

    start = time.perf_counter()
    ready = forward_op() is not None
    print(f"fa_mlir_native: {'ready' if ready else reason()} "
          f"({time.perf_counter() - start:.1f} s)")
    raise SystemExit(0 if ready else 1)
