# The sm_80 D = 256 backward (32 x 64 on 8 warps): verify, sanitize, time
# beside SDPA. `gen` on the build machine; then on the device:
#   bash bench/results/2026-11-27-scripts/d256.sh 2>&1 | tee $OUT/log
set -o pipefail; export PYTHONUNBUFFERED=1
W=scratch/d256
if [ "$1" = gen ]; then
  set -e; FA=build/bin/fa-compile; rm -rf $W; mkdir -p $W/f $W/kv2
  for m in none causal; do $FA --target sm_80 --d 256 --mask $m --bwd -o $W >/dev/null
    $FA --target sm_80 --d 256 --mask $m --bwd --deterministic -o $W >/dev/null
    FA_KV=2 $FA --target sm_80 --d 256 --mask $m --bwd -o $W/kv2 >/dev/null; done
  O=$W/f
  for m in causal_top_left "window(100,50)"; do $FA --target sm_80 --d 256 --mask "$m" --bwd -o $O >/dev/null; $FA --target sm_80 --d 256 --mask "$m" --bwd --deterministic -o $O >/dev/null; done
  $FA --target sm_80 --d 256 --dtype f16 --mask causal --bwd -o $O >/dev/null
  $FA --target sm_80 --d 256 --softcap 30 --alibi head --mask causal --bwd -o $O >/dev/null
  $FA --target sm_80 --d 256 --dv 128 --mask causal --bwd -o $O >/dev/null
  $FA --target sm_80 --d 256 --bwd --test-omit-row-dot -o $O/neg >/dev/null
  echo generated; exit 0
fi
echo "== $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader), $(date -u +%Y-%m-%dT%H:%MZ)"
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DFA_ENABLE_COMPILER=OFF -DFA_ENABLE_TESTS=OFF >/dev/null && ninja -C build-gpu >/dev/null || exit 1
F=build-gpu/bin/fa-run; L=build-gpu/runtime/libfa_runtime.so; start=$SECONDS
sizes() { echo "--b 1 --hq 1 --hkv 1 --m 1 --n 1"; echo "--b 2 --hq 4 --hkv 4 --m 113 --n 203"; echo "--b 2 --hq 4 --hkv 2 --m 100 --n 203"
  echo "--b 2 --hq 8 --hkv 2 --m 128 --n 217 --layout bshd"; echo "--b 2 --hq 8 --hkv 2 --m 1023 --n 1024 --layout bshd"
  echo "--b 1 --hq 4 --hkv 2 --m 640 --n 200"; echo "--b 1 --hq 2 --hkv 1 --m 4096 --n 4096 --layout bshd"; }
{ for k in $W/fa_bwd_*.json $W/f/fa_bwd_*.json $W/kv2/fa_bwd_*.json; do
    d=$(dirname $k); b=$(basename $k .json); f=$d/${b/fa_bwd_/fa_fwd_}; f=${f%_det}.json
    case $b in *_det) x="--bwd --deterministic";; *) x="--bwd";; esac
    sizes | sed "s|^|--kernel $f --bwd-kernel $k $x |"; done
} > /tmp/jobs; echo "jobs: $(wc -l < /tmp/jobs)"
FA_PARALLEL=16 FA_JOB_TIMEOUT=240 timeout 420 bash bench/verify-parallel.sh $F "d256 verify" < /tmp/jobs
k=$(ls $W/f/neg/fa_bwd_*.json); f=${k/fa_bwd_/fa_fwd_}
$F --device cuda --kernel $f --bwd-kernel $k --negative-control no-row-dot --bwd --b 2 --hq 4 --hkv 2 --m 113 --n 203 --verify > /tmp/neg.log 2>&1
echo "== negative control: exit $? (1 expected)"; grep -E "dQ |dK " /tmp/neg.log | head -2
for tool in memcheck racecheck synccheck; do for k in sm80_bf16_d256_none sm80_bf16_d256_causal; do
  timeout 150 compute-sanitizer --tool $tool --error-exitcode 9 $F --device cuda --kernel $W/fa_fwd_$k.json --bwd-kernel $W/fa_bwd_$k.json --bwd --b 1 --hq 2 --hkv 1 --m 77 --n 131 --verify > /tmp/san.log 2>&1
  echo "  $tool $k: rc=$? $(grep -h 'ERROR SUMMARY' /tmp/san.log | head -1)"; done; done
echo "   ($((SECONDS - start)) s)"
for r in 1 2; do for k in sm80_bf16_d256_none sm80_bf16_d256_causal; do
  echo "-- $k round $r"; timeout 200 python3 bench/bwd_variants.py $L $W/fa_fwd_$k.json kv4=$W/fa_bwd_$k.json kv2=$W/kv2/fa_bwd_$k.json \
    kv4@det=$W/fa_bwd_${k}_det.json 2>&1 | grep "^|\|bit-identical"; echo "   ($((SECONDS - start)) s)"; done; done
