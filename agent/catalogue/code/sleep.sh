# sleep: sleeps `ms` milliseconds, then writes `slept <ms>` on stdout.
ms=$(tr -cd '0-9')
sleep "$(awk -v ms="$ms" 'BEGIN { printf "%.3f", ms / 1000 }')"
echo "slept $ms"
