# Issue 9's closing checks at HEAD, one device call (2026-11-26):
#   every sm_90a 16-bit forward (standard set + feature kernels) at the
#   issue's five sizes x (MHA bhsd, GQA bshd), ALiBi with both slope
#   shapes; the sm_80 forwards at three sizes; SASS; memcheck, racecheck,
#   synccheck; then the sm_90a table beside SDPA.
# Here, before: bash bench/make-feature-kernels.sh
# Device: run(command="bash bench/results/2026-11-26-scripts/issue9-final.sh 2>&1 | tee $OUT/log",
#             carry=["bench/feature-kernels"])
set -o pipefail; export PYTHONUNBUFFERED=1
echo "== revision $(git rev-parse --short HEAD 2>/dev/null), $(date -u +%Y-%m-%dT%H:%MZ), $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)"
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DFA_ENABLE_COMPILER=OFF -DFA_ENABLE_TESTS=OFF >/dev/null && ninja -C build-gpu >/dev/null || exit 1
F=build-gpu/bin/fa-run
jobs_for() { # kernel, sizes...
  local k=$1; shift
  local specs=("")
  if grep -q '"alibi_slopes"' "$k"; then
    local spec; spec=$(grep -o '"spec": "[^"]*"' "$k" | cut -d'"' -f4)
    specs=("" "--spec \"${spec/alibi=head/alibi=batch_head}\"")
  fi
  # (Fixed after the first run: a `set --` here overwrote the sizes, so
  # ALiBi's second slope shape ran with a broken --n and was refused.)
  local sizes=("$@") m n
  for sp in "${specs[@]}"; do for s in "${sizes[@]}"; do m=${s%x*}; n=${s#*x}
    if [ "$m" = 4096 ]; then
      echo "--kernel $k $sp --b 1 --hq 2 --hkv 2 --layout bhsd --m $m --n $n"
      echo "--kernel $k $sp --b 1 --hq 4 --hkv 1 --layout bshd --m $m --n $n"
    else
      echo "--kernel $k $sp --b 2 --hq 4 --hkv 4 --layout bhsd --m $m --n $n"
      echo "--kernel $k $sp --b 2 --hq 8 --hkv 2 --layout bshd --m $m --n $n"
    fi
  done; done
}
start=$SECONDS
echo "== sm_90a 16-bit forwards: (1,1) (113,203) (128,217) (1023,1024) (4096,4096) x MHA bhsd / GQA bshd"
for k in kernels_generated/fa_fwd_sm90a_{bf16,f16}_*.json bench/feature-kernels/fa_fwd_sm90a_*.json; do
  jobs_for $k 1x1 113x203 128x217 1023x1024 4096x4096
done | FA_PARALLEL=14 timeout 280 bash bench/verify-parallel.sh $F "sm_90a forward verify"
echo "   ($((SECONDS - start)) s)"
echo "== sm_80 forwards (still pass): (1,1) (113,203) (1023,1024)"
for k in kernels_generated/fa_fwd_sm80_*.json bench/feature-kernels/fa_fwd_sm80_*.json; do
  jobs_for $k 1x1 113x203 1023x1024
done | FA_PARALLEL=14 timeout 120 bash bench/verify-parallel.sh $F "sm_80 forward verify"
echo "   ($((SECONDS - start)) s)"
echo "== SASS of the sm_90a standard forwards"
mkdir -p build-gpu/sass
for ptx in kernels_generated/fa_fwd_sm90a_{bf16,f16}_*.ptx; do
  c=build-gpu/sass/$(basename $ptx .ptx); ptxas -arch=sm_90a -v $ptx -o $c.cubin 2> $c.ptxas; cuobjdump --dump-sass $c.cubin > $c.sass
  printf "  %-34s HGMMA %3d  LDL %d  STL %d  UTMALDG %2d  SYNCS %3d  %s\n" $(basename $ptx .ptx) $(grep -c HGMMA $c.sass) \
    $(grep -c 'LDL' $c.sass) $(grep -c 'STL' $c.sass) $(grep -c UTMALDG $c.sass) $(grep -c SYNCS $c.sass) \
    "$(grep -o '[0-9]* bytes spill stores' $c.ptxas | head -1)"
done
echo "== compute-sanitizer (memcheck, racecheck, synccheck)"
for k in bf16_d64_causal bf16_d128_none bf16_d256_causal f16_d256_none; do for tool in memcheck racecheck synccheck; do
  for a in "--b 1 --hq 1 --hkv 1 --m 64 --n 64" "--b 2 --hq 4 --hkv 2 --m 113 --n 203 --layout bshd"; do
    echo "$tool $k $a"; done; done; done | {
  pids=(); while read tool k a; do
    ( timeout 200 compute-sanitizer --tool $tool --error-exitcode 9 $F --device cuda --kernel kernels_generated/fa_fwd_sm90a_$k.json $a --verify > /tmp/san-$tool-$k-${#pids[@]}.log 2>&1
      echo "  $tool $k ($a): rc=$? $(grep -h 'ERROR SUMMARY' /tmp/san-$tool-$k-${#pids[@]}.log)" ) &
    pids+=($!); done; wait; }
echo "   ($((SECONDS - start)) s)"
echo "== the sm_90a table (bench/run.sh --steps 4 --chip sm90a --quick)"
timeout 330 bash bench/run.sh --steps 4 --chip sm90a --quick 2>&1 | grep -v "^== 1"
echo "   ($((SECONDS - start)) s)"
