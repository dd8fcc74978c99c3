# Call 4 (2026-11-26): the masked sm_90a forwards now persistent over Q-block
# pairs (TileOrder::Paired): every masked sm_90a 16-bit forward (standard
# set + feature kernels) at the issue's five sizes plus odd T and M > N, x
# (MHA bhsd, GQA bshd); sanitizers; then the sm_90a table beside SDPA.
# (The unmasked kernels' PTX is byte-identical to call 2's.)
# Here, before: bash bench/make-feature-kernels.sh
# Device: run(command="bash bench/results/2026-11-26-scripts/final-paired.sh 2>&1 | tee $OUT/log",
#             carry=["bench/feature-kernels"])
set -o pipefail; export PYTHONUNBUFFERED=1
echo "== $(date -u +%Y-%m-%dT%H:%MZ), $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader)"
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DFA_ENABLE_COMPILER=OFF -DFA_ENABLE_TESTS=OFF >/dev/null && ninja -C build-gpu >/dev/null || exit 1
F=build-gpu/bin/fa-run; start=$SECONDS
masked=$(grep -l '"scheduler": "persistent"' kernels_generated/fa_fwd_sm90a_{bf16,f16}_*.json bench/feature-kernels/fa_fwd_sm90a_*.json | xargs grep -L '"mask": "none"')
echo "masked kernels: $(echo $masked | wc -w)"
for k in $masked; do
  specs=("")
  if grep -q '"alibi_slopes"' "$k"; then spec=$(grep -o '"spec": "[^"]*"' "$k" | cut -d'"' -f4); specs+=("--spec \"${spec/alibi=head/alibi=batch_head}\""); fi
  for sp in "${specs[@]}"; do
    for s in 1x1 113x203 128x217 300x300 640x200 1023x1024; do m=${s%x*}; n=${s#*x}
      echo "--kernel $k $sp --b 2 --hq 4 --hkv 4 --layout bhsd --m $m --n $n"
      echo "--kernel $k $sp --b 2 --hq 8 --hkv 2 --layout bshd --m $m --n $n"; done
    echo "--kernel $k $sp --b 1 --hq 2 --hkv 2 --layout bhsd --m 4096 --n 4096"
    echo "--kernel $k $sp --b 1 --hq 4 --hkv 1 --layout bshd --m 4096 --n 4096"
  done
done | FA_PARALLEL=14 timeout 240 bash bench/verify-parallel.sh $F "masked sm_90a forward verify"
echo "   ($((SECONDS - start)) s)"
echo "== sanitizers"
for k in fa_fwd_sm90a_f16_d256_causal fa_fwd_sm90a_bf16_d128_causal; do for tool in memcheck racecheck synccheck; do for a in "--b 1 --hq 1 --hkv 1 --m 64 --n 64" "--b 2 --hq 4 --hkv 2 --m 300 --n 203 --layout bshd"; do
  ( timeout 150 compute-sanitizer --tool $tool --error-exitcode 9 $F --device cuda --kernel kernels_generated/$k.json $a --verify > /tmp/s-$tool-$k-${a// /}.log 2>&1
    echo "  $tool $k ($a): rc=$? $(grep -h 'ERROR SUMMARY' /tmp/s-$tool-$k-${a// /}.log)" ) &
done; done; done; wait
echo "   ($((SECONDS - start)) s)"
echo "== SASS (masked)"
mkdir -p build-gpu/sass
for ptx in kernels_generated/fa_fwd_sm90a_bf16_d{64,128,256}_causal.ptx; do
  c=build-gpu/sass/$(basename $ptx .ptx); ptxas -arch=sm_90a -v $ptx -o $c.cubin 2> $c.ptxas; cuobjdump --dump-sass $c.cubin > $c.sass
  echo "  $(basename $ptx .ptx): HGMMA $(grep -c HGMMA $c.sass) LDL $(grep -c LDL $c.sass) STL $(grep -c STL $c.sass)"; done
echo "== the sm_90a table (bench/run.sh --steps 4 --chip sm90a --quick)"
timeout 300 bash bench/run.sh --steps 4 --chip sm90a --quick 2>&1 | grep -v "^== 1"
echo "   ($((SECONDS - start)) s)"
