# Twenty-second session, call 6: every fp8 kernel after the TMA-store
# epilogue (kernels_generated at D128 / D256 and the feature kernels of
# bench/fp8-kernels, which now take o_tmap too) verified at the issue's
# sizes with the negative control; sanitizers on the feature kernels new to
# the path (Dv 112, D96 top-left causal); then the non-causal table beside
# FA3 and the bf16 kernel (one round).
export PYTHONUNBUFFERED=1
bash bench/verify-fp8.sh --steps 2 2>&1 | grep -vE "^\s*$"
FA_FP8_SAN_KERNELS="dv112|d96" FA_FP8_SAN_SIZES="--b_2_--hq_4_--hkv_2_--m_77_--n_131_--layout_bshd" \
  bash bench/verify-fp8.sh --steps 3 2>&1 | grep -E "memcheck|racecheck|synccheck|FAILED|GMMA"
FA_FP8_BENCH_N=8192 FA_FP8_BENCH_MASKS=none FA3_BENCH=scratch/fa3/fa3_bench bash bench/verify-fp8.sh --steps 4 2>&1 | grep -E "TFLOP|== 4"
