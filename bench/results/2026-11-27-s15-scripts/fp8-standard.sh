# fifteenth session, call 6: the changed fp8 kernels beside bf16 (step 4 of
# verify-fp8.sh for D128 none and D256), and where the D128 none spill sits.
set -o pipefail; export PYTHONUNBUFFERED=1
echo "== kernels_generated/*.ptx sha256 $(cat kernels_generated/*.ptx | sha256sum | cut -c1-12)"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DFA_ENABLE_COMPILER=OFF -DFA_ENABLE_TESTS=OFF >/dev/null && ninja -C build-gpu >/dev/null || exit 1
F=build-gpu/bin/fa-run; start=$SECONDS
k=kernels_generated/fa_fwd_sm90a_f8E4M3FN_d128_none; ptxas -arch=sm_90a $k.ptx -o /tmp/k.cubin && cuobjdump -sass /tmp/k.cubin | grep -n "LDL\|STL\|QGMMA\|BAR.SYNC\|EXIT\|MUFU.EX2" | awk '{print $1, $2, $3}' | uniq -c -f1 | head -60
for dm in 128:none 256:none 256:causal; do d=${dm%:*}; mask=${dm#*:}
  for n in 4096 8192 16384; do b=$((4 * 8192 / n))
    for dtype in f8E4M3FN bf16; do
      t=$($F --device cuda --kernel kernels_generated/fa_fwd_sm90a_${dtype}_d${d}_${mask}.json --b $b --hq 16 --hkv 16 --m $n --n $n --bench --iters 30 2>&1 | grep -o '[0-9.]* TFLOP/s' | head -1)
      printf "  d%-4s %-7s N=%-6s B=%-2s %-9s %s\n" $d $mask $n $b $dtype "$t"
    done; done; echo "   ($((SECONDS - start)) s)"; done
