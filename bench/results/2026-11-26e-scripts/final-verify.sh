# Call 3 (2026-11-26e): the committed compiler's sm_80 kernels (dQ_i never
# staged; dq_acc in MMA-block order): scratch/b10f = scratch/mk80.sh (D64
# and D128 features, negative controls) plus extra/ (D32, D96, f16 D64
# det), and the standard set's sm_80 backward; negative controls;
# sanitizers; then forward + backward B4 H16 N4k against main d79426f's
# kernels (scratch/b10/old) and SDPA, two rounds.
# Device: run(kind="nvidia-h100-x1", command="bash bench/results/2026-11-26e-scripts/final-verify.sh 2>&1 | tee $OUT/log", carry=["scratch/b10f", "scratch/b10/old"])
set -o pipefail; export PYTHONUNBUFFERED=1
echo "== $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader), $(date -u +%Y-%m-%dT%H:%MZ)"
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DFA_ENABLE_COMPILER=OFF -DFA_ENABLE_TESTS=OFF >/dev/null && ninja -C build-gpu >/dev/null || exit 1
F=build-gpu/bin/fa-run; L=build-gpu/runtime/libfa_runtime.so; O=scratch/b10/old; N=scratch/b10f; start=$SECONDS
sizes() { echo "--b 1 --hq 1 --hkv 1 --m 1 --n 1"; echo "--b 2 --hq 4 --hkv 4 --m 113 --n 203"
  echo "--b 2 --hq 8 --hkv 2 --m 128 --n 217 --layout bshd"; echo "--b 2 --hq 8 --hkv 2 --m 1023 --n 1024 --layout bshd"
  echo "--b 1 --hq 4 --hkv 2 --m 640 --n 200"; }
{ for k in $N/fa_bwd_*.json $N/n128/fa_bwd_*.json $N/d128f/fa_bwd_*.json $N/extra/fa_bwd_*.json kernels_generated/fa_bwd_sm80_*.json; do
    d=$(dirname $k); b=$(basename $k .json); f=$d/${b/fa_bwd_/fa_fwd_}; f=${f%_det}.json
    case $b in *_det) x="--bwd --deterministic";; *) x="--bwd";; esac
    sizes | sed "s|^|--kernel $f --bwd-kernel $k $x |"
    case $k in $N/fa_bwd_*|kernels_generated/*) echo "--kernel $f --bwd-kernel $k $x --b 1 --hq 2 --hkv 1 --m 4096 --n 4096 --layout bshd";; esac; done
} > /tmp/jobs; echo "jobs: $(wc -l < /tmp/jobs)"
FA_PARALLEL=16 FA_JOB_TIMEOUT=240 timeout 420 bash bench/verify-parallel.sh $F "final verify" < /tmp/jobs
echo "   ($((SECONDS - start)) s)"
for neg in $N/n128/neg $N/d128f/neg; do k=$(ls $neg/fa_bwd_*.json); f=${k/fa_bwd_/fa_fwd_}
  $F --device cuda --kernel $f --bwd-kernel $k --negative-control no-row-dot --bwd --b 2 --hq 4 --hkv 2 --m 113 --n 203 --verify > /tmp/neg.log 2>&1; rc=$?
  echo "== negative control $k: exit $rc"; grep -E "dQ|dK|verdict" /tmp/neg.log | head -3; done
for k in d64_none_det d64_causal d128_none; do for tool in memcheck racecheck synccheck; do f=$N/fa_fwd_sm80_bf16_${k%_det}.json
  case $k in *_det) x="--deterministic";; *) x="";; esac
  timeout 150 compute-sanitizer --tool $tool --error-exitcode 9 $F --device cuda --kernel $f --bwd-kernel $N/fa_bwd_sm80_bf16_$k.json --bwd $x --b 1 --hq 2 --hkv 1 --m 77 --n 131 --verify > /tmp/san.log 2>&1
  rc=$?; echo "  $tool $k: rc=$rc $(grep -h 'ERROR SUMMARY' /tmp/san.log | head -1)"; done; done
echo "   ($((SECONDS - start)) s)"
for r in 1 2; do for k in sm80_bf16_d64_none sm80_bf16_d64_causal sm80_bf16_d128_none sm80_bf16_d128_causal; do
  echo "-- $k round $r"; timeout 100 python3 bench/bwd_variants.py $L $N/fa_fwd_$k.json old=$O/fa_bwd_$k.json new=$N/fa_bwd_$k.json \
    old@det=$O/fa_bwd_${k}_det.json new@det=$N/fa_bwd_${k}_det.json 2>&1 | grep "^|\|bit-identical"; echo "   ($((SECONDS - start)) s)"; done; done
