# Call 1 (2026-11-26c): the deterministic mode's turns in decreasing KV-block
# order under a mask, launched last KV block first within L2 sections
# (scratch/detNew), against main's increasing order (scratch/detOld).
# (1) verify the new masked deterministic kernels (bit-identical over 10
# runs, float64 reference), edge shapes, windows; sanitizers on two;
# (2) forward + backward beside SDPA, B4 H16 N4k: default kernel, old det,
# new det, and the det kernel launched without the mode (its codegen cost).
# Here, before: bash scratch/mkdet.sh scratch/detNew (new BackwardOrder.cpp),
#               the same into scratch/detOld with main's BackwardOrder.cpp.
# Device: run(kind="nvidia-h100-x1", command="bash bench/results/2026-11-26c-scripts/det-order.sh 2>&1 | tee $OUT/log",
#             carry=["scratch/detNew", "scratch/detOld"])
set -o pipefail; export PYTHONUNBUFFERED=1
echo "== $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader), $(date -u +%Y-%m-%dT%H:%MZ)"
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DFA_ENABLE_COMPILER=OFF -DFA_ENABLE_TESTS=OFF >/dev/null && ninja -C build-gpu >/dev/null || exit 1
F=build-gpu/bin/fa-run; L=build-gpu/runtime/libfa_runtime.so; N=scratch/detNew; O=scratch/detOld; start=$SECONDS
sizes() { echo "--b 1 --hq 1 --hkv 1 --m 1 --n 1"; echo "--b 2 --hq 4 --hkv 4 --m 113 --n 203"
  echo "--b 2 --hq 8 --hkv 2 --m 128 --n 217 --layout bshd"; echo "--b 2 --hq 8 --hkv 2 --m 1023 --n 1024 --layout bshd"
  echo "--b 1 --hq 4 --hkv 2 --m 640 --n 200"; echo "--b 1 --hq 2 --hkv 2 --m 300 --n 300"; echo "--b 1 --hq 2 --hkv 1 --m 4096 --n 4096"; }
echo "== verify: masked deterministic kernels (new order), --deterministic (10 runs bit-identical)"
for k in $N/fa_bwd_*_det.json; do
  case $k in *none*) continue;; esac
  b=$(basename $k .json); f=$N/${b/fa_bwd_/fa_fwd_}; f=${f%_det}.json
  sizes | sed "s|^|--kernel $f --bwd-kernel $k --bwd --deterministic |"
done | FA_PARALLEL=14 timeout 240 bash bench/verify-parallel.sh $F "masked det verify"
for k in sm90a_bf16_d128_causal sm80_bf16_d64_causal; do for tool in memcheck racecheck synccheck; do
  timeout 100 compute-sanitizer --tool $tool --error-exitcode 9 $F --device cuda --kernel $N/fa_fwd_$k.json --bwd-kernel $N/fa_bwd_${k}_det.json --bwd --deterministic --b 1 --hq 2 --hkv 1 --m 77 --n 131 --verify > /tmp/san.log 2>&1
  rc=$?; echo "  $tool $k det: rc=$rc $(grep -h 'ERROR SUMMARY' /tmp/san.log | head -1)"; done; done
echo "   ($((SECONDS - start)) s)"
echo "== fwd + bwd B4 H16 N4k: default | det kernel, mode off | old det | new det"
for k in sm90a_bf16_d256_causal sm90a_bf16_d128_causal sm90a_bf16_d64_causal sm80_bf16_d128_causal sm80_bf16_d64_causal sm80_bf16_d64_none sm80_bf16_d128_none; do
  echo "-- $k"
  timeout 100 python3 bench/bwd_variants.py $L $N/fa_fwd_$k.json default=$N/fa_bwd_$k.json det-off=$N/fa_bwd_${k}_det.json \
    old@det=$O/fa_bwd_${k}_det.json new@det=$N/fa_bwd_${k}_det.json 2>&1 | grep -v "^FA2:\|^cuDNN:"
  echo "   ($((SECONDS - start)) s)"
done
