# Call 3 (2026-11-26b): every kernel the session's changes touch (ex2.ftz
# and exp(S - LSE) as one FFMA: all of them; the sm_80 addresses and masks),
# verified: 16-bit forwards of both chips (standard set + feature kernels)
# and every backward pair at the issues' five sizes x (MHA bhsd, GQA bshd);
# fp8; negative controls; deterministic bit-identity; sanitizers.
# Here, before: bash bench/make-backward-kernels.sh; bash bench/make-feature-kernels.sh
# Device: run(kind="nvidia-h100-x1", command="bash bench/results/2026-11-26b-scripts/verify-all.sh 2>&1 | tee $OUT/log",
#             carry=["bench/backward-kernels", "bench/feature-kernels"])
set -o pipefail; export PYTHONUNBUFFERED=1
echo "== revision $(git rev-parse --short HEAD 2>/dev/null), $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader), $(date -u +%Y-%m-%dT%H:%MZ)"
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DFA_ENABLE_COMPILER=OFF -DFA_ENABLE_TESTS=OFF >/dev/null && ninja -C build-gpu >/dev/null || exit 1
F=build-gpu/bin/fa-run; start=$SECONDS
sizes() { for s in 1x1 113x203 128x217 1023x1024 4096x4096; do m=${s%x*}; n=${s#*x}
  if [ "$m" = 4096 ]; then echo "--b 1 --hq 1 --hkv 1 --layout bhsd --m $m --n $n"; echo "--b 1 --hq 2 --hkv 1 --layout bshd --m $m --n $n"
  else echo "--b 2 --hq 4 --hkv 4 --layout bhsd --m $m --n $n"; echo "--b 2 --hq 8 --hkv 2 --layout bshd --m $m --n $n"; fi; done; }
echo "== 16-bit forwards, sm_80 and sm_90a"
for k in kernels_generated/fa_fwd_sm80_*.json kernels_generated/fa_fwd_sm90a_{bf16,f16}_*.json bench/feature-kernels/fa_fwd_*.json; do
  sizes | sed "s|^|--kernel $k |"; done | FA_PARALLEL=15 timeout 250 bash bench/verify-parallel.sh $F "forward verify"
echo "   ($((SECONDS - start)) s)"
echo "== backward pairs (bench/backward-kernels), both chips"
for k in bench/backward-kernels/fa_fwd_*.json; do
  sizes | sed "s|^|--kernel $k --bwd |"; done | FA_PARALLEL=15 timeout 250 bash bench/verify-parallel.sh $F "backward verify"
echo "   ($((SECONDS - start)) s)"
for neg in bench/backward-kernels/negative*/fa_bwd_*.json; do
  $F --device cuda --kernel bench/backward-kernels/$(basename ${neg/fa_bwd_/fa_fwd_}) --bwd-kernel $neg --negative-control no-row-dot --bwd --b 2 --hq 4 --hkv 2 --m 113 --n 203 --verify > /tmp/neg.log 2>&1
  rc=$?; echo "negative control $neg: exit $rc (1 = caught)"; done
echo "== fp8"
FA_FP8_SIZES="1x1 113x203 1023x1024 4096x4096" timeout 150 bash bench/verify-fp8.sh --steps 2 2>&1 | grep -v "^  fa_fwd.*PASS" | tail -12
echo "   ($((SECONDS - start)) s)"
echo "== deterministic: bit-identical over 10 runs"
for k in sm80_bf16_d128_causal sm90a_bf16_d128_none sm90a_bf16_d256_causal; do
  det=bench/backward-kernels/fa_bwd_${k}_det.json; [ -f $det ] || { echo "  (no $det)"; continue; }
  out=$(timeout 100 $F --device cuda --kernel bench/backward-kernels/fa_fwd_$k.json --bwd-kernel $det --bwd --deterministic --verify --b 2 --hq 8 --hkv 2 --m 1023 --n 1024 --layout bshd 2>&1); rc=$?
  echo "  $k: rc=$rc $(echo "$out" | grep -E '^deterministic|verdict' | tr '\n' ' ')"; done
echo "== compute-sanitizer"
for k in sm80_bf16_d128_causal sm80_bf16_d64_none sm90a_bf16_d128_causal sm90a_bf16_d64_none; do for tool in memcheck racecheck synccheck; do
  ( timeout 200 compute-sanitizer --tool $tool --error-exitcode 9 $F --device cuda --kernel bench/backward-kernels/fa_fwd_$k.json --bwd --b 1 --hq 2 --hkv 1 --m 77 --n 131 --verify > /tmp/san-$tool-$k.log 2>&1
    rc=$?; echo "  $tool $k fwd+bwd: rc=$rc $(grep -h 'ERROR SUMMARY' /tmp/san-$tool-$k.log | head -1)" ) & done; done; wait
echo "   ($((SECONDS - start)) s)"
