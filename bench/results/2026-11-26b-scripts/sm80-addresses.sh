# Call 2 (2026-11-26b): the sm_80 kernels with 32-bit shared addresses
# (cp.async, st.shared as inline PTX; tiles' shifts as immediates) and the
# mask by interval. Verify, sanitize, then time main's PTX (scratch/old)
# against the new in the same rounds beside SDPA; SASS spill sites.
# Here, before: bash bench/make-backward-kernels.sh; bash bench/make-feature-kernels.sh;
#   HEAD's sm_80 kernels_generated copied into scratch/old/kernels_generated.
# Device: run(kind="nvidia-h100-x1", command="bash bench/results/2026-11-26b-scripts/sm80-addresses.sh 2>&1 | tee $OUT/log",
#             carry=["bench/backward-kernels", "bench/feature-kernels", "scratch/old"])
set -o pipefail; export PYTHONUNBUFFERED=1
echo "== $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader), $(date -u +%Y-%m-%dT%H:%MZ)"
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DFA_ENABLE_COMPILER=OFF -DFA_ENABLE_TESTS=OFF >/dev/null && ninja -C build-gpu >/dev/null || exit 1
F=build-gpu/bin/fa-run; L=build-gpu/runtime/libfa_runtime.so; start=$SECONDS
sizes() { for s in "$@"; do m=${s%x*}; n=${s#*x}
  if [ "$m" = 4096 ]; then echo "--b 1 --hq 1 --hkv 1 --layout bhsd --m $m --n $n"; echo "--b 1 --hq 2 --hkv 1 --layout bshd --m $m --n $n"
  else echo "--b 2 --hq 4 --hkv 4 --layout bhsd --m $m --n $n"; echo "--b 2 --hq 8 --hkv 2 --layout bshd --m $m --n $n"; fi; done; }
echo "== sm_80 forwards (standard + feature): 5 sizes x MHA bhsd / GQA bshd"
for k in kernels_generated/fa_fwd_sm80_*.json bench/feature-kernels/fa_fwd_sm80_*.json; do
  sizes 1x1 113x203 128x217 1023x1024 4096x4096 | sed "s|^|--kernel $k |"; done | FA_PARALLEL=14 timeout 200 bash bench/verify-parallel.sh $F "sm_80 forward verify"
echo "   ($((SECONDS - start)) s)"
echo "== sm_80 backward pairs (bench/backward-kernels): 5 sizes x MHA bhsd / GQA bshd"
for k in bench/backward-kernels/fa_fwd_sm80_*.json; do
  sizes 1x1 113x203 128x217 1023x1024 4096x4096 | sed "s|^|--kernel $k --bwd |"; done | FA_PARALLEL=14 timeout 240 bash bench/verify-parallel.sh $F "sm_80 backward verify"
echo "   ($((SECONDS - start)) s)"
timeout 60 bash bench/verify-backward.sh --steps 5 sm80_bf16_d128 2>&1 | grep -v "^==\|^  fa_fwd.*TFLOP" | head -12
for neg in bench/backward-kernels/negative/fa_bwd_*.json; do
  $F --device cuda --kernel ${neg/fa_bwd_/fa_fwd_} --bwd-kernel $neg --negative-control no-row-dot --bwd --b 2 --hq 4 --hkv 2 --m 113 --n 203 --verify > /tmp/neg.log 2>&1
  echo "negative control $(basename $neg): exit $? (1 = caught)"; done
echo "== compute-sanitizer"
for k in bf16_d128_none bf16_d128_causal bf16_d64_causal_alibi; do for tool in memcheck racecheck synccheck; do
  ( timeout 200 compute-sanitizer --tool $tool --error-exitcode 9 $F --device cuda --kernel bench/backward-kernels/fa_fwd_sm80_$k.json --bwd --b 1 --hq 2 --hkv 1 --m 77 --n 131 --verify > /tmp/san-$tool-$k.log 2>&1
    echo "  $tool $k bwd: rc=$? $(grep -h 'ERROR SUMMARY' /tmp/san-$tool-$k.log | head -1)" ) & done; done; wait
for k in bf16_d128_causal bf16_d64_none; do for tool in memcheck racecheck; do
  ( timeout 200 compute-sanitizer --tool $tool --error-exitcode 9 $F --device cuda --kernel kernels_generated/fa_fwd_sm80_$k.json --b 2 --hq 4 --hkv 2 --m 113 --n 203 --layout bshd --verify > /tmp/sanf-$tool-$k.log 2>&1
    echo "  $tool $k fwd: rc=$? $(grep -h 'ERROR SUMMARY' /tmp/sanf-$tool-$k.log | head -1)" ) & done; done; wait
echo "   ($((SECONDS - start)) s)"
echo "== SASS spill sites, new D128 none backward"
bash bench/sass-spills.sh kernels_generated/fa_bwd_sm80_bf16_d128_none.ptx 2>&1 | head -60
cp /tmp/sass.txt $OUT/sass-bwd-d128-none.txt 2>/dev/null
echo "== fwd + bwd, main's PTX (old) against the new, B4 H16 N4k"
for dk in 128_none 128_causal 64_none 64_causal; do
  timeout 90 python3 bench/bwd_variants.py $L kernels_generated/fa_fwd_sm80_bf16_d$dk.json \
    old=scratch/old/kernels_generated/fa_bwd_sm80_bf16_d$dk.json new=kernels_generated/fa_bwd_sm80_bf16_d$dk.json 2>&1 | grep -v relative
done
echo "   ($((SECONDS - start)) s)"
echo "== sm_80 forwards, old against new, N 4k, 8k"
for dk in 128_none 128_causal 64_none 64_causal 256_none; do
  timeout 80 python3 bench/variants.py $L 4096,8192 old=scratch/old/kernels_generated/fa_fwd_sm80_bf16_d$dk.json new=kernels_generated/fa_fwd_sm80_bf16_d$dk.json 2>&1 | grep -v relative
done
echo "   ($((SECONDS - start)) s)"
