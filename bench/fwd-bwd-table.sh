#!/usr/bin/env bash
# Forward + backward of every standard bf16 cell (kernels_generated: sm_80
# and sm_90a, D 64 / 128 / 256, none and causal) and its deterministic
# twin, plus the sm_80 D256 pair built for the H100's 227 KB of shared
# memory (what fa-run --spec and the Python op build there): verified at
# two sizes first (fa-run --bwd --verify; the deterministic twins
# bit-identical over 10 launches), then each cell timed by
# bench/bwd_variants.py beside SDPA's FA2 and cuDNN forward + backward,
# B4 H16 N4k, one round. bench/report.py ingest reads its output.
#   build machine:  bash bench/fwd-bwd-table.sh gen   (kernels into scratch/fwd-bwd-table)
#   GPU machine:    bash bench/fwd-bwd-table.sh       (scratch/fwd-bwd-table carried)
set -o pipefail; export PYTHONUNBUFFERED=1
cd "$(dirname "$0")/.."
W=scratch/fwd-bwd-table; K=kernels_generated
cells() { for t in sm80 sm90a; do for d in 64 128 256; do for m in none causal; do echo ${t}_bf16_d${d}_$m; done; done; done; }
if [ "$1" = gen ]; then
  set -e; rm -rf $W; mkdir -p $W/h100
  for t in sm_80 sm_90a; do for d in 64 128 256; do for m in none causal; do
    build/bin/fa-compile --target $t --d $d --mask $m --bwd --deterministic -o $W >/dev/null; done; done; done
  for m in none causal; do
    build/bin/fa-compile --d 256 --mask $m --bwd --shared-memory-budget 227 -o $W/h100 >/dev/null
    build/bin/fa-compile --d 256 --mask $m --bwd --deterministic --shared-memory-budget 227 -o $W/h100 >/dev/null; done
  rm -f $W/fa_fwd_* $W/h100/fa_fwd_*_det*; echo generated; exit 0
fi
echo "== revision $(git rev-parse --short HEAD 2>/dev/null || echo unknown), $(date -u +%Y-%m-%dT%H:%MZ)"
echo "== command: bash bench/fwd-bwd-table.sh"
echo "== $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader), $(date -u +%Y-%m-%dT%H:%MZ)"
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DFA_ENABLE_COMPILER=OFF -DFA_ENABLE_TESTS=OFF >/dev/null && ninja -C build-gpu >/dev/null || exit 1
F=build-gpu/bin/fa-run; L=build-gpu/runtime/libfa_runtime.so; start=$SECONDS
{ for k in $K/fa_bwd_*bf16*.json $W/h100/fa_bwd_*none.json $W/h100/fa_bwd_*causal.json; do f=${k/fa_bwd_/fa_fwd_}
    for s in "--b 2 --hq 4 --hkv 2 --m 113 --n 203" "--b 1 --hq 4 --hkv 2 --m 1023 --n 1024 --layout bshd"; do echo "--kernel $f --bwd-kernel $k --bwd $s"; done; done
  for k in $W/fa_bwd_*_det.json $W/h100/fa_bwd_*_det.json; do b=$(basename $k _det.json); f=$K/${b/fa_bwd_/fa_fwd_}.json
    [ -e $(dirname $k)/${b/fa_bwd_/fa_fwd_}.json ] && f=$(dirname $k)/${b/fa_bwd_/fa_fwd_}.json
    echo "--kernel $f --bwd-kernel $k --bwd --deterministic --b 2 --hq 4 --hkv 2 --m 113 --n 203"; done
} > /tmp/jobs; echo "jobs: $(wc -l < /tmp/jobs)"
FA_PARALLEL=16 FA_JOB_TIMEOUT=240 timeout 300 bash bench/verify-parallel.sh $F "closing backward verify" < /tmp/jobs
echo "   ($((SECONDS - start)) s)"
cells | while read k; do echo "-- $k"; timeout 150 python3 bench/bwd_variants.py $L $K/fa_fwd_$k.json default=$K/fa_bwd_$k.json det@det=$W/fa_bwd_${k}_det.json 2>&1 | grep "^|" | grep -v -- ---; echo "   ($((SECONDS - start)) s)"; done
for m in none causal; do k=sm80_bf16_d256_$m; echo "-- $k 227 KB"; timeout 150 python3 bench/bwd_variants.py $L $W/h100/fa_fwd_$k.json default=$W/h100/fa_bwd_$k.json det@det=$W/h100/fa_bwd_${k}_det.json 2>&1 | grep "^|" | grep -v -- ---; echo "   ($((SECONDS - start)) s)"; done
