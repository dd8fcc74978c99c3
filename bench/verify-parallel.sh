#!/usr/bin/env bash
# Runs `fa-run --device cuda ... --verify` jobs side by side: the float64
# reference is single-threaded CPU work and each kernel a few milliseconds
# of GPU, so on the GPU machine's 16 cores a table of several hundred runs
# takes minutes instead of most of ten. One job per line of
# stdin, the line being fa-run's arguments (shell quoting allowed, e.g.
# --spec "d=96,mask=window(64,16)"); each job gets --seed <its line number>.
# Prints each failure with the end of its log, then "verify: X of Y passed".
# Each job may take FA_JOB_TIMEOUT seconds (300), else it fails (124).
# Usage: jobs | [FA_PARALLEL=12] [FA_JOB_TIMEOUT=300] bash bench/verify-parallel.sh [FA_RUN] [LABEL]
set -u
FA_RUN="${1:-build-gpu/bin/fa-run}"
label="${2:-verify}"
logs=$(mktemp -d)
run_one() {
  local id=$1; shift
  if timeout "${FA_JOB_TIMEOUT:-300}" "$FA_RUN" --device cuda "$@" --seed "$id" --verify > "$logs/$id.log" 2>&1; then
    touch "$logs/$id.pass"
  else
    { echo "FAIL (exit $?) $*"; tail -4 "$logs/$id.log"; } > "$logs/$id.fail"
  fi
}
runs=0
while IFS= read -r line; do
  [ -n "$line" ] || continue
  runs=$((runs + 1))
  eval "set -- $line"
  while [ "$(jobs -rp | wc -l)" -ge "${FA_PARALLEL:-12}" ]; do wait -n; done
  run_one "$runs" "$@" &
done
wait
cat "$logs"/*.fail 2>/dev/null
passed=$(ls "$logs" | grep -c '\.pass$')
echo "$label: $passed of $runs passed"
rm -rf "$logs"
[ "$passed" = "$runs" ]
