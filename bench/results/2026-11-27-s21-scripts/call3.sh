# Twenty-first session, call 3: the sm_80 D64 backward (128 x 128) after
# the s21 ncu page: LSE / D as predicated loads at immediate offsets from
# one address (loadPredicatedRows), in place (A) or a Q block ahead (B),
# + interior copies (C), + dK / dV staged 16-byte stores (D); and the D256
# 64 x 64 with the new row loads (d256new) against 40a9b9c's (d256st).
# Verify, then three rounds beside FA2 / cuDNN; then the Python tests.
set -o pipefail; export PYTHONUNBUFFERED=1; W=scratch/s21d64; K=kernels_generated; F=build-gpu/bin/fa-run; start=$SECONDS
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DFA_ENABLE_COMPILER=OFF -DFA_ENABLE_TESTS=OFF >/dev/null && ninja -C build-gpu >/dev/null || exit 1
: > /tmp/jobs.txt
job() { # variant-dir fwd mask-label...
  local bwd=$1 fwd=$2 label=$3
  for size in 1x1 113x203 128x217 1023x1024; do for heads in "mha bhsd --hq 4 --hkv 4" "gqa bshd --hq 8 --hkv 2"; do
    set -- ${size/x/ } $heads; mm=$1; nn=$2; kind=$3; lay=$4; shift 4
    echo "$F --device cuda --kernel $fwd --bwd-kernel $bwd --bwd --b 2 $* --m $mm --n $nn --layout $lay --seed $RANDOM --verify # $label $size $kind" >> /tmp/jobs.txt
  done; done
}
for v in A B BC BCD; do for m in none causal; do job $W/$v/fa_bwd_sm80_bf16_d64_$m.json $K/fa_fwd_sm80_bf16_d64_$m.json $v/$m; done; done
for m in none causal; do job $W/d256new/fa_bwd_sm80_bf16_d256_$m.json $W/d256fwd/fa_fwd_sm80_bf16_d256_$m.json d256new/$m; done
xargs -d '\n' -P 8 -I{} bash $W/runjob.sh {} < /tmp/jobs.txt > /tmp/vres.txt
grep -v '^OK' /tmp/vres.txt; echo "verified $(grep -c '^OK' /tmp/vres.txt) / $(wc -l < /tmp/jobs.txt) ($((SECONDS - start)) s)"
for round in 1 2 3; do
  for m in none causal; do k=sm80_bf16_d64_$m
    python3 bench/bwd_variants.py build-gpu/runtime/libfa_runtime.so $K/fa_fwd_$k.json base=$K/fa_bwd_$k.json A=$W/A/fa_bwd_$k.json B=$W/B/fa_bwd_$k.json BC=$W/BC/fa_bwd_$k.json BCD=$W/BCD/fa_bwd_$k.json --b 4 --h 16 --n 4096 2>&1 | grep '^|' | grep -v -- '---' | sed "s/^/$round $k /"
  done
  for m in none causal; do k=sm80_bf16_d256_$m
    python3 bench/bwd_variants.py build-gpu/runtime/libfa_runtime.so $W/d256fwd/fa_fwd_$k.json st=$W/d256st/fa_bwd_$k.json new=$W/d256new/fa_bwd_$k.json --b 4 --h 16 --n 4096 2>&1 | grep '^|' | grep -v -- '---' | sed "s/^/$round $k /"
  done; echo "   ($((SECONDS - start)) s)"
done
timeout 150 bash bench/python-tests.sh --no-bench 2>&1 | tail -12
echo "   ($((SECONDS - start)) s)"
