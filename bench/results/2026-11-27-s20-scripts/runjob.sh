# One verify job line ("command # label"): prints OK or FAIL label + tail.
line="$1"; log=$(mktemp)
if timeout 300 bash -c "${line%%#*}" > $log 2>&1; then echo "OK ${line##*#}"; else echo "FAIL ${line##*#}"; tail -4 $log; fi; rm -f $log
