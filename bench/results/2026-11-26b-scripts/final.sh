# Call 7 (2026-11-26b): (1) dQ_i's matmul and additions between dV's and
# dK's in the sm_80 D128 backward (FA2's order): verify its pairs, then
# time it against the committed order (368a500) in the same rounds;
# (2) the fp8 forwards, main's PTX (f5acd66) against the session's
# (ex2.approx.ftz), alternating fa-run --bench runs.
# Here, before: bash bench/make-backward-kernels.sh (with the order change)
# Device: run(kind="nvidia-h100-x1", command="bash bench/results/2026-11-26b-scripts/final.sh 2>&1 | tee $OUT/log",
#             carry=["bench/backward-kernels", "scratch/order", "scratch/old90"])
set -o pipefail; export PYTHONUNBUFFERED=1
echo "== $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader), $(date -u +%Y-%m-%dT%H:%MZ)"
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DFA_ENABLE_COMPILER=OFF -DFA_ENABLE_TESTS=OFF >/dev/null && ninja -C build-gpu >/dev/null || exit 1
F=build-gpu/bin/fa-run; L=build-gpu/runtime/libfa_runtime.so; start=$SECONDS
sizes() { for s in 1x1 113x203 128x217 1023x1024 4096x4096; do m=${s%x*}; n=${s#*x}
  if [ "$m" = 4096 ]; then echo "--b 1 --hq 1 --hkv 1 --layout bhsd --m $m --n $n"; echo "--b 1 --hq 2 --hkv 1 --layout bshd --m $m --n $n"
  else echo "--b 2 --hq 4 --hkv 4 --layout bhsd --m $m --n $n"; echo "--b 2 --hq 8 --hkv 2 --layout bshd --m $m --n $n"; fi; done; }
echo "== sm_80 D128 backward pairs with dQ_i before dK (bench/backward-kernels)"
for k in bench/backward-kernels/fa_fwd_sm80_*d128*.json; do sizes | sed "s|^|--kernel $k --bwd |"; done |
  FA_PARALLEL=15 timeout 150 bash bench/verify-parallel.sh $F "sm_80 D128 backward verify"
for k in sm80_bf16_d128_causal sm80_bf16_d128_none; do
  out=$(timeout 100 $F --device cuda --kernel bench/backward-kernels/fa_fwd_$k.json --bwd-kernel bench/backward-kernels/fa_bwd_${k}_det.json --bwd --deterministic --verify --b 2 --hq 8 --hkv 2 --m 1023 --n 1024 --layout bshd 2>&1); rc=$?
  echo "  deterministic $k: rc=$rc $(echo "$out" | grep -E '^deterministic|verdict' | tr '\n' ' ')"
  for tool in memcheck racecheck synccheck; do
    timeout 200 compute-sanitizer --tool $tool --error-exitcode 9 $F --device cuda --kernel bench/backward-kernels/fa_fwd_$k.json --bwd --b 1 --hq 2 --hkv 1 --m 77 --n 131 --verify > /tmp/san.log 2>&1
    rc=$?; echo "  $tool $k: rc=$rc $(grep -h 'ERROR SUMMARY' /tmp/san.log | head -1)"; done
done
echo "   ($((SECONDS - start)) s)"
echo "== fwd + bwd, B4 H16 N4k: committed order (dV, dK, dQ) against dQ before dK"
for dk in 128_none 128_causal; do
  timeout 80 python3 bench/bwd_variants.py $L kernels_generated/fa_fwd_sm80_bf16_d$dk.json committed=kernels_generated/fa_bwd_sm80_bf16_d$dk.json order=scratch/order/fa_bwd_sm80_bf16_d$dk.json 2>&1 | grep -v relative
done; echo "   ($((SECONDS - start)) s)"
echo "== fp8 forwards, B4 N8k (H = 2048/D): main (f5acd66) | new, alternating fa-run --bench, 3 rounds"
for k in d128_none d256_none d128_causal; do
  h=16; [ $k = d256_none ] && h=8
  for r in 1 2 3; do for v in scratch/old90/kernels_generated kernels_generated; do
    echo "  $k $(basename $(dirname $v)) round $r: $($F --device cuda --kernel $v/fa_fwd_sm90a_f8E4M3FN_$k.json --bench --b 2 --hq $h --hkv $h --m 8192 --n 8192 2>&1 | grep -o '[0-9.]* TFLOP/s' | tail -1)"
  done; done
done; echo "   ($((SECONDS - start)) s)"
