#!/usr/bin/env bash
# Install the Python SDK server shim: a venv in scripts/py-server/.venv with
# requirements.txt (hash-checked) on a Python >= 3.12, which resonate-sdk
# 0.8.1 needs (README.md, "Python").
#
#   scripts/py-server/install.sh [--build-python]
#
# The interpreter is the first of: $CONFORM_PYTHON; python3.13, python3.12 on
# PATH; a pyenv 3.12+ (~/.pyenv/versions); one this script built before. With
# --build-python and none of them, it builds CPython 3.13 from Debian's own
# source package (trixie's python3.13, fetched with `apt-get source` through
# a private apt configuration: the system's sources are not touched) into
# $CONFORM_PYTHON_PREFIX (default /var/cache/conform/python3.13). That takes
# about 4 CPU-minutes and needs only what this machine kind ships (gcc, make,
# libssl-dev, zlib1g-dev, libffi-dev). Without --build-python and no Python
# >= 3.12, it says so and exits 3 (any other failure: 1).
#
# An up-to-date venv (same interpreter, same requirements.txt) is left alone.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
prefix=${CONFORM_PYTHON_PREFIX:-/var/cache/conform/python3.13}
build=0
for a in "$@"; do
  case $a in
    --build-python) build=1 ;;
    -h|--help) sed -n '2,18p' "$0"; exit 0 ;;
    *) echo "install.sh: unknown argument $a" >&2; exit 2 ;;
  esac
done

# new_enough PY: PY runs and is >= 3.12.
new_enough() {
  "$1" -c 'import sys; sys.exit(sys.version_info < (3, 12))' 2>/dev/null
}

find_python() {
  local c
  for c in "${CONFORM_PYTHON:-}" "$(command -v python3.13 || true)" "$(command -v python3.12 || true)" \
           $(ls -d "${PYENV_ROOT:-$HOME/.pyenv}"/versions/3.1[2-9]*/bin/python 2>/dev/null | sort -rV) \
           "$prefix/bin/python3.13"; do
    if [ -n "$c" ] && [ -x "$c" ] && new_enough "$c"; then
      echo "$c"
      return 0
    fi
  done
  return 1
}

# build_python: CPython from Debian trixie's python3.13 source package.
build_python() {
  local tmp
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' RETURN
  mkdir -p "$tmp/lists/partial" "$tmp/cache/archives/partial"
  echo "deb-src http://deb.debian.org/debian trixie main" >"$tmp/sources.list"
  local apt=(-o "Dir::Etc::SourceList=$tmp/sources.list" -o Dir::Etc::SourceParts=/dev/null -o APT::Sandbox::User=root
             -o "Dir::State::Lists=$tmp/lists" -o "Dir::Cache=$tmp/cache")
  echo "install.sh: no Python >= 3.12 here; building CPython 3.13 from Debian's source package into $prefix" >&2
  apt-get "${apt[@]}" -qq update
  (cd "$tmp" && apt-get "${apt[@]}" -qq source --download-only python3.13)
  local orig
  orig=$(ls "$tmp"/python3.13_*.orig.tar.xz)
  tar -xJf "$orig" -C "$tmp"
  local src
  src=$(ls -d "$tmp"/Python-3.13*/)
  (cd "$src" && ./configure --prefix="$prefix" >"$tmp/configure.log" 2>&1 \
     && make -j"$(nproc)" >"$tmp/make.log" 2>&1 && make install >"$tmp/install.log" 2>&1) || {
    tail -30 "$tmp"/*.log >&2
    echo "install.sh: building CPython failed" >&2
    exit 1
  }
}

py=$(find_python || true)
if [ -z "$py" ]; then
  if [ "$build" = 1 ]; then
    build_python
    py=$(find_python)
  else
    echo "install.sh: no Python >= 3.12 (resonate-sdk 0.8.1 needs one); rerun with --build-python, or set CONFORM_PYTHON (README.md, 'Python')" >&2
    exit 3
  fi
fi

stamp="$("$py" -c 'import sys; print(sys.version)') $(sha256sum "$here/requirements.txt" | cut -d' ' -f1)"
if [ -f "$here/.venv/.installed" ] && [ "$(cat "$here/.venv/.installed")" = "$stamp" ]; then
  exit 0
fi
rm -rf "$here/.venv"
"$py" -m venv --without-pip "$here/.venv"
"$here/.venv/bin/python" -m ensurepip --upgrade >/dev/null 2>&1 || "$py" -m pip --version >/dev/null
if [ ! -x "$here/.venv/bin/pip" ]; then
  # an interpreter built: bootstrap pip from the machine's own python3
  python3 -m pip download -q --no-deps -d "$here/.venv/wheels" pip
  "$here/.venv/bin/python" "$(ls "$here"/.venv/wheels/pip-*.whl)/pip" install -q --no-index "$(ls "$here"/.venv/wheels/pip-*.whl)"
fi
"$here/.venv/bin/python" -m pip install -q --disable-pip-version-check --require-hashes --no-deps -r "$here/requirements.txt"
echo "$stamp" >"$here/.venv/.installed"
echo "install.sh: scripts/py-server/.venv on $("$here/.venv/bin/python" --version)" >&2
