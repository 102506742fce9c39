#!/bin/bash
# The fold checks a retrieval change goes through before anyone reads a dev
# set (steps 32-34 of docs/retrieval.md), as one command over two commits:
# each commit's held-out rows on the seven folds (issue10-step16/strict.sh:
# strict learned pairs, each fold's ensemble, abstention off), then
# veto.sh's renamed and documented-schema veto of NEW against OLD. Write the
# change's criteria first; this prints the rows they are judged on. Run from
# the root of a checkout with PostgreSQL and pgvector; about 40 minutes on
# 2 cores.
#
#   bash docs/experiments/candidate.sh FOLDDIR OLD_REV NEW_REV
#
# Each commit is checked out as a git worktree under FOLDDIR (removed at
# the end), so the working tree here is never touched; FOLDDIR/shared
# points at this checkout's ../shared, as the worktrees' ../shared.
set -eu
out=${1:?usage: $0 FOLDDIR OLD_REV NEW_REV}
oldrev=$(git rev-parse --short "${2:?usage: $0 FOLDDIR OLD_REV NEW_REV}")
newrev=$(git rev-parse --short "${3:?usage: $0 FOLDDIR OLD_REV NEW_REV}")
here=$(cd "$(dirname "$0")" && pwd)
root=$(pwd)
mkdir -p "$out"
out=$(cd "$out" && pwd)
[ -e "$out/shared" ] || ln -s "$(cd ../shared && pwd)" "$out/shared"

trees=()
cleanup() {
  for t in "${trees[@]}"; do
    git -C "$root" worktree remove --force "$t" 2>/dev/null || true
  done
}
trap cleanup EXIT

for rev in "$oldrev" "$newrev"; do
  t=$out/wt-$rev
  [ -d "$t" ] || git worktree add --detach "$t" "$rev" >/dev/null
  trees+=("$t")
  # strict.sh swaps learned.tsv in the tree it runs in and builds one
  # binary per fold; the plain binary is built after it has put the
  # shipped file back.
  (cd "$t" && bash docs/experiments/issue10-step16/strict.sh "$out" "strict-$rev" > "$out/rows-$rev.txt")
  (cd "$t" && go build -o "$out/atrium-$rev" ./cmd/atrium)
done

echo "folds, held-out, abstention off (P R CR F1 tables):"
for rev in "$oldrev" "$newrev"; do
  sed "s/^strict-%k/$rev      /" "$out/rows-$rev.txt"
done
echo
bash "$here/veto.sh" "$out" "$out/atrium-$oldrev" "$out/atrium-$newrev"
