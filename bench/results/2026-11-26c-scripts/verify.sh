# Call 5 (2026-11-26c): verification of the session's kernels.
# (a) every deterministic kernel of scratch/detNew3 (both chips, unmasked,
#     causal, causal_top_left, windows, D256/Dv128 window + softcap) with
#     --deterministic: float64 reference and dQ, dK, dV bit-identical over
#     10 runs; (b) the sm_80 backward kernels whose PTX changed (dQ's
#     additions as red.global.add.f32: the standard set's and the feature
#     kernels, bench/backward-kernels) and the negative control;
# (c) compute-sanitizer memcheck, racecheck, synccheck.
# Here, before: bash bench/make-backward-kernels.sh; bash scratch/mkdet.sh scratch/detNew3
# Device: run(kind="nvidia-h100-x1", command="bash bench/results/2026-11-26c-scripts/verify.sh 2>&1 | tee $OUT/log",
#             carry=["scratch/detNew3", "bench/backward-kernels"])
set -o pipefail
echo "== $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader), $(date -u +%Y-%m-%dT%H:%MZ)"
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DFA_ENABLE_COMPILER=OFF -DFA_ENABLE_TESTS=OFF >/dev/null && ninja -C build-gpu >/dev/null || exit 1
F=build-gpu/bin/fa-run; N=scratch/detNew3; K=bench/backward-kernels; start=$SECONDS
small() { echo "--b 1 --hq 1 --hkv 1 --m 1 --n 1"; echo "--b 2 --hq 4 --hkv 4 --m 113 --n 203"
  echo "--b 2 --hq 8 --hkv 2 --m 128 --n 217 --layout bshd"; echo "--b 2 --hq 8 --hkv 2 --m 1023 --n 1024 --layout bshd"; echo "--b 1 --hq 4 --hkv 2 --m 640 --n 200"; }
big="--b 1 --hq 2 --hkv 1 --m 4096 --n 4096 --layout bshd"
{
for k in $N/fa_bwd_*_det.json; do
  b=$(basename $k .json); f=$N/${b/fa_bwd_/fa_fwd_}; f=${f%_det}.json
  small | sed "s|^|--kernel $f --bwd-kernel $k --bwd --deterministic |"
  case $b in *sm90a_bf16_d256_causal*|*sm80_bf16_d64_causal*|*sm90a_bf16_d128_causal*) echo "--kernel $f --bwd-kernel $k --bwd --deterministic $big";; esac
done
for k in $K/fa_bwd_sm80_*.json; do
  case $k in *_det.json) continue;; esac
  f=$K/$(basename ${k/fa_bwd_/fa_fwd_})
  case $k in *_d64_none*|*_d128_none*|*_d64_causal.json|*_d128_causal.json)
    small | sed "s|^|--kernel $f --bwd-kernel $k --bwd |"
    case $k in *bf16_d128_causal.json|*f16_d64_none.json) echo "--kernel $f --bwd-kernel $k --bwd $big";; esac;;
  *) echo "--kernel $f --bwd-kernel $k --bwd --b 2 --hq 4 --hkv 4 --m 113 --n 203"
     echo "--kernel $f --bwd-kernel $k --bwd --b 2 --hq 8 --hkv 2 --m 1023 --n 1024 --layout bshd";; esac
done
} > /tmp/jobs; echo "jobs: $(wc -l < /tmp/jobs)"
FA_PARALLEL=16 FA_JOB_TIMEOUT=240 timeout 420 bash bench/verify-parallel.sh $F "session verify" < /tmp/jobs
echo "   ($((SECONDS - start)) s)"
neg=$K/negative/fa_bwd_sm80_bf16_d64_none.json
$F --device cuda --kernel $K/negative/fa_fwd_sm80_bf16_d64_none.json --bwd-kernel $neg --negative-control no-row-dot --bwd --b 2 --hq 4 --hkv 2 --m 113 --n 203 --verify > /tmp/neg.log 2>&1
echo "negative control sm_80 D64 (no D term): exit $? (1 = caught)"
for k in "$N/fa_fwd_sm90a_bf16_d256_causal.json $N/fa_bwd_sm90a_bf16_d256_causal_det.json --deterministic" \
         "$N/fa_fwd_sm80_bf16_d64_causal.json $N/fa_bwd_sm80_bf16_d64_causal_det.json --deterministic" \
         "$K/fa_fwd_sm80_bf16_d128_none.json $K/fa_bwd_sm80_bf16_d128_none.json"; do
  set -- $k
  for tool in memcheck racecheck synccheck; do
    timeout 120 compute-sanitizer --tool $tool --error-exitcode 9 $F --device cuda --kernel $1 --bwd-kernel $2 $3 --bwd --b 1 --hq 2 --hkv 1 --m 77 --n 131 --verify > /tmp/san.log 2>&1
    rc=$?; echo "  $tool $(basename $2) $3: rc=$rc $(grep -h 'ERROR SUMMARY' /tmp/san.log | head -1)"; done; done
echo "   ($((SECONDS - start)) s)"
