# sum: writes the sum of `numbers` on stdout (the schema leaves them the only digits in the args).
tr -cs '0-9-' '\n' | awk 'NF { sum += $1 } END { printf "%.0f\n", sum }'
