"""fa_mlir's kernel selection and runtime loading, without PyTorch or a GPU
(CI runs these; python/tests/test_torch.py needs both).

Environment: FA_MLIR_COMPILE (fa-compile) and FA_MLIR_RUNTIME_LIB
(libfa_runtime.so) as the checkout's build provides them; tests that need
one skip with the reason when it is absent.
"""

import json
import os
import tempfile
import unittest
from pathlib import Path

from fa_mlir import FaMlirError, KernelSpec, KernelStore, NoGpuError, Runtime
from fa_mlir._kernels import _find_compiler, mask_of

ROOT = Path(__file__).resolve().parents[2]
SHIPPED = ROOT / "kernels_generated"
COMPILER = _find_compiler()


class MaskTest(unittest.TestCase):
    def test_flash_attention_masks(self):
        self.assertEqual(mask_of(False, (-1, -1)), "none")
        self.assertEqual(mask_of(True, (-1, -1)), "causal")
        self.assertEqual(mask_of(True, (-1, -1), top_left=True), "causal_top_left")
        # FlashAttention: causal caps a window's right side at the diagonal.
        self.assertEqual(mask_of(True, (128, -1)), "window(128,0)")
        self.assertEqual(mask_of(False, (64, 32)), "window(64,32)")
        self.assertEqual(mask_of(False, (-1, 16)), "window(-1,16)")
        self.assertEqual(mask_of(True, (-1, 16)), "causal")
        with self.assertRaises(FaMlirError):
            mask_of(True, (8, 8), top_left=True)


class ShippedTest(unittest.TestCase):
    def test_standard_kernels_are_found_by_their_spec(self):
        store = KernelStore("sm_90a", cache_dir=tempfile.mkdtemp(), compiler=None,
                            shipped_dirs=[SHIPPED])
        spec = KernelSpec("bf16", 128, 128, "causal")
        self.assertEqual(store.manifest(spec).name, "fa_fwd_sm90a_bf16_d128_causal.json")
        self.assertEqual(store.manifest(spec, backward=True).name,
                         "fa_bwd_sm90a_bf16_d128_causal.json")
        window = KernelSpec("bf16", 128, 128, "window(256,0)")
        self.assertEqual(KernelStore("sm_80", compiler=None, shipped_dirs=[SHIPPED],
                                     cache_dir=tempfile.mkdtemp()).manifest(window).name,
                         "fa_fwd_sm80_bf16_d128_win256_0.json")
        self.assertEqual(KernelStore("sm_80", compiler=None, shipped_dirs=[SHIPPED],
                                     cache_dir=tempfile.mkdtemp())
                         .manifest(KernelSpec("f16", 64, 64)).name,
                         "fa_fwd_sm80_f16_d64_none.json")

    def test_the_device_budget_picks_kernels_built_for_it(self):
        spec = KernelSpec("bf16", 128, 128, "causal")
        def store(target, kb):
            return KernelStore(target, cache_dir=tempfile.mkdtemp(), compiler=None,
                               shipped_dirs=[SHIPPED], shared_memory_budget_kb=kb)
        # The standard set is built for each chip's default: an A100's 163 KB
        # on sm_80, an H100's 227 on sm_90a.
        for target, kb in (("sm_80", 163), ("sm_90a", 227)):
            path = store(target, kb).manifest(spec, backward=True)
            self.assertEqual(json.loads(path.read_text())["shared_memory_budget"], kb * 1024)
        # Without a compiler, any shipped kernel the device holds: a larger
        # device's, and a 99 KB one's where the kernel uses no more (the D128
        # forward's 96 KB) ...
        self.assertEqual(store("sm_80", 227).manifest(spec).name,
                         "fa_fwd_sm80_bf16_d128_causal.json")
        self.assertEqual(store("sm_80", 99).manifest(spec).name,
                         "fa_fwd_sm80_bf16_d128_causal.json")
        # ... but not one past it (the D128 backward's 160 KB): the refusal
        # says how to build one.
        with self.assertRaises(FaMlirError) as caught:
            store("sm_80", 99).manifest(spec, backward=True)
        self.assertIn("--shared-memory-budget 99", str(caught.exception))

    def test_a_spec_that_differs_in_one_field_is_not_matched(self):
        store = KernelStore("sm_90a", cache_dir=tempfile.mkdtemp(), compiler=None,
                            shipped_dirs=[SHIPPED])
        for spec in (KernelSpec("bf16", 128, 128, "causal", scale=0.1),
                     KernelSpec("bf16", 128, 128, "causal", softcap=30.0),
                     KernelSpec("bf16", 128, 64, "causal"),
                     KernelSpec("bf16", 128, 128, "causal_top_left")):
            with self.subTest(spec=spec), self.assertRaises(FaMlirError) as caught:
                store.manifest(spec)
            # The refusal names the spec and the command that generates it.
            self.assertIn(spec.spec_string(), str(caught.exception))
            self.assertIn("fa-compile --target sm_90a --d 128", str(caught.exception))
        # No deterministic backward is shipped.
        with self.assertRaises(FaMlirError):
            store.manifest(KernelSpec("bf16", 128, 128, "causal"), backward=True,
                           deterministic=True)


