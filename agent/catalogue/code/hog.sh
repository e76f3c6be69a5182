# hog: holds `mib` MiB in a shell variable, then writes `held <mib> MiB`.
mib=$(tr -cd '0-9')
held=$(head -c "$((mib * 1048576))" /dev/zero | tr '\0' x)
echo "held $mib MiB"
