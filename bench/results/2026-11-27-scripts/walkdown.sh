# The deterministic masked backward walking its Q blocks down: verify
# (--deterministic), sanitize, time against the walk up and the default.
#   gen: bash walkdown.sh gen   (new kernels from the tree into scratch/wd/new,
#        the walk-up ones from HEAD's stash into scratch/wd/old: run it with the change uncommitted)
set -o pipefail; export PYTHONUNBUFFERED=1
W=scratch/wd
specs() { echo "sm_80 64 causal"; echo "sm_80 128 causal"; echo "sm_80 256 causal"; echo "sm_90a 128 causal"; echo "sm_90a 256 causal"; echo "sm_90a 64 causal"; }
if [ "$1" = gen ]; then
  set -e; FA=build/bin/fa-compile; rm -rf $W; mkdir -p $W/new $W/old $W/f
  gen() { specs | while read t d m; do $FA --target $t --d $d --mask $m --bwd -o $1 >/dev/null; $FA --target $t --d $d --mask $m --bwd --deterministic -o $1 >/dev/null; done; }
  gen $W/new
  for t in sm_80 sm_90a; do for m in causal_top_left "window(100,50)" "window(0,300)"; do $FA --target $t --d 128 --mask "$m" --bwd --deterministic -o $W/f >/dev/null; done
    $FA --target $t --d 128 --mask causal --softcap 30 --alibi head --bwd --deterministic -o $W/f >/dev/null; done
  $FA --target sm_80 --d 64 --mask "window(200,0)" --bwd --deterministic -o $W/f >/dev/null
  git stash -q; ninja -C build >/dev/null; gen $W/old; git stash pop -q; ninja -C build >/dev/null
  echo generated; exit 0
fi
echo "== $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader), $(date -u +%Y-%m-%dT%H:%MZ)"
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DFA_ENABLE_COMPILER=OFF -DFA_ENABLE_TESTS=OFF >/dev/null && ninja -C build-gpu >/dev/null || exit 1
F=build-gpu/bin/fa-run; L=build-gpu/runtime/libfa_runtime.so; start=$SECONDS
sizes() { echo "--b 1 --hq 1 --hkv 1 --m 1 --n 1"; echo "--b 2 --hq 4 --hkv 4 --m 113 --n 203"; echo "--b 2 --hq 4 --hkv 2 --m 100 --n 203"
  echo "--b 2 --hq 8 --hkv 2 --m 128 --n 217 --layout bshd"; echo "--b 2 --hq 8 --hkv 2 --m 1023 --n 1024 --layout bshd"
  echo "--b 1 --hq 4 --hkv 2 --m 640 --n 200"; echo "--b 1 --hq 4 --hkv 2 --m 300 --n 1000"; echo "--b 1 --hq 2 --hkv 1 --m 4096 --n 4096 --layout bshd"; }
{ for k in $W/new/fa_bwd_*_det.json $W/f/fa_bwd_*_det.json; do d=$(dirname $k); b=$(basename $k .json); f=$d/${b/fa_bwd_/fa_fwd_}; f=${f%_det}.json
    sizes | sed "s|^|--kernel $f --bwd-kernel $k --bwd --deterministic |"; done; } > /tmp/jobs; echo "jobs: $(wc -l < /tmp/jobs)"
FA_PARALLEL=16 FA_JOB_TIMEOUT=300 timeout 400 bash bench/verify-parallel.sh $F "walk-down verify" < /tmp/jobs
for tool in memcheck racecheck synccheck; do for k in sm80_bf16_d64_causal sm90a_bf16_d128_causal; do
  timeout 150 compute-sanitizer --tool $tool --error-exitcode 9 $F --device cuda --kernel $W/new/fa_fwd_$k.json --bwd-kernel $W/new/fa_bwd_${k}_det.json --bwd --deterministic --b 1 --hq 2 --hkv 1 --m 77 --n 131 --verify > /tmp/san.log 2>&1
  echo "  $tool $k det: rc=$? $(grep -h 'ERROR SUMMARY' /tmp/san.log | head -1)"; done; done
echo "   ($((SECONDS - start)) s)"
for r in 1 2; do specs | { [ $r = 2 ] && grep -v "sm_90a 64\|sm_80 256" || cat; } | while read t d m; do k=${t/_/}_bf16_d${d}_$m; k=${k/sm_/sm}
  echo "-- $k round $r"; timeout 200 python3 bench/bwd_variants.py $L $W/new/fa_fwd_$k.json default=$W/new/fa_bwd_$k.json up@det=$W/old/fa_bwd_${k}_det.json down@det=$W/new/fa_bwd_${k}_det.json 2>&1 | grep "^|\|bit-identical"; echo "   ($((SECONDS - start)) s)"; done; done
