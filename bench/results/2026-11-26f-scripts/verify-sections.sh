# Call 5 (2026-11-26f): the committed sm_80 deterministic kernels (16 MB
# sections, 00d1393: scratch/s15 = scratch/mkset.sh, scratch/s16f features)
# verified with --deterministic at the sizes, sanitizers; then the
# sm_90a deterministic kernels with 48 and 64 MB sections (FA_EXP_SECTION_MB:
# scratch/s16h48, s16h64) against the committed 32 MB, beside SDPA.
# Device: run(kind="nvidia-h100-x1", command="bash bench/results/2026-11-26f-scripts/verify-sections.sh 2>&1 | tee $OUT/log", carry=[scratch/s15, scratch/s16f, scratch/s16h48, scratch/s16h64])
set -o pipefail; export PYTHONUNBUFFERED=1
echo "== $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader), $(date -u +%Y-%m-%dT%H:%MZ)"
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DFA_ENABLE_COMPILER=OFF -DFA_ENABLE_TESTS=OFF >/dev/null && ninja -C build-gpu >/dev/null || exit 1
F=build-gpu/bin/fa-run; L=build-gpu/runtime/libfa_runtime.so; N=scratch/s15; start=$SECONDS
sizes() { echo "--b 1 --hq 1 --hkv 1 --m 1 --n 1"; echo "--b 2 --hq 4 --hkv 4 --m 113 --n 203"
  echo "--b 2 --hq 8 --hkv 2 --m 128 --n 217 --layout bshd"; echo "--b 2 --hq 8 --hkv 2 --m 1023 --n 1024 --layout bshd"
  echo "--b 1 --hq 4 --hkv 2 --m 640 --n 200"; echo "--b 1 --hq 2 --hkv 1 --m 4096 --n 4096 --layout bshd"; echo "--b 4 --hq 16 --hkv 16 --m 2048 --n 2048"; }
{ for k in $N/fa_bwd_sm80_*_det.json scratch/s16f/fa_bwd_*.json; do
    d=$(dirname $k); b=$(basename $k .json); f=$d/${b/fa_bwd_/fa_fwd_}; f=${f%_det}.json
    sizes | sed "s|^|--kernel $f --bwd-kernel $k --bwd --deterministic |"; done
} > /tmp/jobs; echo "jobs: $(wc -l < /tmp/jobs)"
FA_PARALLEL=16 FA_JOB_TIMEOUT=240 timeout 400 bash bench/verify-parallel.sh $F "16 MB sections verify" < /tmp/jobs
echo "   ($((SECONDS - start)) s)"
for tool in memcheck racecheck; do for k in sm80_bf16_d64_none sm80_bf16_d128_causal; do
  timeout 150 compute-sanitizer --tool $tool --error-exitcode 9 $F --device cuda --kernel $N/fa_fwd_$k.json --bwd-kernel $N/fa_bwd_${k}_det.json --bwd --deterministic --b 1 --hq 2 --hkv 1 --m 77 --n 131 --verify > /tmp/san.log 2>&1
  rc=$?; echo "  $tool $k det: rc=$rc $(grep -h 'ERROR SUMMARY' /tmp/san.log | head -1)"; done; done
echo "   ($((SECONDS - start)) s)"
for r in 1 2; do for k in sm90a_bf16_d256_causal sm90a_bf16_d256_none sm90a_bf16_d128_none sm90a_bf16_d128_causal; do
  [ $r = 2 ] && [ $k != sm90a_bf16_d256_causal ] && continue
  echo "-- $k round $r"; timeout 150 python3 bench/bwd_variants.py $L $N/fa_fwd_$k.json def=$N/fa_bwd_$k.json \
    s32@det=$N/fa_bwd_${k}_det.json s48@det=scratch/s16h48/fa_bwd_${k}_det.json s64@det=scratch/s16h64/fa_bwd_${k}_det.json 2>&1 | grep "^|"; echo "   ($((SECONDS - start)) s)"; done; done
