#!/usr/bin/env bash
# The two quick-start commands of README.md:
#   tools/quickstart.sh verify   build, then verify the built-in fast implementation end to end
#   tools/quickstart.sh test     build, then run every test under ctest
# CHUNKMETA_PRESET picks the CMake preset (default: "default"; CI uses ci-gcc and ci-clang-fuzz).
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
preset="${CHUNKMETA_PRESET:-default}"

# Debian packages the build and tests need.
packages=(cmake ninja-build g++ clang libclang-rt-14-dev llvm zip unzip libgtest-dev libgmock-dev libbenchmark-dev
          librapidcheck-dev nlohmann-json3-dev libcli11-dev
          python3 python3-torch  # the Python adapter's tests (torch: the int32 tensor path)
          python3-dev pybind11-dev libdlpack-dev python3-numpy python3-pytest python3-pytest-xdist python3-hypothesis  # the Python package
          python3-build python3-venv python3-pip)  # its wheel, installed into a fresh venv by a test

install_missing_packages() {
  local missing=()
  for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  if [ "$(id -u)" -eq 0 ]; then
    export DEBIAN_FRONTEND=noninteractive
    step "installing ${#missing[@]} Debian packages (${missing[*]})" "$logs/install.log" \
      sh -c "apt-get update -qq && apt-get install -y -qq --no-install-recommends ${missing[*]}"
  else
    echo "Missing Debian packages: ${missing[*]}" >&2
    echo "Install them with: sudo apt-get install ${missing[*]}" >&2
    exit 1
  fi
}

# One line per step on the terminal; what the step printed goes to its log,
# whose end is shown if the step fails.
logs="build/logs"
mkdir -p "$logs"
step() {
  local what="$1" log="$2"
  shift 2
  local start=$SECONDS
  printf '%s ... ' "$what"
  if "$@" >"$log" 2>&1; then
    echo "done in $((SECONDS - start)) s (log: $log)"
  else
    local status=$?
    echo "FAILED after $((SECONDS - start)) s; the end of $log:"
    tail -n 60 "$log" | sed 's/^/  | /'
    exit "$status"
  fi
}

build() {
  step "configuring ($preset)" "$logs/configure-$preset.log" cmake --preset "$preset"
  step "building ($preset${1:+ $*})" "$logs/build-$preset.log" cmake --build --preset "$preset" "$@"
}

case "${1:-}" in
  verify)
    install_missing_packages
    build --target chunkmeta_cli
    exec "build/$preset/bin/chunkmeta" verify
    ;;
  test)
    install_missing_packages
    build
    ctest --preset "$preset"
    ;;
  *)
    echo "usage: $0 verify|test" >&2
    exit 2
    ;;
esac
