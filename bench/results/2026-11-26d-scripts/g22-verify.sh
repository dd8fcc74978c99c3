# Call 3 (2026-11-26d): the sm_80 backward on 64 x 128 with dK_j's and
# dV_j's head dims over two warp groups (ampereBackwardColumnGroups {2, 2},
# scratch/new80b; D128 without dQ_i column parts = scratch/exp/g22np, with
# them = scratch/exp/g22). Verify every kernel of scratch/new80b (default,
# deterministic with --deterministic, features, f16) at the sizes,
# both negative controls, sanitizers; then forward + backward B4 H16 N4k
# beside SDPA in the same rounds against f6bca0c (scratch/new80).
# Device: run(kind="nvidia-h100-x1", command="bash bench/results/2026-11-26d-scripts/g22-verify.sh 2>&1 | tee $OUT/log",
#             carry=["scratch/new80", "scratch/new80b", "scratch/exp"])
set -o pipefail; export PYTHONUNBUFFERED=1
echo "== $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader), $(date -u +%Y-%m-%dT%H:%MZ)"
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DFA_ENABLE_COMPILER=OFF -DFA_ENABLE_TESTS=OFF >/dev/null && ninja -C build-gpu >/dev/null || exit 1
F=build-gpu/bin/fa-run; L=build-gpu/runtime/libfa_runtime.so; O=scratch/new80; N=scratch/new80b; E=scratch/exp; start=$SECONDS
sizes() { echo "--b 1 --hq 1 --hkv 1 --m 1 --n 1"; echo "--b 2 --hq 4 --hkv 4 --m 113 --n 203"
  echo "--b 2 --hq 8 --hkv 2 --m 128 --n 217 --layout bshd"; echo "--b 2 --hq 8 --hkv 2 --m 1023 --n 1024 --layout bshd"
  echo "--b 1 --hq 4 --hkv 2 --m 640 --n 200"; }
big="--b 1 --hq 2 --hkv 1 --m 4096 --n 4096 --layout bshd"
{ for k in $N/fa_bwd_*.json $N/n128/fa_bwd_*.json $N/d128f/fa_bwd_*.json; do d=$(dirname $k); b=$(basename $k .json); f=$d/${b/fa_bwd_/fa_fwd_}; f=${f%_det}.json
    case $b in *_det) x="--bwd --deterministic";; *) x="--bwd";; esac
    sizes | sed "s|^|--kernel $f --bwd-kernel $k $x |"
    case $d in $N) echo "--kernel $f --bwd-kernel $k $x $big";; esac; done
} > /tmp/jobs; echo "jobs: $(wc -l < /tmp/jobs)"
FA_PARALLEL=16 FA_JOB_TIMEOUT=240 timeout 480 bash bench/verify-parallel.sh $F "session verify" < /tmp/jobs
echo "   ($((SECONDS - start)) s)"
for neg in $N/n128/neg $N/d128f/neg; do k=$(ls $neg/fa_bwd_*.json); f=${k/fa_bwd_/fa_fwd_}
  $F --device cuda --kernel $f --bwd-kernel $k --negative-control no-row-dot --bwd --b 2 --hq 4 --hkv 2 --m 113 --n 203 --verify > /tmp/neg.log 2>&1
  echo "negative control $(basename $k) (no D term): exit $? (1 = caught)"; done
for k in "$N/fa_fwd_sm80_bf16_d128_causal.json $N/fa_bwd_sm80_bf16_d128_causal.json" \
         "$N/fa_fwd_sm80_bf16_d64_none.json $N/fa_bwd_sm80_bf16_d64_none_det.json --deterministic" \
         "$N/fa_fwd_sm80_bf16_d128_none.json $N/fa_bwd_sm80_bf16_d128_none_det.json --deterministic"; do
  set -- $k
  for tool in memcheck racecheck synccheck; do
    timeout 120 compute-sanitizer --tool $tool --error-exitcode 9 $F --device cuda --kernel $1 --bwd-kernel $2 $3 --bwd --b 1 --hq 2 --hkv 1 --m 77 --n 131 --verify > /tmp/san.log 2>&1
    rc=$?; echo "  $tool $(basename $2) $3: rc=$rc $(grep -h 'ERROR SUMMARY' /tmp/san.log | head -1)"; done; done
echo "   ($((SECONDS - start)) s)"
for r in 1 2; do for k in sm80_bf16_d128_none sm80_bf16_d128_causal; do
  echo "-- $k round $r"; timeout 120 python3 bench/bwd_variants.py $L $N/fa_fwd_$k.json base=$O/fa_bwd_$k.json g22=$E/g22/fa_bwd_$k.json \
    g22np=$N/fa_bwd_$k.json g22np@det=$N/fa_bwd_${k}_det.json 2>&1 | grep "^|\|bit-identical"; echo "   ($((SECONDS - start)) s)"; done
  for k in sm80_bf16_d64_none sm80_bf16_d64_causal; do
  echo "-- $k round $r"; timeout 100 python3 bench/bwd_variants.py $L $N/fa_fwd_$k.json base=$O/n128/fa_bwd_$k.json new=$N/fa_bwd_$k.json \
    new@det=$N/fa_bwd_${k}_det.json 2>&1 | grep "^|\|bit-identical"; echo "   ($((SECONDS - start)) s)"; done; done
