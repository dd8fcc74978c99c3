# Twelfth session's closing table: every standard bf16 backward (kernels_generated)
# and its deterministic twin (scratch/final, `gen`), verified then timed beside SDPA.
set -o pipefail; export PYTHONUNBUFFERED=1
W=scratch/final; K=kernels_generated
cells() { for t in sm80 sm90a; do for d in 64 128 256; do for m in none causal; do echo ${t}_bf16_d${d}_$m; done; done; done; }
if [ "$1" = gen ]; then
  set -e; rm -rf $W; mkdir -p $W
  for t in sm_80 sm_90a; do for d in 64 128 256; do for m in none causal; do
    build/bin/fa-compile --target $t --d $d --mask $m --bwd --deterministic -o $W >/dev/null; done; done; done
  echo generated; exit 0
fi
echo "== $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader), $(date -u +%Y-%m-%dT%H:%MZ), $(git rev-parse --short HEAD 2>/dev/null)"
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DFA_ENABLE_COMPILER=OFF -DFA_ENABLE_TESTS=OFF >/dev/null && ninja -C build-gpu >/dev/null || exit 1
F=build-gpu/bin/fa-run; L=build-gpu/runtime/libfa_runtime.so; start=$SECONDS
{ for k in $K/fa_bwd_*.json; do f=${k/fa_bwd_/fa_fwd_}
    for s in "--b 1 --hq 1 --hkv 1 --m 1 --n 1" "--b 2 --hq 4 --hkv 2 --m 113 --n 203" "--b 2 --hq 8 --hkv 2 --m 128 --n 217 --layout bshd" "--b 1 --hq 4 --hkv 2 --m 1023 --n 1024"; do echo "--kernel $f --bwd-kernel $k --bwd $s"; done; done
  for k in $W/fa_bwd_*_det.json; do b=$(basename $k _det.json); f=$K/${b/fa_bwd_/fa_fwd_}.json
    for s in "--b 2 --hq 4 --hkv 2 --m 113 --n 203" "--b 1 --hq 4 --hkv 2 --m 640 --n 200"; do echo "--kernel $f --bwd-kernel $k --bwd --deterministic $s"; done; done
} > /tmp/jobs; echo "jobs: $(wc -l < /tmp/jobs)"
FA_PARALLEL=16 FA_JOB_TIMEOUT=240 timeout 300 bash bench/verify-parallel.sh $F "standard backward verify" < /tmp/jobs
echo "   ($((SECONDS - start)) s)"
cells | while read k; do echo "-- $k"; timeout 150 python3 bench/bwd_variants.py $L $K/fa_fwd_$k.json default=$K/fa_bwd_$k.json det@det=$W/fa_bwd_${k}_det.json 2>&1 | grep "^|\|bit-identical"; echo "   ($((SECONDS - start)) s)"; done
