# Call 1 (2026-11-26d): (a) the sm_80 deterministic turn without the
# per-thread membar.gl and its barrier (thread 0's release after a barrier
# is cumulative); (b) the sm_80 D64 backward on 64 x 128, 8 warps (S's keys
# over two groups of four, dQ_i's head dims in two groups of 32 columns),
# dQ_i staged (n128) or added from the fragment (n128u).
# Verify first (float64 reference; det kernels with --deterministic,
# bit-identical over 10 runs; negative control; sanitizers), then forward +
# backward B4 H16 N4k beside SDPA in the same rounds: main's PTX
# (scratch/old80, d0aade0) against the new (scratch/new80).
# Here, before: bash scratch/mk80.sh build/bin/fa-compile scratch/new80 (+ n128u: the same
# with the staging budget at 113 KB); scratch/mk80.sh on d0aade0's fa-compile -> scratch/old80 old
# Device: run(kind="nvidia-h100-x1", command="bash bench/results/2026-11-26d-scripts/d64-split.sh 2>&1 | tee $OUT/log",
#             carry=["scratch/new80", "scratch/old80"])
set -o pipefail; export PYTHONUNBUFFERED=1
echo "== $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader), $(date -u +%Y-%m-%dT%H:%MZ)"
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DFA_ENABLE_COMPILER=OFF -DFA_ENABLE_TESTS=OFF >/dev/null && ninja -C build-gpu >/dev/null || exit 1
F=build-gpu/bin/fa-run; L=build-gpu/runtime/libfa_runtime.so; N=scratch/new80; O=scratch/old80; start=$SECONDS
sizes() { echo "--b 1 --hq 1 --hkv 1 --m 1 --n 1"; echo "--b 2 --hq 4 --hkv 4 --m 113 --n 203"
  echo "--b 2 --hq 8 --hkv 2 --m 128 --n 217 --layout bshd"; echo "--b 2 --hq 8 --hkv 2 --m 1023 --n 1024 --layout bshd"
  echo "--b 1 --hq 4 --hkv 2 --m 640 --n 200"; }
big="--b 1 --hq 2 --hkv 1 --m 4096 --n 4096 --layout bshd"
{ for k in $N/n128/fa_bwd_*.json $N/fa_bwd_*_det.json; do d=$(dirname $k); b=$(basename $k .json); f=$d/${b/fa_bwd_/fa_fwd_}; f=${f%_det}.json
    case $b in *_det) x="--bwd --deterministic";; *) x="--bwd";; esac
    sizes | sed "s|^|--kernel $f --bwd-kernel $k $x |"
    case $b in *d64_none*|*d64_causal|*d64_causal_det|*d128_causal_det) echo "--kernel $f --bwd-kernel $k $x $big";; esac; done
} > /tmp/jobs; echo "jobs: $(wc -l < /tmp/jobs)"
FA_PARALLEL=16 FA_JOB_TIMEOUT=240 timeout 420 bash bench/verify-parallel.sh $F "session verify" < /tmp/jobs
echo "   ($((SECONDS - start)) s)"
$F --device cuda --kernel $N/n128/neg/fa_fwd_sm80_bf16_d64_none.json --bwd-kernel $N/n128/neg/fa_bwd_sm80_bf16_d64_none.json --negative-control no-row-dot --bwd --b 2 --hq 4 --hkv 2 --m 113 --n 203 --verify > /tmp/neg.log 2>&1
echo "negative control sm_80 D64 64x128 (no D term): exit $? (1 = caught)"
for k in "$N/n128/fa_fwd_sm80_bf16_d64_causal.json $N/n128/fa_bwd_sm80_bf16_d64_causal.json" \
         "$N/n128/fa_fwd_sm80_bf16_d64_causal.json $N/n128/fa_bwd_sm80_bf16_d64_causal_det.json --deterministic" \
         "$N/fa_fwd_sm80_bf16_d128_causal.json $N/fa_bwd_sm80_bf16_d128_causal_det.json --deterministic"; do
  set -- $k
  for tool in memcheck racecheck synccheck; do
    timeout 120 compute-sanitizer --tool $tool --error-exitcode 9 $F --device cuda --kernel $1 --bwd-kernel $2 $3 --bwd --b 1 --hq 2 --hkv 1 --m 77 --n 131 --verify > /tmp/san.log 2>&1
    rc=$?; echo "  $tool $(basename $2) $3: rc=$rc $(grep -h 'ERROR SUMMARY' /tmp/san.log | head -1)"; done; done
echo "   ($((SECONDS - start)) s)"
for r in 1 2; do for k in sm80_bf16_d64_none sm80_bf16_d64_causal; do
  echo "-- $k round $r"; timeout 100 python3 bench/bwd_variants.py $L $N/fa_fwd_$k.json main=$O/fa_bwd_$k.json main@det=$O/fa_bwd_${k}_det.json \
    new@det=$N/fa_bwd_${k}_det.json n128u=$N/n128u/fa_bwd_$k.json n128=$N/n128/fa_bwd_$k.json n128@det=$N/n128/fa_bwd_${k}_det.json \
    n128u@det=$N/n128u/fa_bwd_${k}_det.json 2>&1 | grep "^|\|bit-identical"; echo "   ($((SECONDS - start)) s)"; done
  for k in sm80_bf16_d128_none sm80_bf16_d128_causal; do
  echo "-- $k round $r"; timeout 80 python3 bench/bwd_variants.py $L $N/fa_fwd_$k.json main=$O/fa_bwd_$k.json main@det=$O/fa_bwd_${k}_det.json \
    new@det=$N/fa_bwd_${k}_det.json 2>&1 | grep "^|\|bit-identical"; echo "   ($((SECONDS - start)) s)"; done; done
