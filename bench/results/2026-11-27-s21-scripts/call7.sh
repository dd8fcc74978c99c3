# Twenty-first session, call 7: the sm_80 deterministic backward after the
# default kernels got faster (28e21ed, 6d9b110): D64 / D128 det with LSE / D
# ahead (ahead) against in place (base), and D256 det on 64 x 64 within the
# 227 KB budget (wide) against 32 x 64 (narrow), each against its default.
# Deterministic runs: verified and bit-identical over 10 runs (fa-run).
set -o pipefail; export PYTHONUNBUFFERED=1; W=scratch/s21det; K=kernels_generated; F=build-gpu/bin/fa-run; start=$SECONDS
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DFA_ENABLE_COMPILER=OFF -DFA_ENABLE_TESTS=OFF >/dev/null && ninja -C build-gpu >/dev/null || exit 1
: > /tmp/jobs.txt
for m in none causal; do
  for d in 64 128; do echo "$F --device cuda --kernel $K/fa_fwd_sm80_bf16_d${d}_$m.json --bwd-kernel $W/ahead/fa_bwd_sm80_bf16_d${d}_${m}_det.json --bwd --deterministic --b 2 --hq 8 --hkv 2 --m 1023 --n 1024 --layout bshd --verify # ahead d$d $m" >> /tmp/jobs.txt
    echo "$F --device cuda --kernel $K/fa_fwd_sm80_bf16_d${d}_$m.json --bwd-kernel $W/ahead/fa_bwd_sm80_bf16_d${d}_${m}_det.json --bwd --deterministic --b 1 --hq 4 --hkv 4 --m 113 --n 203 --verify # ahead d$d $m small" >> /tmp/jobs.txt; done
  echo "$F --device cuda --kernel $W/fwd256/fa_fwd_sm80_bf16_d256_$m.json --bwd-kernel $W/wide/fa_bwd_sm80_bf16_d256_${m}_det.json --bwd --deterministic --b 2 --hq 8 --hkv 2 --m 1023 --n 1024 --layout bshd --verify # wide d256 $m" >> /tmp/jobs.txt
  echo "$F --device cuda --kernel $W/fwd256/fa_fwd_sm80_bf16_d256_$m.json --bwd-kernel $W/wide/fa_bwd_sm80_bf16_d256_${m}_det.json --bwd --deterministic --b 1 --hq 4 --hkv 4 --m 113 --n 203 --verify # wide d256 $m small" >> /tmp/jobs.txt
done
xargs -d '\n' -P 6 -I{} bash $W/runjob.sh {} < /tmp/jobs.txt > /tmp/vres.txt
grep -v '^OK' /tmp/vres.txt; echo "verified $(grep -c '^OK' /tmp/vres.txt) / $(wc -l < /tmp/jobs.txt) ($((SECONDS - start)) s)"
for m in none causal; do for d in 64 128; do k=sm80_bf16_d${d}_$m
  python3 bench/bwd_variants.py build-gpu/runtime/libfa_runtime.so $K/fa_fwd_$k.json default=$K/fa_bwd_$k.json base@det=$W/base/fa_bwd_${k}_det.json ahead@det=$W/ahead/fa_bwd_${k}_det.json --b 4 --h 16 --n 4096 2>&1 | grep '^|' | grep -v -- '---' | sed "s/^/$k /"
done; done; echo "   ($((SECONDS - start)) s)"
for m in none causal; do k=sm80_bf16_d256_$m
  python3 bench/bwd_variants.py build-gpu/runtime/libfa_runtime.so $W/fwd256/fa_fwd_$k.json default=$W/fwd256/fa_bwd_$k.json narrow@det=$W/narrow/fa_bwd_${k}_det.json wide@det=$W/wide/fa_bwd_${k}_det.json --b 4 --h 16 --n 4096 2>&1 | grep '^|' | grep -v -- '---' | sed "s/^/$k /"
done; echo "   ($((SECONDS - start)) s)"
