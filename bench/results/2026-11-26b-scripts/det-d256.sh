# Call 8 (2026-11-26b): the deterministic D256 backward (one Q stage)
# with the producer issuing dO_(i+1) before Q_(i+1) (scratch/detB) against
# the committed order (scratch/detA): verify (bit-identical over 10 runs),
# sanitize, then fa-run --deterministic --bench (the default kernel and
# the deterministic one timed in the same process), two rounds each.
# Device: run(kind="nvidia-h100-x1", command="bash bench/results/2026-11-26b-scripts/det-d256.sh 2>&1 | tee $OUT/log",
#             carry=["scratch/detA", "scratch/detB"])
set -o pipefail; export PYTHONUNBUFFERED=1
echo "== $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader), $(date -u +%Y-%m-%dT%H:%MZ)"
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DFA_ENABLE_COMPILER=OFF -DFA_ENABLE_TESTS=OFF >/dev/null && ninja -C build-gpu >/dev/null || exit 1
F=build-gpu/bin/fa-run; B=scratch/detB; A=scratch/detA; start=$SECONDS
for m in causal none; do for a in "--b 2 --hq 8 --hkv 2 --m 1023 --n 1024 --layout bshd" "--b 2 --hq 4 --hkv 4 --m 113 --n 203" "--b 1 --hq 4 --hkv 2 --m 640 --n 200 --layout bshd" "--b 1 --hq 2 --hkv 2 --m 300 --n 300" "--b 1 --hq 1 --hkv 1 --m 1 --n 1"; do
  ( out=$(timeout 150 $F --device cuda --kernel $B/fa_fwd_sm90a_bf16_d256_$m.json --bwd-kernel $B/fa_bwd_sm90a_bf16_d256_${m}_det.json --bwd --deterministic --verify $a 2>&1); rc=$?
    echo "  $m ($a): rc=$rc $(echo "$out" | grep -E '^deterministic|verdict' | tr '\n' ' ')" ) &
done; done; wait
for tool in memcheck racecheck synccheck; do
  timeout 200 compute-sanitizer --tool $tool --error-exitcode 9 $F --device cuda --kernel $B/fa_fwd_sm90a_bf16_d256_causal.json --bwd-kernel $B/fa_bwd_sm90a_bf16_d256_causal_det.json --bwd --deterministic --b 1 --hq 2 --hkv 1 --m 77 --n 131 --verify > /tmp/san.log 2>&1
  rc=$?; echo "  $tool causal det: rc=$rc $(grep -h 'ERROR SUMMARY' /tmp/san.log | head -1)"; done
echo "   ($((SECONDS - start)) s)"
echo "== backward default vs deterministic, B4 H16 N4k (committed order A, dO first B)"
for r in 1 2; do for m in causal none; do for v in A B; do d=scratch/det$v
  echo "  $m $v round $r: $(timeout 90 $F --device cuda --kernel $d/fa_fwd_sm90a_bf16_d256_$m.json --bwd-kernel $d/fa_bwd_sm90a_bf16_d256_${m}_det.json --bwd --deterministic --bench --iters 10 --b 4 --hq 16 --hkv 16 --m 4096 --n 4096 2>&1 | grep -E 'bench: backward default' | tr '\n' ' ')"
done; done; done
echo "   ($((SECONDS - start)) s)"
