# Call 6 (2026-11-26d): the sm_90a dQ writer's turn read a step ahead
# (GradQueryTurn::peek before it waits for the staging; awaitPeeked at the
# turn), scratch/det90new (bash scratch/mkdet.sh), against d0aade0's
# deterministic kernels (scratch/det90old). Verify every sm_90a
# deterministic kernel with --deterministic (float64 reference,
# bit-identical over 10 runs), sanitizers, then forward + backward B4 H16
# N4k beside SDPA in the same rounds (default, old det, new det).
# Device: run(kind="nvidia-h100-x1", command="bash bench/results/2026-11-26d-scripts/peek90.sh 2>&1 | tee $OUT/log",
#             carry=["scratch/det90new", "scratch/det90old"])
set -o pipefail; export PYTHONUNBUFFERED=1
echo "== $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader), $(date -u +%Y-%m-%dT%H:%MZ)"
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DFA_ENABLE_COMPILER=OFF -DFA_ENABLE_TESTS=OFF >/dev/null && ninja -C build-gpu >/dev/null || exit 1
F=build-gpu/bin/fa-run; L=build-gpu/runtime/libfa_runtime.so; N=scratch/det90new; O=scratch/det90old; start=$SECONDS
sizes() { echo "--b 1 --hq 1 --hkv 1 --m 1 --n 1"; echo "--b 2 --hq 4 --hkv 4 --m 113 --n 203"
  echo "--b 2 --hq 8 --hkv 2 --m 128 --n 217 --layout bshd"; echo "--b 2 --hq 8 --hkv 2 --m 1023 --n 1024 --layout bshd"
  echo "--b 1 --hq 4 --hkv 2 --m 640 --n 200"; }
big="--b 1 --hq 2 --hkv 1 --m 4096 --n 4096 --layout bshd"
{ for k in $N/fa_bwd_sm90a_*_det.json; do b=$(basename $k .json); f=$N/${b/fa_bwd_/fa_fwd_}; f=${f%_det}.json
    sizes | sed "s|^|--kernel $f --bwd-kernel $k --bwd --deterministic |"
    case $b in *d256_causal*|*d128_causal*|*d64_none*) echo "--kernel $f --bwd-kernel $k --bwd --deterministic $big";; esac; done
} > /tmp/jobs; echo "jobs: $(wc -l < /tmp/jobs)"
FA_PARALLEL=16 FA_JOB_TIMEOUT=240 timeout 420 bash bench/verify-parallel.sh $F "sm90a det verify" < /tmp/jobs
echo "   ($((SECONDS - start)) s)"
for tool in memcheck racecheck synccheck; do
  timeout 120 compute-sanitizer --tool $tool --error-exitcode 9 $F --device cuda --kernel $N/fa_fwd_sm90a_bf16_d256_causal.json --bwd-kernel $N/fa_bwd_sm90a_bf16_d256_causal_det.json --deterministic --bwd --b 1 --hq 2 --hkv 1 --m 77 --n 131 --verify > /tmp/san.log 2>&1
  rc=$?; echo "  $tool d256 causal det: rc=$rc $(grep -h 'ERROR SUMMARY' /tmp/san.log | head -1)"; done
echo "   ($((SECONDS - start)) s)"
for r in 1 2; do for k in sm90a_bf16_d256_causal sm90a_bf16_d256_none sm90a_bf16_d128_causal sm90a_bf16_d128_none sm90a_bf16_d64_causal sm90a_bf16_d64_none; do
  echo "-- $k round $r"; timeout 120 python3 bench/bwd_variants.py $L $N/fa_fwd_$k.json default=$N/fa_bwd_$k.json \
    old@det=$O/fa_bwd_${k}_det.json peek@det=$N/fa_bwd_${k}_det.json 2>&1 | grep "^|\|bit-identical"; echo "   ($((SECONDS - start)) s)"; done; done
