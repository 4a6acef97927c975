#!/usr/bin/env bash
# An installed chunkmeta stands on its own. The build tree is installed into a
# prefix, the prefix is moved to another directory (nothing else is deleted),
# and there:
#   1. no installed file holds the path of the checkout or of the build tree;
#   2. `chunkmeta verify` replays the installed corpus (more than 0 entries), named
#      in its first line, and holds;
#   3. a failing `check` prints a report whose replay command names the moved
#      program, and that command, run as printed, replays the failure.
#   installed_program_stands_alone.sh SOURCE_DIR BUILD_DIR MUTANT_PLUGIN
set -euo pipefail
source_dir=$1
build_dir=$2
plugin=$3

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"  # outside the checkout

fail() {
  echo "FAIL: $*" >&2
  exit 1
}

cmake --install "$build_dir" --prefix "$work/prefix" > install.log
mv "$work/prefix" "$work/moved"
prefix=$(realpath "$work/moved")
program="$prefix/bin/chunkmeta"
[ -x "$program" ] || fail "no installed program at $program"

# 1. Paths of the machine that built it.
found=$(grep -rlF -e "$source_dir" -e "$build_dir" "$prefix" || true)
[ -z "$found" ] || fail "installed files hold $source_dir or $build_dir:"$'\n'"$found"
echo "ok: no installed file holds $source_dir or $build_dir ($(find "$prefix" -type f | wc -l) files)"

# 2. verify replays the installed corpus.
code=0
"$program" verify --cases 50 > verify.log 2>&1 || code=$?
[ "$code" = 0 ] || { cat verify.log; fail "verify exited $code"; }
first=$(head -1 verify.log)
corpus="$prefix/share/chunkmeta/corpus"
[[ "$first" =~ ^Corpus:\ $corpus\ \(([0-9]+)\ entr(y|ies)\)$ ]] || fail "verify's first line does not name $corpus: $first"
entries=${BASH_REMATCH[1]}
[ "$entries" -gt 0 ] || fail "the installed corpus has no entry"
# One replay per spec, each of its own entries: together every entry.
replayed=0
while read -r files; do replayed=$((replayed + files)); done < <(sed -n 's/^Replay: \([0-9]*\) files.*/\1/p' verify.log)
[ "$replayed" = "$entries" ] || { cat verify.log; fail "verify replayed $replayed of the $entries entries"; }
echo "ok: verify replays $entries entries of $corpus and holds"

# 3. A failing check, and the replay command its report prints.
code=0
CHUNKMETA_REPORT_DIR="$work/reports" "$program" check --impl "plugin:$plugin#gap-off-by-one" --fail-fast \
  > check.log 2>&1 || code=$?
[ "$code" = 1 ] || { cat check.log; fail "check of a wrong implementation exited $code, not 1"; }
replay=$(sed -n 's/^  replay:    //p' check.log | tail -1)
[ -n "$replay" ] || { cat check.log; fail "the report prints no replay command"; }
case "$replay" in
  "$program replay "* | "'$program' replay "*) ;;
  *) fail "the replay command does not name the installed program $program: $replay" ;;
esac
code=0
bash -c "$replay" > replay.log 2>&1 || code=$?
[ "$code" = 1 ] || { cat replay.log; fail "the printed replay command exited $code, not 1: $replay"; }
grep -q "^COUNTEREXAMPLE" replay.log || { cat replay.log; fail "the replay did not show the counterexample"; }
echo "ok: the report's replay command runs as printed and replays the failure: $replay"
