set -o pipefail; export PYTHONUNBUFFERED=1; F=build-gpu/bin/fa-run
echo "== the sm_80 forwards (the branch's ldmatrix is inline PTX now): verify, then main's PTX against the branch's"
n=0; bad=0
for k in kernels_generated/fa_fwd_sm80_*.json bench/feature-kernels/fa_fwd_sm80_*.json; do
  for a in "--m 113 --n 203 --hq 8 --hkv 2 --layout bshd" "--m 1023 --n 1024 --hq 4 --hkv 4 --layout bhsd"; do n=$((n+1))
    timeout 60 $F --device cuda --kernel $k --b 2 $a --seed $n --verify > /tmp/v.log 2>&1 || { bad=$((bad+1)); echo "FAIL $k $a"; tail -3 /tmp/v.log; }
  done; done; echo "sm_80 forward verify: $((n-bad)) of $n passed"
for k in d128_none d128_causal; do
  timeout 100 python3 bench/variants.py build-gpu/runtime/libfa_runtime.so 4096,8192 \
    main=scratch/main-sm80/fa_fwd_sm80_bf16_$k.json branch=kernels_generated/fa_fwd_sm80_bf16_$k.json
done
