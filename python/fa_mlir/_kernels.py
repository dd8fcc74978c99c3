"""Kernel selection: which fa-compile output serves a call, and where it lives.

A call needs a kernel for (target chip, dtype, D, Dv, mask, scale, softcap,
ALiBi, direction). KernelStore looks, in order,
  1. in the on-disk cache, ~/.cache/fa-mlir/<generator>/<key>/ (key: a hash
     of the spec, the chip and the direction; <generator> the compiler's
     revision, as fa-compile --version prints it), as Triton's cache does;
  2. in the kernels shipped with the package (fa_mlir/kernels/, or the
     checkout's kernels_generated/) and in the directories of
     FA_MLIR_KERNEL_PATH, by their manifests' spec;
  3. by running fa-compile (FA_MLIR_COMPILE, PATH, or the checkout's
     build/bin) into the cache,
and otherwise raises FaMlirError naming the missing spec and the command
that generates it. Each manifest path is resolved once per process.

A store may be given the device's shared-memory budget (KB per block, the
opt-in maximum: an H100's 227, an A100's 163, an RTX 3090's 99). Then 1 and
2 take only kernels built for exactly that budget (their manifests'
"shared_memory_budget"), 3 compiles within it (on the tiles this device
holds: sm_80's D256 backward on 64 x 64 on an H100), and without a compiler
any shipped kernel whose shared memory the device holds serves.
"""

import functools
import hashlib
import json
import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from ._runtime import FaMlirError, format_spec, parse_spec, spec_of

_ROOT = Path(__file__).resolve().parent


@dataclass(frozen=True)
class KernelSpec:
    """What a kernel is compiled for (fa-compile's spec, without the tile)."""

    dtype: str  # "bf16" | "f16"
    head_dim: int
    value_dim: int
    mask: str = "none"  # none | causal | causal_top_left | window(L,R)
    scale: float = 0.0  # 0: 1/sqrt(D)
    softcap: float = 0.0
    alibi: str = "none"  # none | head | batch_head

    def resolved_scale(self):
        return self.scale if self.scale else self.head_dim ** -0.5

    def spec_string(self):
        """The spec's text as the runtime prints it (fa_spec_format): what
        fa-compile's --spec and the manifests say. FaMlirError, with the
        runtime's one-line reason, for a value no kernel can have."""
        return _spec_text(self)

    def runtime_spec(self):
        """The runtime's Spec (fa_spec) of this spec, Dv and the scale
        resolved."""
        return _runtime_spec(self)

    def compile_flags(self):
        flags = ["--d", str(self.head_dim), "--dv", str(self.value_dim),
                 "--dtype", self.dtype, "--mask", self.mask,
                 "--scale", repr(self.resolved_scale())]
        if self.softcap:
            flags += ["--softcap", repr(self.softcap)]
        if self.alibi != "none":
            flags += ["--alibi", self.alibi]
        return flags


def mask_of(causal, window_size, top_left=False):
    """fa-compile's mask for FlashAttention's (causal, window_size)."""
    left, right = window_size
    if causal and left < 0:
        right = -1  # causal caps the right side; an unbounded left is causal
    if left < 0 and right < 0:
        if not causal:
            return "none"
        return "causal_top_left" if top_left else "causal"
    if top_left:
        raise FaMlirError("fa_mlir: a window with top-left causal alignment is not supported")
    if causal:
        right = 0  # FlashAttention: causal caps the right side at the diagonal
    return f"window({left},{right})"


@functools.lru_cache(maxsize=None)
def _spec_text(spec):
    # Each field is read by the runtime as spec text reads that key (a mask
    # is never pasted into spec text, so "causal,d=64" is a bad mask).
    pairs = [("d", spec.head_dim), ("dv", spec.value_dim), ("dtype", spec.dtype),
             ("mask", spec.mask), ("softcap", repr(float(spec.softcap))),
             ("alibi", spec.alibi)]
    if spec.scale:
        pairs.append(("scale", repr(float(spec.scale))))
    return format_spec(spec_of(pairs))


