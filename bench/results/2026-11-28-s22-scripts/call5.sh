# Twenty-second session, call 5: call4.sh at D256 (O over V's staging ring).
W=scratch/o23 D=256 bash "$(dirname "$0")/call4.sh"
