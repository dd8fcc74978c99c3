# Call 9 (2026-11-26b): is the deterministic D256 causal backward slower
# than last session's? main's (f5acd66, scratch/detOld) and this session's
# (368a500, scratch/detA) deterministic and default kernels, timed as
# 2026-11-26-scripts/paired.sh timed them (fa-run --bench --iters 20, one
# kernel per process), alternating, two rounds.
# Device: run(kind="nvidia-h100-x1", command="bash bench/results/2026-11-26b-scripts/det-regress.sh 2>&1 | tee $OUT/log",
#             carry=["scratch/detA", "scratch/detOld"])
set -o pipefail
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DFA_ENABLE_COMPILER=OFF -DFA_ENABLE_TESTS=OFF >/dev/null && ninja -C build-gpu >/dev/null || exit 1
F=build-gpu/bin/fa-run
for r in 1 2; do for d in detOld detA; do for kk in fa_bwd_sm90a_bf16_d256_causal fa_bwd_sm90a_bf16_d256_causal_det; do
  echo "  r$r $d $kk: $(timeout 100 $F --device cuda --kernel scratch/$d/fa_fwd_sm90a_bf16_d256_causal.json --bwd-kernel scratch/$d/$kk.json --bwd $([[ $kk == *_det ]] && echo --deterministic) --bench --iters 20 --b 4 --hq 16 --hkv 16 --m 4096 --n 4096 2>&1 | grep -E 'bench' | tr '\n' ' ' | cut -c1-260)"
done; done; done
