# Call 5 (2026-11-26d): (a) the sm_80 deterministic turn read a step ahead
# (thread 0's relaxed load at the step's start; at the turn a fence if it
# had come, else the acquire spin as before; scratch/new80c) against
# de3c868's (scratch/new80b); (b) the sm_80 D64 backward on 128 x 128 with
# 8 warps (FA2's D64 tile; 16 rows per warp, unstaged, scratch/exp/w8,
# built with the FA_EXP_W8 override) against the 64 x 128 default.
# Verify the deterministic kernels first (--deterministic: float64
# reference, bit-identical over 10 runs), then forward + backward B4 H16
# N4k beside SDPA in the same rounds.
# Device: run(kind="nvidia-h100-x1", command="bash bench/results/2026-11-26d-scripts/peek.sh 2>&1 | tee $OUT/log",
#             carry=["scratch/new80b", "scratch/new80c", "scratch/exp"])
set -o pipefail; export PYTHONUNBUFFERED=1
echo "== $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader), $(date -u +%Y-%m-%dT%H:%MZ)"
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DFA_ENABLE_COMPILER=OFF -DFA_ENABLE_TESTS=OFF >/dev/null && ninja -C build-gpu >/dev/null || exit 1
F=build-gpu/bin/fa-run; L=build-gpu/runtime/libfa_runtime.so; B=scratch/new80b; N=scratch/new80c; E=scratch/exp; start=$SECONDS
sizes() { echo "--b 1 --hq 1 --hkv 1 --m 1 --n 1"; echo "--b 2 --hq 4 --hkv 4 --m 113 --n 203"
  echo "--b 2 --hq 8 --hkv 2 --m 128 --n 217 --layout bshd"; echo "--b 2 --hq 8 --hkv 2 --m 1023 --n 1024 --layout bshd"
  echo "--b 1 --hq 4 --hkv 2 --m 640 --n 200"; }
big="--b 1 --hq 2 --hkv 1 --m 4096 --n 4096 --layout bshd"
{ for k in $N/fa_bwd_*_det.json $N/n128/fa_bwd_*_det.json $N/d128f/fa_bwd_*_det.json $E/w8/fa_bwd_*.json; do d=$(dirname $k); b=$(basename $k .json); f=$d/${b/fa_bwd_/fa_fwd_}; f=${f%_det}.json
    case $b in *_det) x="--bwd --deterministic";; *) x="--bwd";; esac
    sizes | sed "s|^|--kernel $f --bwd-kernel $k $x |"
    case $d in $N|$E/w8) echo "--kernel $f --bwd-kernel $k $x $big";; esac; done
} > /tmp/jobs; echo "jobs: $(wc -l < /tmp/jobs)"
FA_PARALLEL=16 FA_JOB_TIMEOUT=240 timeout 420 bash bench/verify-parallel.sh $F "peek verify" < /tmp/jobs
echo "   ($((SECONDS - start)) s)"
for tool in memcheck racecheck synccheck; do
  timeout 120 compute-sanitizer --tool $tool --error-exitcode 9 $F --device cuda --kernel $N/fa_fwd_sm80_bf16_d64_causal.json --bwd-kernel $N/fa_bwd_sm80_bf16_d64_causal_det.json --deterministic --bwd --b 1 --hq 2 --hkv 1 --m 77 --n 131 --verify > /tmp/san.log 2>&1
  rc=$?; echo "  $tool d64 causal det: rc=$rc $(grep -h 'ERROR SUMMARY' /tmp/san.log | head -1)"; done
echo "   ($((SECONDS - start)) s)"
for r in 1 2; do for k in sm80_bf16_d64_none sm80_bf16_d64_causal; do
  echo "-- $k round $r"; timeout 100 python3 bench/bwd_variants.py $L $N/fa_fwd_$k.json default=$B/fa_bwd_$k.json w8=$E/w8/fa_bwd_$k.json \
    old@det=$B/fa_bwd_${k}_det.json peek@det=$N/fa_bwd_${k}_det.json 2>&1 | grep "^|\|bit-identical"; echo "   ($((SECONDS - start)) s)"; done
  for k in sm80_bf16_d128_none sm80_bf16_d128_causal; do
  echo "-- $k round $r"; timeout 100 python3 bench/bwd_variants.py $L $N/fa_fwd_$k.json default=$B/fa_bwd_$k.json \
    old@det=$B/fa_bwd_${k}_det.json peek@det=$N/fa_bwd_${k}_det.json 2>&1 | grep "^|\|bit-identical"; echo "   ($((SECONDS - start)) s)"; done; done
