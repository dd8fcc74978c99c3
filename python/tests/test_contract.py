"""The package's spec text and call checks are libfa_runtime's (fa_spec.h):
KernelSpec's text is the runtime's printing, manifests are read by its
parser, and flash_attn_func's refusals are its checks, each one line. Runs
without a GPU; the PyTorch part skips without PyTorch.

Environment: FA_MLIR_RUNTIME_LIB (libfa_runtime.so) as the checkout's build
provides it; skipped with the reason where there is none.
"""

import ctypes
import unittest

from fa_mlir import FaMlirError, KernelSpec
from fa_mlir import _runtime
from fa_mlir._runtime import (TensorDesc, check_backward_spec, check_forward, format_spec,
                              parse_spec, spec_of)

try:
    _runtime.find_library()
    _REASON = None
except FaMlirError as error:
    _REASON = str(error)

try:
    import torch
except ImportError:
    torch = None


@unittest.skipIf(_REASON, _REASON)
class SpecTextTest(unittest.TestCase):
    def test_kernel_spec_text_is_the_runtimes(self):
        spec = KernelSpec("bf16", 128, 128, "causal")
        self.assertEqual(spec.spec_string(),
                         "d=128,dv=128,dtype=bf16,mask=causal,scale=0.08838834764831843")
        window = KernelSpec("f16", 64, 32, "window(256,0)", scale=0.1, softcap=30.0,
                            alibi="head")
        self.assertEqual(window.spec_string(), "d=64,dv=32,dtype=f16,mask=window(256,0),"
                                               "softcap=30,alibi=head,scale=0.1")
        parsed = parse_spec(window.spec_string())
        self.assertEqual((parsed.head_dim, parsed.value_dim, parsed.window_left,
                          parsed.window_right, parsed.scale, parsed.softcap),
                         (64, 32, 256, 0, 0.1, 30.0))
        self.assertEqual(format_spec(parsed), window.spec_string())

    def test_a_bad_kernel_spec_is_one_line(self):
        for spec, message in (
                (KernelSpec("bf16", 64, 64, "diagonal"),
                 "bad value 'diagonal' for spec key 'mask'"),
                (KernelSpec("bf16", 64, 64, "causal,d=128"),
                 "bad value 'causal,d=128' for spec key 'mask'"),
                (KernelSpec("f32", 64, 64), "bad value 'f32' for spec key 'dtype'"),
                (KernelSpec("bf16", 64, 64, scale=1e30), "scale 1e+30 is out of range"),
                (KernelSpec("bf16", 64, 64, alibi="row"), "(expected none, head or batch_head)")):
            with self.subTest(spec=spec), self.assertRaises(FaMlirError) as caught:
                spec.spec_string()
            self.assertIn(message, str(caught.exception))
            self.assertTrue(str(caught.exception).startswith("fa_mlir: "))
            self.assertNotIn("\n", str(caught.exception))

    def test_the_backwards_range(self):
        # The forward's range is wider: the backward recomputes P from the
        # f32 LSE (docs/dialect.md).
        check_backward_spec(spec_of([("d", 64), ("scale", 100)]))
        check_backward_spec(spec_of([("d", 64)]))
        wide = spec_of([("d", 64), ("scale", 1000)])
        format_spec(wide)  # a forward's spec
        with self.assertRaisesRegex(FaMlirError, r"^fa_mlir: scale 1000 is out of range for the "
                                                 r"backward \(\|scale\| <= 100: [^\n]*\)$"):
            check_backward_spec(wide)

    def test_the_backwards_range_is_remembered_per_d_and_scale(self):
        # What a call recording gradients asks before each forward: the
        # runtime's answer, asked once per accepted (D, scale).
        _runtime._backward_range_accepted.cache_clear()
        for _ in range(3):
            _runtime.check_backward_range(64, 0.125)
        info = _runtime._backward_range_accepted.cache_info()
        self.assertEqual((info.misses, info.hits), (1, 2))
        _runtime.check_backward_range(128, 0.125)
        self.assertEqual(_runtime._backward_range_accepted.cache_info().misses, 2)
        # A refusal is asked again each time: the same one line, every call.
        for _ in range(2):
            with self.assertRaisesRegex(FaMlirError, r"^fa_mlir: scale 1000 is out of range for "
                                                     r"the backward \(\|scale\| <= 100: [^\n]*\)$"):
                _runtime.check_backward_range(64, 1000.0)
        with self.assertRaisesRegex(FaMlirError, r"^fa_mlir: "):
            _runtime.check_backward_range(0, 0.125)

    def test_round_trip_and_refusals(self):
        spec = spec_of([("d", 128), ("mask", "window(64,-1)"), ("block_n", 32)])
        self.assertEqual((spec.value_dim, spec.scale, spec.block_m, spec.block_n), (0, 0.0, 0, 32))
        text = format_spec(spec)
        self.assertEqual(text, "d=128,dv=128,dtype=bf16,mask=window(64,-1),"
                               "scale=0.08838834764831843,block_n=32")
        self.assertEqual(format_spec(parse_spec(text)), text)
        with self.assertRaisesRegex(FaMlirError, r"^fa_mlir: spec key 'd' is given twice$"):
            parse_spec("d=64,d=128")
        with self.assertRaisesRegex(FaMlirError, r"unknown spec key 'depth'"):
            spec_of([("depth", 3)])


