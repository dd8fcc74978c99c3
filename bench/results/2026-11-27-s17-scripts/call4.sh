# Seventeenth session, call 4 (device): the sm_90a D256 backward, base
# (HEAD's PTX) against the unmasked Q blocks in a loop of their own, and
# the deterministic kernels, forward + backward B4 H16 N4k, three rounds.
#   run(carry=["scratch/s17"], command="bash bench/results/2026-11-27-s17-scripts/call4.sh 2>&1 | tee $OUT/log")
set -o pipefail; export PYTHONUNBUFFERED=1; W=scratch/s17/bwd
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DFA_ENABLE_COMPILER=OFF -DFA_ENABLE_TESTS=OFF >/dev/null && ninja -C build-gpu >/dev/null || exit 1
L=build-gpu/runtime/libfa_runtime.so; start=$SECONDS
for round in 1 2 3; do
  k=sm90a_bf16_d256_none
  python3 bench/bwd_variants.py $L $W/base/fa_fwd_$k.json base=$W/base/fa_bwd_$k.json new=$W/new/fa_bwd_$k.json --b 4 --h 16 --n 4096 2>&1 | grep '^|' | grep -v -- '---' | sed "s/^/$round $k /"
  k=sm90a_bf16_d256_causal
  python3 bench/bwd_variants.py $L $W/base/fa_fwd_$k.json base=$W/base/fa_bwd_$k.json new=$W/new/fa_bwd_$k.json base@det=$W/base/fa_bwd_${k}_det.json new@det=$W/new/fa_bwd_${k}_det.json --b 4 --h 16 --n 4096 2>&1 | grep '^|' | grep -v -- '---' | sed "s/^/$round $k /"
  echo "   ($((SECONDS - start)) s)"
done
