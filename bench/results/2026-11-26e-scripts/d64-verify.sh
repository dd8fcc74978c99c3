# Call 7 (2026-11-26e): the committed D64 default kernels (S and dP at
# 32 x 32 a warp, dQ_i on two groups of its own): scratch/b10h =
# scratch/mk80.sh (D64 features: causal_top_left, window, f16, softcap,
# ALiBi, the negative control) and the standard set's sm_80 D64 backward.
# Verify, negative control, sanitizers.
# Device: run(kind="nvidia-h100-x1", command="bash bench/results/2026-11-26e-scripts/d64-verify.sh 2>&1 | tee $OUT/log", carry=["scratch/b10h"])
set -o pipefail; export PYTHONUNBUFFERED=1
echo "== $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader), $(date -u +%Y-%m-%dT%H:%MZ)"
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DFA_ENABLE_COMPILER=OFF -DFA_ENABLE_TESTS=OFF >/dev/null && ninja -C build-gpu >/dev/null || exit 1
F=build-gpu/bin/fa-run; N=scratch/b10h; start=$SECONDS
sizes() { echo "--b 1 --hq 1 --hkv 1 --m 1 --n 1"; echo "--b 2 --hq 4 --hkv 4 --m 113 --n 203"
  echo "--b 2 --hq 8 --hkv 2 --m 128 --n 217 --layout bshd"; echo "--b 2 --hq 8 --hkv 2 --m 1023 --n 1024 --layout bshd"
  echo "--b 1 --hq 4 --hkv 2 --m 640 --n 200"; echo "--b 1 --hq 2 --hkv 1 --m 4096 --n 4096 --layout bshd"; }
{ for k in $N/fa_bwd_sm80_bf16_d64_*.json $N/n128/fa_bwd_*.json kernels_generated/fa_bwd_sm80_*d64*.json; do
    d=$(dirname $k); b=$(basename $k .json); f=$d/${b/fa_bwd_/fa_fwd_}; f=${f%_det}.json
    case $b in *_det) x="--bwd --deterministic";; *) x="--bwd";; esac
    sizes | sed "s|^|--kernel $f --bwd-kernel $k $x |"; done
} > /tmp/jobs; echo "jobs: $(wc -l < /tmp/jobs)"
FA_PARALLEL=16 FA_JOB_TIMEOUT=240 timeout 420 bash bench/verify-parallel.sh $F "d64 verify" < /tmp/jobs
echo "   ($((SECONDS - start)) s)"
k=$(ls $N/n128/neg/fa_bwd_*.json); f=${k/fa_bwd_/fa_fwd_}
$F --device cuda --kernel $f --bwd-kernel $k --negative-control no-row-dot --bwd --b 2 --hq 4 --hkv 2 --m 113 --n 203 --verify > /tmp/neg.log 2>&1; rc=$?
echo "== negative control $k: exit $rc"; grep -E "dQ |dK " /tmp/neg.log | head -2
for k in d64_none d64_causal; do for tool in memcheck racecheck synccheck; do f=$N/fa_fwd_sm80_bf16_$k.json
  timeout 150 compute-sanitizer --tool $tool --error-exitcode 9 $F --device cuda --kernel $f --bwd-kernel $N/fa_bwd_sm80_bf16_$k.json --bwd --b 1 --hq 2 --hkv 1 --m 77 --n 131 --verify > /tmp/san.log 2>&1
  rc=$?; echo "  $tool $k: rc=$rc $(grep -h 'ERROR SUMMARY' /tmp/san.log | head -1)"; done; done
echo "   ($((SECONDS - start)) s)"
