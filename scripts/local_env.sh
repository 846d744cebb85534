#!/usr/bin/env bash
# Write var/local.env on first start: a generated DJANGO_SECRET_KEY that config/settings.py reads, so that the
# app and every command typed in a second terminal share one key without exporting anything. Never
# overwrites an existing file (sessions would end); delete it to get a new key. Not for production
# (scripts/serve.sh wants DJANGO_SECRET_KEY from the environment).
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p var
if [ ! -f var/local.env ]; then
  umask 077
  key="$("${PYTHON:-python3}" -c 'import secrets; print(secrets.token_urlsafe(50))')"
  printf '# Written by scripts/run.sh on first start; read by config/settings.py. Exported variables win.\nDJANGO_SECRET_KEY=%s\n' "$key" > var/local.env
  echo "  Wrote var/local.env (a generated secret key for this checkout)."
fi