@functools.lru_cache(maxsize=None)
def _runtime_spec(spec):
    return parse_spec(_spec_text(spec))


def _shared_memory_used(manifest):
    """The most dynamic shared memory any of the manifest's kernels takes
    (a forward's own; a backward's steps')."""
    steps = manifest.get("steps", {}).values()
    return max([manifest.get("dynamic_shared_memory", 0)]
               + [step.get("dynamic_shared_memory", 0) for step in steps])


def _budget_fits(manifest, budget_kb, exact):
    """Whether a kernel suits a device of `budget_kb` (0: any): built for
    that budget exactly, or (not `exact`) taking no more shared memory than
    the device has, whatever it was built for (the check the runtime makes
    at load: an A100-budget kernel that uses 96 KB runs on a 99 KB GPU)."""
    if not budget_kb:
        return True
    if exact:
        return manifest.get("shared_memory_budget") == budget_kb * 1024
    return _shared_memory_used(manifest) <= budget_kb * 1024


def _manifest_matches(manifest, spec, target, kind, deterministic, budget_kb=0, exact=True):
    """Whether a manifest (parsed JSON) is a kernel for `spec` (within
    `budget_kb`, _budget_fits)."""
    if manifest.get("target") != target or manifest.get("kind") != kind:
        return False
    if not _budget_fits(manifest, budget_kb, exact):
        return False
    if kind == "backward" and (bool(manifest.get("deterministic_mode")) != deterministic
                               or manifest.get("negative_control", "none") != "none"):
        return False
    try:
        found = parse_spec(manifest.get("spec", ""))
    except FaMlirError:
        return False
    want = spec.runtime_spec()
    # The scale and softcap within rounding: a caller's D ** -0.5 may differ
    # from the compiler's 1 / sqrt(D) in the last bit.
    return (found.dtype == want.dtype
            and found.head_dim == want.head_dim
            and found.value_dim == want.value_dim
            and (found.mask, found.window_left, found.window_right)
            == (want.mask, want.window_left, want.window_right)
            and abs(found.softcap - want.softcap) <= 1e-6 * max(1.0, want.softcap)
            and found.alibi == want.alibi
            and found.descale == want.descale
            and abs(found.scale - want.scale) <= 1e-7 * abs(want.scale))


def _find_compiler():
    env = os.environ.get("FA_MLIR_COMPILE")
    if env:
        return env if Path(env).is_file() else None
    found = shutil.which("fa-compile")
    if found:
        return found
    checkout = _ROOT.parent.parent / "build" / "bin" / "fa-compile"
    return str(checkout) if checkout.is_file() else None


def _shipped_dirs():
    dirs = [_ROOT / "kernels", _ROOT.parent.parent / "kernels_generated"]
    for extra in os.environ.get("FA_MLIR_KERNEL_PATH", "").split(os.pathsep):
        if extra:
            dirs.insert(0, Path(extra))
    return [d for d in dirs if d.is_dir()]


