#!/bin/bash
# Chosen tables per binary for questions.txt on the sample database
# (make demo), with gold items found and off-target tables counted.
# usage: compare.sh BINARY... > out.txt
set -euo pipefail
dsn=${DSN:-postgres://postgres@127.0.0.1:5432/atrium_demo}
declare -A miss off
while IFS='|' read -r q gold; do
  echo "## $q   [gold: $gold]"
  for b in "$@"; do
    chosen=$("$b" retrieve --dsn "$dsn" "$q" 2>&1 | awk '$5=="t"{printf "%s.%s ", $2, $3}')
    m=0 o=0
    for item in $gold; do
      hit=0
      for alt in ${item//\// }; do [[ " $chosen " == *" $alt "* ]] && hit=1; done
      ((hit)) || m=$((m+1))
    done
    for c in $chosen; do [[ " ${gold//\// } " == *" $c "* ]] || o=$((o+1)); done
    k=$(basename "$b"); miss[$k]=$(( ${miss[$k]:-0} + m )); off[$k]=$(( ${off[$k]:-0} + o ))
    printf '%-12s missed %d off %d: %s\n' "$k" "$m" "$o" "$chosen"
  done
done < "${QUESTIONS:-$(dirname "$0")/questions.txt}"
echo "## totals"
for b in "$@"; do k=$(basename "$b"); echo "$k gold items missed ${miss[$k]}, off-target tables ${off[$k]}"; done