@unittest.skipIf(_REASON, _REASON)
class CheckTest(unittest.TestCase):
    """check_forward on hand-made descriptions (device 0 without a GPU)."""

    @staticmethod
    def desc(shape, dtype=_runtime.DTYPE_BF16, device=0, dtype_name=None):
        array = (ctypes.c_int64 * len(shape))(*shape)
        d = TensorDesc(ctypes.cast(array, ctypes.POINTER(ctypes.c_int64)), len(shape), dtype,
                       device, dtype_name, None)
        d.keep = array
        return d

    def test_forward(self):
        q, k, v = self.desc((2, 100, 8, 64)), self.desc((2, 150, 2, 64)), self.desc((2, 150, 2, 64))
        check_forward(_runtime.LAYOUT_BSHD, q, k, v)
        check_forward(_runtime.LAYOUT_BSHD, q, k, v, self.desc((8,), _runtime.DTYPE_F32))
        with self.assertRaisesRegex(FaMlirError, r"^fa_mlir: query heads \(3\) must be a "
                                                 r"multiple of key/value heads \(2\)$"):
            check_forward(_runtime.LAYOUT_BSHD, self.desc((2, 100, 3, 64)), k, v)
        with self.assertRaisesRegex(FaMlirError, r"^fa_mlir: alibi_slopes must be float32 "
                                                 r"\[8\] or \[2, 8\], got torch.float16 \[8\]$"):
            check_forward(_runtime.LAYOUT_BSHD, q, k, v,
                          self.desc((8,), _runtime.DTYPE_F16, dtype_name=b"torch.float16"))


@unittest.skipIf(_REASON, _REASON)
@unittest.skipIf(torch is None, "PyTorch is not installed")
class TorchChecksTest(unittest.TestCase):
    """The runtime's checks on PyTorch tensors, in PyTorch's words (any
    PyTorch; no GPU: CPU and meta tensors, or descriptions moved to
    cuda:0)."""

    def test_refusals_before_the_gpu(self):
        from fa_mlir._checks import check_forward_tensors
        q = torch.zeros(1, 16, 2, 64, dtype=torch.bfloat16)
        cases = [
            ((q, q, q, None), r"^fa_mlir: q is on cpu; fa-mlir runs on CUDA devices$"),
            ((q[0], q, q, None), r"^fa_mlir: q must be \[batch, seqlen, heads, head_dim\], "
                                 r"got \[16, 2, 64\]$"),
            ((q.to("meta"), q, q, None), r"^fa_mlir: q is on meta; fa-mlir runs on CUDA devices$"),
        ]
        for args, message in cases:
            with self.subTest(message=message):
                with self.assertRaisesRegex(FaMlirError, message):
                    check_forward_tensors(*args)

    def test_described_in_pytorchs_words(self):
        from fa_mlir._checks import describe
        q = torch.zeros(1, 16, 2, 64, dtype=torch.float32)
        descs = [describe(t) for t in (q, q, q)]
        for d in descs:
            d.device = 0  # as if on the GPU: the checks past the device
        with self.assertRaisesRegex(FaMlirError, r"^fa_mlir: q, k, v must all be bfloat16 or "
                                                 r"float16, got torch.float32, torch.float32, "
                                                 r"torch.float32$"):
            check_forward(_runtime.LAYOUT_BSHD, *descs)
        k = describe(torch.zeros(1, 16, 2, 64, dtype=torch.bfloat16))
        self.assertEqual(list(k.shape[:k.rank]), [1, 16, 2, 64])
        self.assertEqual((k.dtype, k.device, k.dtype_name), (_runtime.DTYPE_BF16, -1, b"torch.bfloat16"))
        self.assertEqual(k.device_name, b"cpu")
        good = [describe(torch.zeros(1, 16, 2, 64, dtype=torch.bfloat16)) for _ in range(3)]
        for d in good:
            d.device = 0
        check_forward(_runtime.LAYOUT_BSHD, *good)

    @unittest.skipUnless(hasattr(torch, "library") and hasattr(torch.library, "custom_op"),
                         "flash_attn_func needs torch.library.custom_op (PyTorch 2.4 or later)")
    def test_flash_attn_func_refuses_in_one_line(self):
        from fa_mlir import flash_attn_func
        q = torch.zeros(1, 16, 2, 64, dtype=torch.bfloat16)
        with self.assertRaisesRegex(FaMlirError, r"^fa_mlir: q is on cpu; fa-mlir runs on CUDA devices$"):
            flash_attn_func(q, q, q)

    @unittest.skipUnless(hasattr(torch, "library") and hasattr(torch.library, "custom_op"),
                         "flash_attn_func needs torch.library.custom_op (PyTorch 2.4 or later)")
    def test_a_call_that_records_gradients_checks_the_backwards_range(self):
        from fa_mlir._ops import _check_differentiable
        q = torch.zeros(1, 16, 2, 64, dtype=torch.bfloat16)
        _check_differentiable(q, 0.125)
        with self.assertRaisesRegex(FaMlirError, r"^fa_mlir: scale 1000 is out of range for the backward"):
            _check_differentiable(q, 1000.0)


if __name__ == "__main__":
    unittest.main()
