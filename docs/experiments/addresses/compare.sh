#!/bin/bash
# Chosen tables per binary for the address questions on the sample database
# (make demo). C is a customer's sampled e-mail address, E an employee's,
# S a supplier's, each the first in the value index.
# usage: compare.sh BINARY... > out.txt
set -euo pipefail
dsn=${DSN:-postgres://postgres@127.0.0.1:5432/atrium_demo}
first() {
  psql -X -At "$dsn" -c "SELECT min(v.value) FROM atrium.value_index v JOIN atrium.tables t ON t.id = v.table_id
    WHERE t.schema_name || '.' || t.table_name = '$1' AND v.column_name = 'email'"
}
C=$(first shop.customers) E=$(first hr.employees) S=$(first shop.suppliers)
while read -r q; do
  q=${q//\$C/$C}; q=${q//\$E/$E}; q=${q//\$S/$S}
  echo "## $q"
  for b in "$@"; do
    printf '%-16s ' "$(basename "$b")"
    "$b" retrieve --dsn "$dsn" "$q" 2>&1 | awk '$5=="t"{printf "%s.%s ", $2, $3} END{print ""}'
  done
done < "$(dirname "$0")/questions.txt"
