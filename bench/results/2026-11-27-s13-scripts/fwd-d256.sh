# The sm_80 D = 256 forward on 128 x 64, 8 warps, one K/V stage (FA2's
# tile) against 64 x 32 on 4 warps, two stages: verify, sanitize, time.
# `gen` on the build machine; then on the device:
#   bash bench/results/2026-11-27-s13-scripts/fwd-d256.sh 2>&1 | tee $OUT/log
set -o pipefail; export PYTHONUNBUFFERED=1
W=scratch/fwd256
if [ "$1" = gen ]; then
  set -e; FA=build/bin/fa-compile; rm -rf $W; mkdir -p $W/new $W/old $W/f
  for m in none causal; do
    $FA --target sm_80 -d 256 --mask $m --bwd -o $W/new >/dev/null
    $FA --target sm_80 -d 256 --mask $m --block-m 64 --block-n 32 --name fa_fwd_sm80_bf16_d256_$m -o $W/old >/dev/null
    $FA --target sm_80 -d 256 --dv 128 --mask $m -o $W/new >/dev/null
    $FA --target sm_80 -d 256 --dv 128 --mask $m --block-m 64 --block-n 32 --name fa_fwd_sm80_bf16_d256_dv128_$m -o $W/old >/dev/null
  done
  O=$W/f
  for m in causal_top_left "window(100,50)"; do $FA --target sm_80 -d 256 --mask "$m" -o $O >/dev/null; done
  $FA --target sm_80 -d 256 --dtype f16 --mask causal -o $O >/dev/null
  $FA --target sm_80 -d 256 --softcap 30 --alibi head --mask causal -o $O >/dev/null
  $FA --target sm_80 -d 192 --mask none -o $O >/dev/null
  echo generated; ls $W/*; exit 0
fi
echo "== $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader), $(date -u +%Y-%m-%dT%H:%MZ)"
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DFA_ENABLE_COMPILER=OFF -DFA_ENABLE_TESTS=OFF >/dev/null && ninja -C build-gpu >/dev/null || exit 1
F=build-gpu/bin/fa-run; L=build-gpu/runtime/libfa_runtime.so; start=$SECONDS
sizes() { echo "--b 1 --hq 1 --hkv 1 --m 1 --n 1"; echo "--b 2 --hq 4 --hkv 4 --m 113 --n 203"; echo "--b 2 --hq 4 --hkv 2 --m 100 --n 203"
  echo "--b 2 --hq 8 --hkv 2 --m 128 --n 217 --layout bshd"; echo "--b 2 --hq 8 --hkv 2 --m 1023 --n 1024 --layout bshd"
  echo "--b 1 --hq 4 --hkv 2 --m 640 --n 200"; echo "--b 1 --hq 2 --hkv 1 --m 4096 --n 4096 --layout bshd"; }
{ for k in $W/new/fa_fwd_*.json $W/f/fa_fwd_*.json; do sizes | sed "s|^|--kernel $k |"; done
  for m in none causal; do sizes | sed "s|^|--kernel $W/new/fa_fwd_sm80_bf16_d256_$m.json --bwd-kernel $W/new/fa_bwd_sm80_bf16_d256_$m.json --bwd |"; done
} > /tmp/jobs; echo "jobs: $(wc -l < /tmp/jobs)"
FA_PARALLEL=16 FA_JOB_TIMEOUT=240 timeout 400 bash bench/verify-parallel.sh $F "fwd256 verify" < /tmp/jobs
for tool in memcheck racecheck synccheck; do for k in sm80_bf16_d256_none sm80_bf16_d256_causal; do
  timeout 120 compute-sanitizer --tool $tool --error-exitcode 9 $F --device cuda --kernel $W/new/fa_fwd_$k.json --b 1 --hq 2 --hkv 1 --m 200 --n 331 --verify > /tmp/san.log 2>&1
  echo "  $tool $k: rc=$? $(grep -h 'ERROR SUMMARY' /tmp/san.log | head -1)"; done; done
echo "   ($((SECONDS - start)) s)"
for r in 1 2; do for k in d256_none d256_causal; do
  echo "-- $k round $r"; timeout 150 python3 bench/variants.py $L 4096,8192 new=$W/new/fa_fwd_sm80_bf16_$k.json old=$W/old/fa_fwd_sm80_bf16_$k.json 2>&1 | grep "^|\|WRONG"
  echo "   ($((SECONDS - start)) s)"; done; done
for k in none causal; do echo "-- fwd+bwd $k"
  timeout 150 python3 bench/bwd_variants.py $L $W/new/fa_fwd_sm80_bf16_d256_$k.json new=$W/new/fa_bwd_sm80_bf16_d256_$k.json 2>&1 | grep "^|"
  timeout 150 python3 bench/bwd_variants.py $L $W/old/fa_fwd_sm80_bf16_d256_$k.json old=$W/new/fa_bwd_sm80_bf16_d256_$k.json 2>&1 | grep "^|"; done
echo "   ($((SECONDS - start)) s)"
