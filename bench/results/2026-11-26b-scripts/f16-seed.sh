# Call 5 (2026-11-26b): is call 3's one backward failure (sm_80 f16 D64
# causal, 4096^2 GQA bshd, seed 120: dV 2.695e-3 against a bound of
# 2.612e-3) main's too? main's pair (scratch/oldf16, built at f5acd66)
# and the session's, at seed 120 and seeds 121-128, side by side.
# Device: run(kind="nvidia-h100-x1", command="bash bench/results/2026-11-26b-scripts/f16-seed.sh 2>&1 | tee $OUT/log",
#             carry=["bench/backward-kernels", "scratch/oldf16"])
set -o pipefail
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DFA_ENABLE_COMPILER=OFF -DFA_ENABLE_TESTS=OFF >/dev/null && ninja -C build-gpu >/dev/null || exit 1
F=build-gpu/bin/fa-run
for seed in 120 121 122 123 124 125 126 127 128; do
  for v in scratch/oldf16 bench/backward-kernels; do
    ( out=$(timeout 200 $F --device cuda --kernel $v/fa_fwd_sm80_f16_d64_causal.json --bwd --b 1 --hq 2 --hkv 1 --layout bshd --m 4096 --n 4096 --seed $seed --verify 2>&1)
      echo "seed $seed $v: $(echo "$out" | grep -E '^  dV' | cut -c1-120) $(echo "$out" | grep verdict | tail -1)" ) &
  done
done; wait
