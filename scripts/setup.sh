#!/usr/bin/env bash
# Set up everything the project needs on a fresh machine (idempotent).
#   scripts/setup.sh run   -> a virtualenv with the runtime packages and the docs' (requirements-docs.txt)
#                             (needs Python 3.11+ and PyPI access)
#   scripts/setup.sh test  -> plus test tools, Debian's chromium, pdflatex (texlive-latex-recommended),
#                             pdftoppm, pdfinfo and pdftotext (poppler-utils), and
#                             PostgreSQL + Redis started if down
#                             (needs apt and root or sudo for the Debian packages)
# PYTHON names the interpreter that creates .venv (default python3).
set -euo pipefail
mode="${1:-run}"
cd "$(dirname "$0")/.."

say() { printf '\033[1m==> %s\033[0m\n' "$*"; }
as_root() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi; }

apt_packages=()
if [ "$mode" = "test" ]; then
  [ -x /usr/bin/chromium ] || apt_packages+=(chromium)
  command -v pg_ctlcluster >/dev/null 2>&1 || apt_packages+=(postgresql)
  command -v redis-server >/dev/null 2>&1 || apt_packages+=(redis-server)
  # the study report's LaTeX is compiled in the tests: pdflatex, booktabs, geometry and float
  { command -v pdflatex && kpsewhich booktabs.sty; } >/dev/null 2>&1 || apt_packages+=(texlive-latex-recommended)
  # ... and its pages rendered, measured and read back (the publishable-PDF test)
  { command -v pdftoppm && command -v pdfinfo && command -v pdftotext; } >/dev/null 2>&1 || apt_packages+=(poppler-utils)
  # the multi-host test builds its hosts as network namespaces on a bridge
  command -v ip >/dev/null 2>&1 || apt_packages+=(iproute2)
fi
if [ "${#apt_packages[@]}" -gt 0 ]; then
  say "Installing Debian packages: ${apt_packages[*]}"
  as_root apt-get update -qq
  DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -qq "${apt_packages[@]}" >/dev/null
fi

PY="${PYTHON:-python3}"
if [ ! -x .venv/bin/python ]; then
  if ! "$PY" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
    echo "spanjudge needs Python 3.11 or newer; '$PY' is $("$PY" --version 2>&1 || echo missing)." >&2
    echo "Point PYTHON at one, e.g. PYTHON=python3.11 bash scripts/$([ "$mode" = test ] && echo test || echo run).sh" >&2
    exit 1
  fi
  say "Creating .venv"
  "$PY" -m venv .venv
fi
req=requirements.txt
[ "$mode" = "test" ] && req=requirements-dev.txt
hash="$(sha1sum requirements.txt requirements-dev.txt requirements-hf.txt requirements-docs.txt | sha1sum | cut -c1-12)"
stamp=".venv/.installed-$hash-$mode"
# requirements-dev.txt includes requirements.txt, so a test install also satisfies a run.
if [ ! -f "$stamp" ] && [ ! -f ".venv/.installed-$hash-test" ]; then
  say "Installing Python packages ($req)"
  .venv/bin/pip install -q --upgrade pip >/dev/null
  # torch's CPU build from a local wheel when the machine has one (a plain `pip install torch` may pull CUDA)
  if [ "$mode" = "test" ]; then
    cpu_torch="$(ls /opt/wheels/torch-2.13.0+cpu-*.whl 2>/dev/null | head -n 1 || true)"
    [ -n "$cpu_torch" ] && .venv/bin/pip install -q "$cpu_torch"
  fi
  .venv/bin/pip install -q -r "$req" -r requirements-docs.txt
  touch "$stamp"
fi

if [ "$mode" = "test" ]; then
  if ! pg_isready -q -h 127.0.0.1 -p 5432 2>/dev/null; then
    say "Starting PostgreSQL"
    as_root pg_ctlcluster --skip-systemctl-redirect "$(ls /etc/postgresql | head -n1)" main start
    for _ in $(seq 1 30); do pg_isready -q -h 127.0.0.1 -p 5432 && break; sleep 1; done
  fi
  if ! (redis-cli -h 127.0.0.1 -p 6379 ping 2>/dev/null | grep -q PONG); then
    say "Starting Redis"
    mkdir -p /var/lib/redis /var/log/redis 2>/dev/null || true
    as_root redis-server --daemonize yes --bind 127.0.0.1 -::1 --port 6379 --save "" --appendonly no \
      --dir /var/lib/redis --logfile /var/log/redis/ci.log
    for _ in $(seq 1 30); do redis-cli -h 127.0.0.1 ping 2>/dev/null | grep -q PONG && break; sleep 1; done
  fi
fi
say "Set-up done ($mode)"
