# Twenty-first session, call 5: the sm_80 D128 backward (64 x 128) with
# 28e21ed's pieces: LSE / D ahead at immediate offsets (B), interior copies
# (C), staged dK / dV stores (D); and D256's 32 x 64 (the A100-budget
# default) with the loads ahead (E). Verify (two sizes, MHA / GQA), then
# rounds beside FA2 / cuDNN.
set -o pipefail; export PYTHONUNBUFFERED=1; W=scratch/s21d128; K=kernels_generated; F=build-gpu/bin/fa-run; start=$SECONDS
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DFA_ENABLE_COMPILER=OFF -DFA_ENABLE_TESTS=OFF >/dev/null && ninja -C build-gpu >/dev/null || exit 1
: > /tmp/jobs.txt
for v in B BC BCD C CD E; do for m in none causal; do d=128; [ $v = E ] && d=256
  for size in 113x203 1023x1024; do for heads in "mha bhsd --hq 4 --hkv 4" "gqa bshd --hq 8 --hkv 2"; do
    set -- ${size/x/ } $heads; mm=$1; nn=$2; kind=$3; lay=$4; shift 4
    echo "$F --device cuda --kernel $K/fa_fwd_sm80_bf16_d${d}_$m.json --bwd-kernel $W/$v/fa_bwd_sm80_bf16_d${d}_$m.json --bwd --b 2 $* --m $mm --n $nn --layout $lay --seed $RANDOM --verify # $v/$m $size $kind" >> /tmp/jobs.txt
  done; done; done; done
xargs -d '\n' -P 8 -I{} bash $W/runjob.sh {} < /tmp/jobs.txt > /tmp/vres.txt
grep -v '^OK' /tmp/vres.txt; echo "verified $(grep -c '^OK' /tmp/vres.txt) / $(wc -l < /tmp/jobs.txt) ($((SECONDS - start)) s)"
for round in 1 2 3; do
  for m in none causal; do k=sm80_bf16_d128_$m
    python3 bench/bwd_variants.py build-gpu/runtime/libfa_runtime.so $K/fa_fwd_$k.json base=$K/fa_bwd_$k.json B=$W/B/fa_bwd_$k.json BC=$W/BC/fa_bwd_$k.json BCD=$W/BCD/fa_bwd_$k.json C=$W/C/fa_bwd_$k.json CD=$W/CD/fa_bwd_$k.json --b 4 --h 16 --n 4096 2>&1 | grep '^|' | grep -v -- '---' | sed "s/^/$round $k /"
  done
  [ $round = 3 ] || for m in none causal; do k=sm80_bf16_d256_$m
    python3 bench/bwd_variants.py build-gpu/runtime/libfa_runtime.so $K/fa_fwd_$k.json base=$K/fa_bwd_$k.json E=$W/E/fa_bwd_$k.json --b 4 --h 16 --n 4096 2>&1 | grep '^|' | grep -v -- '---' | sed "s/^/$round $k /"
  done; echo "   ($((SECONDS - start)) s)"
done
