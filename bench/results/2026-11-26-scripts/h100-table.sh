# Call 5 (2026-11-26): the same sm_90a forward table on an H100 (calls 1-4
# got an H200), and main's D256 backward against the ring's there.
# Device: run(kind="nvidia-h100-x1", command="bash bench/results/2026-11-26-scripts/h100-table.sh 2>&1 | tee $OUT/log",
#             carry=["bench/backward-kernels", "scratch"])
set -o pipefail; export PYTHONUNBUFFERED=1
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DFA_ENABLE_COMPILER=OFF -DFA_ENABLE_TESTS=OFF >/dev/null && ninja -C build-gpu >/dev/null || exit 1
timeout 150 bash bench/run.sh --steps 4 --chip sm90a --quick 2>&1 | grep -v "^== 1"
for m in none causal; do
  timeout 60 python3 bench/bwd_variants.py build-gpu/runtime/libfa_runtime.so kernels_generated/fa_fwd_sm90a_bf16_d256_$m.json \
    main=scratch/main-d256/fa_bwd_sm90a_bf16_d256_$m.json ring=kernels_generated/fa_bwd_sm90a_bf16_d256_$m.json 2>&1 | grep -v relative
done
