#!/usr/bin/env bash
# The wheel as an engine team gets it: built offline from a clean copy of the
# checkout (sdist, then the wheel from it, with Debian's tools), installed into a
# fresh venv (numpy from the system's site-packages; no build tree on any path),
# then the Python tests run from outside the source tree against the installed
# package, which they check is the one inside the venv.
#   installed_wheel_passes_the_tests.sh SOURCE_DIR PYTHON
set -euo pipefail
source_dir=$1
python=$2

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

fail() {
  echo "FAIL: $*" >&2
  exit 1
}

# The project's files only (tracked, or new and not ignored), so build trees and reports stay out.
mkdir -p "$work/checkout"
(cd "$source_dir" && git ls-files -z --cached --others --exclude-standard |
  while IFS= read -r -d '' file; do [ -e "$file" ] && printf '%s\0' "$file"; done |
  xargs -0 cp --parents -t "$work/checkout")
(cd "$work/checkout" && "$python" -m build --no-isolation --outdir "$work/dist" > "$work/build.log" 2>&1) ||
  { tail -40 "$work/build.log"; fail "python3 -m build --no-isolation failed"; }
wheel=$(ls "$work"/dist/chunkmeta-*.whl)
echo "ok: built $(basename "$wheel") ($(du -k "$wheel" | cut -f1) KB) and $(basename "$(ls "$work"/dist/*.tar.gz)")"

"$python" -m venv --system-site-packages "$work/venv"
"$work/venv/bin/python" -m pip install --no-index --quiet "$wheel" > "$work/pip.log" 2>&1 ||
  { cat "$work/pip.log"; fail "pip install of the wheel failed"; }

cd "$work"  # outside the source tree: nothing there can shadow the installed package
installed=$("$work/venv/bin/python" -c "import chunkmeta; print(chunkmeta.__file__)")
case "$installed" in
  "$work/venv/"*) echo "ok: chunkmeta imports from the venv: $installed" ;;
  *) fail "chunkmeta imports from $installed, not from the venv $work/venv" ;;
esac

for typed in py.typed _chunkmeta.pyi; do
  [ -f "$(dirname "$installed")/$typed" ] || fail "the installed package has no $typed"
done
echo "ok: the installed package ships py.typed and _chunkmeta.pyi"

# Without numpy or torch (a venv of its own, no system packages): the drop-ins and check() on lists.
"$python" -m venv "$work/bare"
"$work/bare/bin/python" -m pip install --no-index --quiet "$wheel" > "$work/pip-bare.log" 2>&1 ||
  { cat "$work/pip-bare.log"; fail "pip install of the wheel into a venv without numpy failed"; }
"$work/bare/bin/python" - <<'PY' || fail "chunkmeta without numpy or torch"
import sys
import chunkmeta
assert "numpy" not in sys.modules and "torch" not in sys.modules
assert chunkmeta.compute_chunk_metadata(4, 1, [0], [0, 5]) == ([0, 4, 5], [0, 0], [1])
def reference(chunk_size, num_prefills, computed, query_start_loc):
    return chunkmeta.compute_chunk_metadata(chunk_size, num_prefills, list(computed), list(query_start_loc))
assert chunkmeta.check(reference, cases=50, seed=1, database=None, corpus=[]).passed
print("ok: without numpy or torch, the drop-ins and check() work on lists")
PY

# Each test file in one of as many pytest workers as there are cores (pytest-xdist, from Debian's
# python3-pytest-xdist; without it, one process): ctest runs the same files side by side in the build tree.
parallel=()
if "$work/venv/bin/python" -c "import xdist" 2>/dev/null; then
  parallel=(-n "$(nproc)" --dist loadfile)
fi
# conftest.py checks again, inside pytest, that every test uses the venv's package.
CHUNKMETA_EXPECTED_PACKAGE_ROOT="$work/venv/" CHUNKMETA_REPORT_DIR="$work/reports" PYTHONDONTWRITEBYTECODE=1 \
  "$work/venv/bin/python" -m pytest -q -p no:cacheprovider "${parallel[@]}" --rootdir="$source_dir" \
  "$source_dir/python/tests" "$source_dir"/specs/*/test_*.py "$source_dir/examples/python/test_engine_chunk_metadata.py"
