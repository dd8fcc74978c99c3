# Call 6 (2026-11-26b): the backward's scale out of the loop: S held as
# q·k (the scale folds into the exponent's FFMA) and dK's and dQ's α
# applied once (dK_j before its store, dQ in the postprocess) instead of
# to every dS. Verify every backward pair of both chips, negative
# controls, deterministic bit-identity, sanitizers; then time main's
# (f5acd66, scratch/old*), the previous commit's (b210520, scratch/prev)
# and the new backward in the same rounds.
# Here, before: bash bench/make-backward-kernels.sh
# Device: run(kind="nvidia-h100-x1", command="bash bench/results/2026-11-26b-scripts/bwd-scale.sh 2>&1 | tee $OUT/log",
#             carry=["bench/backward-kernels", "scratch/old", "scratch/old90", "scratch/prev"])
set -o pipefail; export PYTHONUNBUFFERED=1
echo "== $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader), $(date -u +%Y-%m-%dT%H:%MZ)"
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DFA_ENABLE_COMPILER=OFF -DFA_ENABLE_TESTS=OFF >/dev/null && ninja -C build-gpu >/dev/null || exit 1
F=build-gpu/bin/fa-run; L=build-gpu/runtime/libfa_runtime.so; start=$SECONDS
sizes() { for s in 1x1 113x203 128x217 1023x1024 4096x4096; do m=${s%x*}; n=${s#*x}
  if [ "$m" = 4096 ]; then echo "--b 1 --hq 1 --hkv 1 --layout bhsd --m $m --n $n"; echo "--b 1 --hq 2 --hkv 1 --layout bshd --m $m --n $n"
  else echo "--b 2 --hq 4 --hkv 4 --layout bhsd --m $m --n $n"; echo "--b 2 --hq 8 --hkv 2 --layout bshd --m $m --n $n"; fi; done; }
echo "== backward pairs (bench/backward-kernels), both chips (the seeds of call 3)"
for k in bench/backward-kernels/fa_fwd_*.json; do
  sizes | sed "s|^|--kernel $k --bwd |"; done | FA_PARALLEL=15 timeout 280 bash bench/verify-parallel.sh $F "backward verify"
echo "   ($((SECONDS - start)) s)"
for neg in bench/backward-kernels/negative*/fa_bwd_*.json; do
  $F --device cuda --kernel bench/backward-kernels/$(basename ${neg/fa_bwd_/fa_fwd_}) --bwd-kernel $neg --negative-control no-row-dot --bwd --b 2 --hq 4 --hkv 2 --m 113 --n 203 --verify > /tmp/neg.log 2>&1
  rc=$?; echo "negative control $neg: exit $rc (1 = caught)"; done
for k in sm80_bf16_d128_causal sm80_bf16_d64_none sm90a_bf16_d128_none sm90a_bf16_d64_causal; do
  det=bench/backward-kernels/fa_bwd_${k}_det.json
  out=$(timeout 100 $F --device cuda --kernel bench/backward-kernels/fa_fwd_$k.json --bwd-kernel $det --bwd --deterministic --verify --b 2 --hq 8 --hkv 2 --m 1023 --n 1024 --layout bshd 2>&1); rc=$?
  echo "  deterministic $k: rc=$rc $(echo "$out" | grep -E '^deterministic|verdict' | tr '\n' ' ')"; done
for k in sm80_bf16_d128_causal sm80_bf16_d64_causal_alibi sm90a_bf16_d128_causal sm90a_bf16_d256_none; do for tool in memcheck racecheck; do
  ( timeout 200 compute-sanitizer --tool $tool --error-exitcode 9 $F --device cuda --kernel bench/backward-kernels/fa_fwd_$k.json --bwd --b 1 --hq 2 --hkv 1 --m 77 --n 131 --verify > /tmp/san-$tool-$k.log 2>&1
    rc=$?; echo "  $tool $k fwd+bwd: rc=$rc $(grep -h 'ERROR SUMMARY' /tmp/san-$tool-$k.log | head -1)" ) & done; done; wait
echo "   ($((SECONDS - start)) s)"
echo "== fwd + bwd, B4 H16 N4k: main (old) | previous commit (prev) | new"
for dk in sm80_bf16_d128_none sm80_bf16_d128_causal sm80_bf16_d64_none sm80_bf16_d64_causal sm90a_bf16_d64_none sm90a_bf16_d128_none; do
  o=scratch/old/kernels_generated; [[ $dk == sm90a* ]] && o=scratch/old90/kernels_generated
  timeout 80 python3 bench/bwd_variants.py $L kernels_generated/fa_fwd_$dk.json old=$o/fa_bwd_$dk.json prev=scratch/prev/fa_bwd_$dk.json new=kernels_generated/fa_bwd_$dk.json 2>&1 | grep -v relative
done; echo "   ($((SECONDS - start)) s)"
