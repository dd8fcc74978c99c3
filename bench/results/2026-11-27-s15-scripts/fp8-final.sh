# fifteenth session, last call: every fp8 kernel verified at HEAD (verify-fp8.sh steps 2, 3),
# then D128 (none and causal, both 128 x 224 now) beside bf16 at N 4k / 8k / 16k.
set -o pipefail; export PYTHONUNBUFFERED=1
FA_FP8_SAN_KERNELS="d128_causal|d96|dv64|win" OUT=$OUT bash bench/verify-fp8.sh --steps 23 2>&1 | grep -v "^  verify: ok"
FA_FP8_BENCH_D=128 bash bench/verify-fp8.sh --steps 4 2>&1 | grep -v "^== 2\|^== 3"
