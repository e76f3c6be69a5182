# printer: writes `line 1` … `line <lines>` on stdout, pausing `pause_ms` after each, then `printed <lines> lines`
# on stderr.
set -- $(tr -cs '0-9' ' ')
lines=$1
pause=$(awk -v ms="${2:-0}" 'BEGIN { printf "%.3f", ms / 1000 }')
i=0
while [ "$i" -lt "$lines" ]; do
  i=$((i + 1))
  echo "line $i"
  [ "$pause" = "0.000" ] || sleep "$pause"
done
echo "printed $lines lines" >&2
