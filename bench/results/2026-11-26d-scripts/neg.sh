# Call 4 (2026-11-26d): the negative controls (backward without the D term)
# of f6bca0c (scratch/new80) and of the {2, 2} layout (scratch/new80b), whole output.
# Device: run(kind="nvidia-h100-x1", command="bash bench/results/2026-11-26d-scripts/neg.sh 2>&1 | tee $OUT/log", carry=["scratch/new80", "scratch/new80b"])
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DFA_ENABLE_COMPILER=OFF -DFA_ENABLE_TESTS=OFF >/dev/null && ninja -C build-gpu >/dev/null || exit 1
F=build-gpu/bin/fa-run
for neg in scratch/new80/n128/neg scratch/new80b/n128/neg scratch/new80b/d128f/neg; do k=$(ls $neg/fa_bwd_*.json); f=${k/fa_bwd_/fa_fwd_}
  echo "== $k"; $F --device cuda --kernel $f --bwd-kernel $k --negative-control no-row-dot --bwd --b 2 --hq 4 --hkv 2 --m 113 --n 203 --verify 2>&1 | tail -12
  echo "exit ${PIPESTATUS[0]}"; done
