# Call 5 (2026-11-26e): D128's default kernels on {4, 2} (S, dP and dQ_i
# at 32 x 32 a warp; the deterministic kernels stay {2, 2}), built by the
# committed compiler: scratch/b10g = scratch/mk80.sh (D128 features:
# causal_top_left, window, Dv64, f16, softcap, ALiBi, the negative
# control) and the standard set's sm_80 D128 backward. Verify, negative
# control, sanitizers; then forward + backward B4 H16 N4k against the
# {2, 2} kernels (scratch/b10f) and SDPA.
# Device: run(kind="nvidia-h100-x1", command="bash bench/results/2026-11-26e-scripts/l42-verify.sh 2>&1 | tee $OUT/log", carry=["scratch/b10f", "scratch/b10g"])
set -o pipefail; export PYTHONUNBUFFERED=1
echo "== $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader), $(date -u +%Y-%m-%dT%H:%MZ)"
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DFA_ENABLE_COMPILER=OFF -DFA_ENABLE_TESTS=OFF >/dev/null && ninja -C build-gpu >/dev/null || exit 1
F=build-gpu/bin/fa-run; L=build-gpu/runtime/libfa_runtime.so; N=scratch/b10g; start=$SECONDS
sizes() { echo "--b 1 --hq 1 --hkv 1 --m 1 --n 1"; echo "--b 2 --hq 4 --hkv 4 --m 113 --n 203"
  echo "--b 2 --hq 8 --hkv 2 --m 128 --n 217 --layout bshd"; echo "--b 2 --hq 8 --hkv 2 --m 1023 --n 1024 --layout bshd"
  echo "--b 1 --hq 4 --hkv 2 --m 640 --n 200"; echo "--b 1 --hq 2 --hkv 1 --m 4096 --n 4096 --layout bshd"; }
{ for k in $N/fa_bwd_sm80_bf16_d128_*.json $N/d128f/fa_bwd_*.json kernels_generated/fa_bwd_sm80_*d128*.json; do
    d=$(dirname $k); b=$(basename $k .json); f=$d/${b/fa_bwd_/fa_fwd_}; f=${f%_det}.json
    case $b in *_det) x="--bwd --deterministic";; *) x="--bwd";; esac
    sizes | sed "s|^|--kernel $f --bwd-kernel $k $x |"; done
} > /tmp/jobs; echo "jobs: $(wc -l < /tmp/jobs)"
FA_PARALLEL=16 FA_JOB_TIMEOUT=240 timeout 420 bash bench/verify-parallel.sh $F "l42 verify" < /tmp/jobs
echo "   ($((SECONDS - start)) s)"
k=$(ls $N/d128f/neg/fa_bwd_*.json); f=${k/fa_bwd_/fa_fwd_}
$F --device cuda --kernel $f --bwd-kernel $k --negative-control no-row-dot --bwd --b 2 --hq 4 --hkv 2 --m 113 --n 203 --verify > /tmp/neg.log 2>&1; rc=$?
echo "== negative control $k: exit $rc"; grep -E "dQ |dK " /tmp/neg.log | head -2
for k in d128_none d128_causal; do for tool in memcheck racecheck synccheck; do f=$N/fa_fwd_sm80_bf16_$k.json
  timeout 150 compute-sanitizer --tool $tool --error-exitcode 9 $F --device cuda --kernel $f --bwd-kernel $N/fa_bwd_sm80_bf16_$k.json --bwd --b 1 --hq 2 --hkv 1 --m 77 --n 131 --verify > /tmp/san.log 2>&1
  rc=$?; echo "  $tool $k: rc=$rc $(grep -h 'ERROR SUMMARY' /tmp/san.log | head -1)"; done; done
echo "   ($((SECONDS - start)) s)"
for r in 1 2; do for k in sm80_bf16_d128_none sm80_bf16_d128_causal; do
  echo "-- $k round $r"; timeout 100 python3 bench/bwd_variants.py $L $N/fa_fwd_$k.json l22=scratch/b10f/fa_bwd_$k.json l42=$N/fa_bwd_$k.json \
    new@det=$N/fa_bwd_${k}_det.json 2>&1 | grep "^|\|bit-identical"; echo "   ($((SECONDS - start)) s)"; done; done
