# Call 6 (2026-11-26c): after call 5's hang (the sm_80 D96 top-left causal
# deterministic kernel at M 113, N 203: KV blocks whose keys no query sees
# walked the last Q block, which that Q block's count of its KV blocks
# leaves out, so decreasing turns never came), the KV blocks' Q range is
# empty there (buildVisibleQueryRange). Every masked backward kernel's PTX
# changed: verify the deterministic kernels (scratch/detNew4, --deterministic,
# bit-identical over 10 runs) and every masked default backward kernel of
# bench/backward-kernels (both chips) at sizes with M < N, M > N, partial
# tiles, GQA; sanitizers on the top-left kernel at M < N.
# Here, before: bash bench/make-backward-kernels.sh; bash scratch/mkdet.sh scratch/detNew4
# Device: run(kind="nvidia-h100-x1", command="bash bench/results/2026-11-26c-scripts/verify-masked.sh 2>&1 | tee $OUT/log",
#             carry=["scratch/detNew4", "bench/backward-kernels"])
set -o pipefail
echo "== $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader), $(date -u +%Y-%m-%dT%H:%MZ)"
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DFA_ENABLE_COMPILER=OFF -DFA_ENABLE_TESTS=OFF >/dev/null && ninja -C build-gpu >/dev/null || exit 1
F=build-gpu/bin/fa-run; N=scratch/detNew4; K=bench/backward-kernels; start=$SECONDS
small() { echo "--b 1 --hq 1 --hkv 1 --m 1 --n 1"; echo "--b 2 --hq 4 --hkv 4 --m 113 --n 203"
  echo "--b 2 --hq 8 --hkv 2 --m 128 --n 217 --layout bshd"; echo "--b 2 --hq 8 --hkv 2 --m 1023 --n 1024 --layout bshd"; echo "--b 1 --hq 4 --hkv 2 --m 640 --n 200"; }
{
for k in $N/fa_bwd_*_det.json; do
  b=$(basename $k .json); f=$N/${b/fa_bwd_/fa_fwd_}; f=${f%_det}.json
  small | sed "s|^|--kernel $f --bwd-kernel $k --bwd --deterministic |"
  case $b in *d96_causal_tl*) echo "--kernel $f --bwd-kernel $k --bwd --deterministic --b 1 --hq 2 --hkv 1 --m 100 --n 1000";; esac
  case $b in *sm90a_bf16_d256_causal*|*sm80_bf16_d128_causal*) echo "--kernel $f --bwd-kernel $k --bwd --deterministic --b 1 --hq 2 --hkv 1 --m 4096 --n 4096 --layout bshd";; esac
done
for k in $K/fa_bwd_*.json; do
  case $k in *_det.json|*_none.json) continue;; esac
  f=$K/$(basename ${k/fa_bwd_/fa_fwd_})
  for a in "--b 2 --hq 4 --hkv 4 --m 113 --n 203" "--b 2 --hq 8 --hkv 2 --m 128 --n 217 --layout bshd" "--b 1 --hq 4 --hkv 2 --m 640 --n 200"; do
    echo "--kernel $f --bwd-kernel $k --bwd $a"; done
done
} > /tmp/jobs; echo "jobs: $(wc -l < /tmp/jobs)"
FA_PARALLEL=16 FA_JOB_TIMEOUT=200 timeout 440 bash bench/verify-parallel.sh $F "masked verify" < /tmp/jobs
echo "   ($((SECONDS - start)) s)"
for tool in memcheck racecheck synccheck; do
  timeout 60 compute-sanitizer --tool $tool --error-exitcode 9 $F --device cuda --kernel $N/fa_fwd_sm80_bf16_d96_causal_tl.json --bwd-kernel $N/fa_bwd_sm80_bf16_d96_causal_tl_det.json --deterministic --bwd --b 1 --hq 2 --hkv 1 --m 77 --n 131 --verify > /tmp/san.log 2>&1
  rc=$?; echo "  $tool top-left det 77x131: rc=$rc $(grep -h 'ERROR SUMMARY' /tmp/san.log | head -1)"; done
echo "   ($((SECONDS - start)) s)"