class KernelStore:
    """Finds (or compiles) the manifest of the kernel a call needs."""

    def __init__(self, target, cache_dir=None, compiler="auto", shipped_dirs=None,
                 shared_memory_budget_kb=0):
        self.target = target
        # KB of shared memory per block the device allows (0: the chip's
        # default, and any kernel's budget matches).
        self.budget_kb = shared_memory_budget_kb
        default_cache = Path(os.environ.get("FA_MLIR_CACHE_DIR",
                                            Path.home() / ".cache" / "fa-mlir"))
        self.cache_dir = Path(cache_dir) if cache_dir else default_cache
        self.compiler = _find_compiler() if compiler == "auto" else compiler
        self.shipped = _shipped_dirs() if shipped_dirs is None else [Path(d) for d in shipped_dirs]
        self._resolved = {}
        self._generator = None
        self.compiles = 0  # fa-compile runs by this store (tests read it)

    def generator(self):
        """The compiler's revision (the cache's first level), or None."""
        if self._generator is None and self.compiler:
            out = subprocess.run([self.compiler, "--version"], capture_output=True, text=True)
            words = out.stdout.replace(")", " ").split()
            self._generator = next((w for w in words if w.startswith("src-")), "unknown")
        return self._generator

    def _key(self, spec, kind, deterministic):
        text = f"{self.target}|{spec.spec_string()}|{kind}|{int(deterministic)}"
        if self.budget_kb:
            text += f"|smem={self.budget_kb}"
        return hashlib.sha256(text.encode()).hexdigest()[:20]

    def manifest(self, spec, backward=False, deterministic=False):
        """The manifest path of the forward (or backward) kernel of `spec`."""
        kind = "backward" if backward else "forward"
        memo = (spec, kind, deterministic)
        if memo not in self._resolved:
            self._resolved[memo] = self._locate(spec, kind, deterministic)
        return self._resolved[memo]

    def _locate(self, spec, kind, deterministic):
        key = self._key(spec, kind, deterministic)
        generator = self.generator()
        # 1. The cache: this compiler's entry, or (no compiler) any entry.
        levels = [self.cache_dir / generator] if generator else sorted(
            self.cache_dir.glob("*"), key=lambda p: p.stat().st_mtime, reverse=True)
        for level in levels:
            found = self._scan(level / key, spec, kind, deterministic)
            if found:
                return found
        # 2. Shipped kernels and FA_MLIR_KERNEL_PATH.
        for directory in self.shipped:
            found = self._scan(directory, spec, kind, deterministic)
            if found:
                return found
        # 3. fa-compile into the cache.
        if self.compiler:
            return self._compile(spec, kind, deterministic, self.cache_dir / generator / key)
        # Without a compiler, a shipped kernel that fits the device.
        for directory in self.shipped:
            found = self._scan(directory, spec, kind, deterministic, exact=False)
            if found:
                return found
        flags = " ".join(spec.compile_flags() + self._budget_flags())
        extra = " --bwd" + (" --deterministic" if deterministic else "") if kind == "backward" else ""
        raise FaMlirError(
            f"fa_mlir: no {kind} kernel for {spec.spec_string()} on {self.target}: not in "
            f"{self.cache_dir}, not shipped, and fa-compile is not installed; generate it "
            f"with `fa-compile --target {self.target} {flags}{extra} -o DIR` and set "
            f"FA_MLIR_KERNEL_PATH=DIR")

    def _budget_flags(self):
        return ["--shared-memory-budget", str(self.budget_kb)] if self.budget_kb else []

    def _scan(self, directory, spec, kind, deterministic, exact=True):
        if not directory.is_dir():
            return None
        for path in sorted(directory.glob("*.json")):
            try:
                manifest = json.loads(path.read_text())
            except (OSError, ValueError):
                continue
            if _manifest_matches(manifest, spec, self.target, kind, deterministic,
                                 self.budget_kb, exact):
                return path
        return None

    def _compile(self, spec, kind, deterministic, directory):
        directory.mkdir(parents=True, exist_ok=True)
        command = [self.compiler, "--target", self.target, *spec.compile_flags(),
                   *self._budget_flags(), "--name", "kernel", "-o", str(directory)]
        if kind == "backward":
            command.append("--bwd")
            if deterministic:
                command.append("--deterministic")
        out = subprocess.run(command, capture_output=True, text=True)
        self.compiles += 1
        if out.returncode != 0:
            reason = (out.stderr or out.stdout).strip().splitlines()
            raise FaMlirError("fa_mlir: " + (reason[-1] if reason else f"fa-compile exited {out.returncode}"))
        name = "kernel_bwd" if kind == "backward" else "kernel"
        if deterministic:
            name += "_det"
        path = directory / f"{name}.json"
        if not path.is_file():
            candidates = sorted(directory.glob("*.json"))
            raise FaMlirError(f"fa_mlir: fa-compile wrote {[p.name for p in candidates]}, not {path.name}")
        return path