@unittest.skipUnless(COMPILER, "fa-compile is not built (FA_MLIR_COMPILE, PATH, build/bin)")
class CompileAndCacheTest(unittest.TestCase):
    def test_compiled_once_then_cached(self):
        cache = tempfile.mkdtemp()
        spec = KernelSpec("bf16", 64, 64, "window(32,0)", softcap=20.0, alibi="head")
        store = KernelStore("sm_90a", cache_dir=cache, shipped_dirs=[])
        path = store.manifest(spec)
        self.assertEqual(store.compiles, 1)
        manifest = json.loads(path.read_text())
        self.assertEqual(manifest["target"], "sm_90a")
        self.assertIn("softcap=20", manifest["spec"])
        # Under <cache>/<generator>/<key>/.
        self.assertEqual(path.parent.parent, Path(cache) / store.generator())
        self.assertEqual(store.manifest(spec), path)  # once per process
        self.assertEqual(store.compiles, 1)
        # A new process (store) finds it in the cache, even without a compiler.
        again = KernelStore("sm_90a", cache_dir=cache, compiler=None, shipped_dirs=[])
        self.assertEqual(again.manifest(spec), path)

    def test_backward_and_deterministic(self):
        store = KernelStore("sm_90a", cache_dir=tempfile.mkdtemp(), shipped_dirs=[])
        spec = KernelSpec("f16", 64, 64, "causal")
        plain = json.loads(store.manifest(spec, backward=True).read_text())
        det = json.loads(store.manifest(spec, backward=True, deterministic=True).read_text())
        self.assertEqual((plain["kind"], plain["deterministic_mode"]), ("backward", False))
        self.assertEqual((det["kind"], det["deterministic_mode"]), ("backward", True))
        self.assertEqual(store.compiles, 2)

    def test_compiled_within_the_device_budget(self):
        # An H100 running sm_80 code holds FA2's 64 x 64 D256 backward (208
        # KB); the chip's default, an A100's 163 KB, does not. The shipped
        # kernel (163 KB) does not serve a 227 KB device while a compiler is
        # there; each budget is its own cache entry.
        cache = tempfile.mkdtemp()
        spec = KernelSpec("bf16", 256, 256)
        tiles = {}
        for kb in (0, 227):
            store = KernelStore("sm_80", cache_dir=cache, shipped_dirs=[SHIPPED],
                                shared_memory_budget_kb=kb)
            manifest = json.loads(store.manifest(spec, backward=True).read_text())
            tiles[kb] = (manifest["tile"]["block_m"], manifest["shared_memory_budget"])
        self.assertEqual(tiles, {0: (32, 163 * 1024), 227: (64, 227 * 1024)})
        # 99 KB (an RTX 3090) cannot hold the D256 forward: one line, from fa-compile.
        small = KernelStore("sm_80", cache_dir=cache, shipped_dirs=[],
                            shared_memory_budget_kb=99)
        with self.assertRaises(FaMlirError) as caught:
            small.manifest(spec)
        self.assertIn("more than the budget's 101376 bytes", str(caught.exception))

    def test_what_fa_compile_refuses_is_one_line(self):
        store = KernelStore("sm_90a", cache_dir=tempfile.mkdtemp(), shipped_dirs=[])
        with self.assertRaises(FaMlirError) as caught:
            store.manifest(KernelSpec("bf16", 20, 20))
        message = str(caught.exception)
        self.assertTrue(message.startswith("fa_mlir: fa-compile: "), message)
        self.assertNotIn("\n", message)


def _runtime_or_skip():
    try:
        return Runtime()
    except FaMlirError as error:
        raise unittest.SkipTest(str(error))


class RuntimeTest(unittest.TestCase):
    def test_loading_reports_the_reason(self):
        runtime = _runtime_or_skip()
        with self.assertRaises(FaMlirError) as caught:
            runtime.forward_kernel(ROOT / "no-such-kernel.json")
        self.assertIn("no-such-kernel.json", str(caught.exception))

    def test_no_gpu_is_its_own_error(self):
        runtime = _runtime_or_skip()
        if os.path.exists("/dev/nvidia0"):
            self.skipTest("a GPU is present")
        with self.assertRaises(NoGpuError):
            runtime.forward_kernel(SHIPPED / "fa_fwd_sm80_bf16_d64_none.json")


if __name__ == "__main__":
    unittest.main()
