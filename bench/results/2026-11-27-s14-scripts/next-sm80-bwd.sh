# For the next session (written 2026-11-27, fourteenth session, not yet
# run on a GPU): the sm_80 backward's first two changes from perf-notes.md's
# "The sm_80 D256 backward beside FA2" in one device call.
#   gen (build machine, clean lib/include/test):
#     bash bench/results/2026-11-27-s14-scripts/next-sm80-bwd.sh gen
#   device: run(carry=["scratch/nb"], command="bash bench/results/2026-11-27-s14-scripts/next-sm80-bwd.sh 2>&1 | tee $OUT/log")
# Variants (scratch/nb/<variant>/fa_{fwd,bwd}_sm80_bf16_d{64,128,256}_{none,causal}):
#   base   HEAD
#   fast   + Q_i / dO_i copies without row checks on whole Q blocks
#          (sm80-bwd-interior-copies.diff; ptxas: D256 0 / 8 B spill, D128
#          212 / 196 (was 204 / 232), D64 172 / 228 (was 152 / 248))
#   gq8    + dQ_i at 32 x 32 a warp at D256 (sm80-d256-dq-gq8.diff; 104
#          ldmatrix a step, was 108)
#   both   fast + gq8
set -o pipefail; export PYTHONUNBUFFERED=1; W=scratch/nb
S=bench/results/2026-11-27-s14-scripts
if [ "$1" = gen ]; then
  set -e; [ -z "$(git status --porcelain lib include test)" ] || { echo "lib, include or test not clean"; exit 1; }
  rm -rf $W; gen() { for d in 64 128 256; do for m in none causal; do
    build/bin/fa-compile --target sm_80 --dtype bf16 -d $d --mask $m --bwd -o $W/$1 >/dev/null; done; done; }
  ninja -C build >/dev/null; gen base
  git apply $S/sm80-bwd-interior-copies.diff; ninja -C build >/dev/null; gen fast
  git apply $S/sm80-d256-dq-gq8.diff; ninja -C build >/dev/null; gen both
  git checkout lib; git apply $S/sm80-d256-dq-gq8.diff; ninja -C build >/dev/null; gen gq8
  git checkout lib; ninja -C build >/dev/null
  for f in $W/*/fa_bwd*.ptx; do echo "$f $(/usr/local/cuda/bin/ptxas -arch=sm_80 -v $f -o /dev/null 2>&1 | sed -n 4,5p | grep -oE '[0-9]+ bytes spill stores|Used [0-9]+' | paste -sd' ')"; done
  exit 0
fi
echo "== $(nvidia-smi --query-gpu=name --format=csv,noheader)"
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DFA_ENABLE_COMPILER=OFF -DFA_ENABLE_TESTS=OFF >/dev/null && ninja -C build-gpu >/dev/null || exit 1
F=build-gpu/bin/fa-run; L=build-gpu/runtime/libfa_runtime.so; start=$SECONDS
# Verify: every variant, ragged and whole Q blocks (M 113, 1023, 1024), GQA, both layouts.
{ for v in fast gq8 both; do for d in 64 128 256; do for m in none causal; do
  [ $v = gq8 ] && [ $d != 256 ] && continue
  for s in "--b 2 --hq 4 --hkv 2 --m 113 --n 203" "--b 1 --hq 4 --hkv 2 --m 1023 --n 1024 --layout bshd" "--b 1 --hq 2 --hkv 2 --m 1024 --n 1024"; do
    echo "--kernel $W/base/fa_fwd_sm80_bf16_d${d}_$m.json --bwd-kernel $W/$v/fa_bwd_sm80_bf16_d${d}_$m.json --bwd $s"; done; done; done; done; } > /tmp/jobs
echo "jobs: $(wc -l < /tmp/jobs)"
FA_PARALLEL=12 FA_JOB_TIMEOUT=200 timeout 240 bash bench/verify-parallel.sh $F "sm80 bwd verify" < /tmp/jobs
for tool in memcheck racecheck; do k=$W/both/fa_bwd_sm80_bf16_d256_none.json
  timeout 90 compute-sanitizer --tool $tool --error-exitcode 9 $F --device cuda --kernel $W/base/fa_fwd_sm80_bf16_d256_none.json --bwd-kernel $k --bwd --b 1 --hq 2 --hkv 1 --m 77 --n 131 > /tmp/san.log 2>&1
  rc=$?; echo "  $tool both d256: rc=$rc $(grep -h 'ERROR SUMMARY' /tmp/san.log | head -1)"; done
echo "   ($((SECONDS - start)) s)"
for d in 256 128 64; do for m in none causal; do echo "-- d$d $m"
  vs="base=$W/base/fa_bwd_sm80_bf16_d${d}_$m.json fast=$W/fast/fa_bwd_sm80_bf16_d${d}_$m.json"
  [ $d = 256 ] && vs="$vs gq8=$W/gq8/fa_bwd_sm80_bf16_d${d}_$m.json both=$W/both/fa_bwd_sm80_bf16_d${d}_$m.json"
  timeout 120 python3 bench/bwd_variants.py $L $W/base/fa_fwd_sm80_bf16_d${d}_$m.json $vs 2>&1 | grep "^|"
  echo "   ($((SECONDS - start)) s)"; done; done
