# For the next session (not yet run): the D64 128 x 128 candidate
# (d64-128x128-candidate.diff: FA2's D64 tile and 2-D layout as the tuned
# sm_80 D64 tile). Before the device call, on the build machine:
#   bash bench/results/2026-11-26f-scripts/next-d64-wide.sh gen
# (builds main's kernels into scratch/d64base, applies the diff, builds the
# candidate's into scratch/d64wide, feature kernels into scratch/d64wide/f).
# Device: run(kind="nvidia-h100-x1", command="bash bench/results/2026-11-26f-scripts/next-d64-wide.sh 2>&1 | tee $OUT/log", carry=["scratch/d64base", "scratch/d64wide"])
set -o pipefail; export PYTHONUNBUFFERED=1
if [ "$1" = gen ]; then
  set -e; FA=build/bin/fa-compile
  gen() { O=$1; rm -rf $O; mkdir -p $O/f
    for m in none causal; do $FA --d 64 --mask $m --bwd -o $O >/dev/null; $FA --d 64 --mask $m --bwd --deterministic -o $O >/dev/null; done; }
  gen scratch/d64base
  git apply bench/results/2026-11-26f-scripts/d64-128x128-candidate.diff && ninja -C build >/dev/null
  gen scratch/d64wide; O=scratch/d64wide/f
  for m in causal_top_left "window(100,50)"; do $FA --d 64 --mask "$m" --bwd -o $O >/dev/null; $FA --d 64 --mask "$m" --bwd --deterministic -o $O >/dev/null; done
  $FA --d 64 --dtype f16 --mask causal --bwd -o $O >/dev/null; $FA --d 64 --softcap 30 --alibi head --mask causal --bwd -o $O >/dev/null
  $FA --d 64 --bwd --test-omit-row-dot -o $O/neg >/dev/null
  echo "generated; the diff is applied to the tree (git diff shows it)"; exit 0
fi
echo "== $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader), $(date -u +%Y-%m-%dT%H:%MZ)"
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DFA_ENABLE_COMPILER=OFF -DFA_ENABLE_TESTS=OFF >/dev/null && ninja -C build-gpu >/dev/null || exit 1
F=build-gpu/bin/fa-run; L=build-gpu/runtime/libfa_runtime.so; B=scratch/d64base; W=scratch/d64wide; start=$SECONDS
sizes() { echo "--b 1 --hq 1 --hkv 1 --m 1 --n 1"; echo "--b 2 --hq 4 --hkv 4 --m 113 --n 203"; echo "--b 2 --hq 4 --hkv 2 --m 100 --n 203"
  echo "--b 2 --hq 8 --hkv 2 --m 128 --n 217 --layout bshd"; echo "--b 2 --hq 8 --hkv 2 --m 1023 --n 1024 --layout bshd"
  echo "--b 1 --hq 4 --hkv 2 --m 640 --n 200"; echo "--b 1 --hq 2 --hkv 1 --m 4096 --n 4096 --layout bshd"; }
{ for k in $W/fa_bwd_*.json $W/f/fa_bwd_*.json; do
    d=$(dirname $k); b=$(basename $k .json); f=$d/${b/fa_bwd_/fa_fwd_}; f=${f%_det}.json
    case $b in *_det) x="--bwd --deterministic";; *) x="--bwd";; esac
    sizes | sed "s|^|--kernel $f --bwd-kernel $k $x |"; done
} > /tmp/jobs; echo "jobs: $(wc -l < /tmp/jobs)"
FA_PARALLEL=16 FA_JOB_TIMEOUT=240 timeout 400 bash bench/verify-parallel.sh $F "d64 wide verify" < /tmp/jobs
k=$(ls $W/f/neg/fa_bwd_*.json); f=${k/fa_bwd_/fa_fwd_}
$F --device cuda --kernel $f --bwd-kernel $k --negative-control no-row-dot --bwd --b 2 --hq 4 --hkv 2 --m 113 --n 203 --verify > /tmp/neg.log 2>&1
echo "== negative control: exit $? (1 expected)"; grep -E "dQ |dK " /tmp/neg.log | head -2
for tool in memcheck racecheck synccheck; do for k in sm80_bf16_d64_none sm80_bf16_d64_causal; do
  timeout 150 compute-sanitizer --tool $tool --error-exitcode 9 $F --device cuda --kernel $W/fa_fwd_$k.json --bwd-kernel $W/fa_bwd_$k.json --bwd --b 1 --hq 2 --hkv 1 --m 77 --n 131 --verify > /tmp/san.log 2>&1
  echo "  $tool $k: rc=$? $(grep -h 'ERROR SUMMARY' /tmp/san.log | head -1)"; done; done
echo "   ($((SECONDS - start)) s)"
for r in 1 2; do for k in sm80_bf16_d64_none sm80_bf16_d64_causal; do
  echo "-- $k round $r"; timeout 150 python3 bench/bwd_variants.py $L $B/fa_fwd_$k.json base=$B/fa_bwd_$k.json wide=$W/fa_bwd_$k.json \
    base@det=$B/fa_bwd_${k}_det.json wide@det=$W/fa_bwd_${k}_det.json 2>&1 | grep "^|\|bit-identical"; echo "   ($((SECONDS - start)) s)"; done; done
