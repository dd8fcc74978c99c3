# Call 2 (2026-11-26c): where the deterministic mode's time goes. Variants of
# the _det kernels (scratch/mkexp.sh with the experiment's env switches in
# BackwardOrder.cpp, not committed): expNowait (the turn's wait removed, its
# fences, completion waits and counter bumps kept: not deterministic, a
# timing probe), expSec4 / expSec1 (L2 sections of 4 MB / of one pair).
# Timed with the mode off (det-off: the launch order alone) and on, beside
# the default kernel, B4 H16 N4k fwd + bwd. Then verify the new masked
# deterministic kernels at the smaller sizes (--deterministic: bit-identical).
# Device: run(kind="nvidia-h100-x1", command="bash bench/results/2026-11-26c-scripts/det-split.sh 2>&1 | tee $OUT/log",
#             carry=["scratch/detNew", "scratch/expNowait", "scratch/expSec4", "scratch/expSec1"])
set -o pipefail; export PYTHONUNBUFFERED=1
echo "== $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader), $(date -u +%Y-%m-%dT%H:%MZ)"
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DFA_ENABLE_COMPILER=OFF -DFA_ENABLE_TESTS=OFF >/dev/null && ninja -C build-gpu >/dev/null || exit 1
F=build-gpu/bin/fa-run; L=build-gpu/runtime/libfa_runtime.so; N=scratch/detNew; start=$SECONDS
for k in sm90a_bf16_d128_causal sm90a_bf16_d256_causal sm90a_bf16_d128_none; do
  echo "-- $k"; timeout 80 python3 bench/bwd_variants.py $L $N/fa_fwd_$k.json default=$N/fa_bwd_$k.json det@det=$N/fa_bwd_${k}_det.json \
    nowait@det=scratch/expNowait/fa_bwd_${k}_det.json 2>&1 | grep "^|"; echo "   ($((SECONDS - start)) s)"; done
for k in sm80_bf16_d64_none sm80_bf16_d64_causal sm80_bf16_d128_none; do
  echo "-- $k"; timeout 100 python3 bench/bwd_variants.py $L $N/fa_fwd_$k.json default=$N/fa_bwd_$k.json det-off=$N/fa_bwd_${k}_det.json det@det=$N/fa_bwd_${k}_det.json \
    nowait@det=scratch/expNowait/fa_bwd_${k}_det.json sec4-off=scratch/expSec4/fa_bwd_${k}_det.json sec4@det=scratch/expSec4/fa_bwd_${k}_det.json \
    sec1-off=scratch/expSec1/fa_bwd_${k}_det.json 2>&1 | grep "^|"; echo "   ($((SECONDS - start)) s)"; done
sizes() { echo "--b 1 --hq 1 --hkv 1 --m 1 --n 1"; echo "--b 2 --hq 4 --hkv 4 --m 113 --n 203"
  echo "--b 2 --hq 8 --hkv 2 --m 128 --n 217 --layout bshd"; echo "--b 2 --hq 8 --hkv 2 --m 1023 --n 1024 --layout bshd"
  echo "--b 1 --hq 4 --hkv 2 --m 640 --n 200"; echo "--b 1 --hq 2 --hkv 2 --m 300 --n 300"; }
echo "== verify: masked deterministic kernels (new order), --deterministic (10 runs bit-identical)"
for k in $N/fa_bwd_*_det.json; do
  case $k in *none*) continue;; esac
  b=$(basename $k .json); f=$N/${b/fa_bwd_/fa_fwd_}; f=${f%_det}.json
  sizes | sed "s|^|--kernel $f --bwd-kernel $k --bwd --deterministic |"
done | FA_PARALLEL=15 timeout 200 bash bench/verify-parallel.sh $F "masked det verify"
echo "   ($((SECONDS - start)) s)"
