#!/usr/bin/env bash
# Install the resonate-pg shim: a venv in scripts/pg-server/.venv with
# requirements.txt (psycopg with its own libpq, hash-checked) on the
# machine's python3 (3.10 or newer). The PostgreSQL server binaries come from
# Debian (`apt-get install postgresql-15`; this machine kind has them), and
# resonate.sql from your own resonate-pg checkout (README.md, "Install").
#
#   scripts/pg-server/install.sh
#
# An up-to-date venv (same interpreter, same requirements.txt) is left alone.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
py=${CONFORM_PG_PYTHON:-python3}
if ! "$py" -c 'import sys; sys.exit(sys.version_info < (3, 10))' 2>/dev/null; then
  echo "install.sh: $py is not a Python >= 3.10 (psycopg 3.3 needs one); set CONFORM_PG_PYTHON" >&2
  exit 1
fi
stamp="$("$py" -c 'import sys; print(sys.version)') $(sha256sum "$here/requirements.txt" | cut -d' ' -f1)"
if [ -f "$here/.venv/.installed" ] && [ "$(cat "$here/.venv/.installed")" = "$stamp" ]; then
  exit 0
fi
rm -rf "$here/.venv"
"$py" -m venv "$here/.venv"
"$here/.venv/bin/python" -m pip install -q --disable-pip-version-check --require-hashes --no-deps -r "$here/requirements.txt"
echo "$stamp" >"$here/.venv/.installed"
echo "install.sh: scripts/pg-server/.venv on $("$here/.venv/bin/python" --version)" >&2
