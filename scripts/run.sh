#!/usr/bin/env bash
# Set everything up and run the app with the demo dataset. Embedded defaults: SQLite and a
# file-system Celery broker when DATABASE_URL / CELERY_BROKER_URL are not set, so no server is needed.
#   HOST    address to listen on (default 127.0.0.1; 0.0.0.0 for every interface)
#   PORT    port to listen on (default 8000)
#   PYTHON  the interpreter that creates .venv on the first run (default python3; 3.11 or newer)
set -euo pipefail
cd "$(dirname "$0")/.."
export DJANGO_DEBUG="${DJANGO_DEBUG:-true}"
HOST="${HOST:-127.0.0.1}"
PORT="${PORT:-8000}"

# Refuse a taken port before anything else, and say what to do, instead of printing the banner first.
port_free() {
  "${PYTHON:-python3}" - "$HOST" "$PORT" <<'EOF'
import socket, sys

host, port = sys.argv[1].strip("[]"), int(sys.argv[2])
family = socket.AF_INET6 if ":" in host else socket.AF_INET
with socket.socket(family, socket.SOCK_STREAM) as sock:
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as runserver does: TIME_WAIT is no conflict
    try:
        sock.bind((host, port))
    except OSError as exc:
        sys.exit(f"  Port {port} on {host} is taken ({exc.strerror}).")
EOF
}
check_port() {
  if ! port_free; then
    echo "  Another program (perhaps another spanjudge) listens there. Stop it, or pick another port:" >&2
    echo "    PORT=$((PORT + 1)) bash scripts/run.sh" >&2
    exit 1
  fi
}
check_port

bash scripts/setup.sh run
mkdir -p var
bash scripts/local_env.sh  # a generated secret key in var/local.env, shared with commands in other terminals
.venv/bin/python manage.py migrate --noinput
demo="$(.venv/bin/python manage.py load_demo)"
# The documentation, served by the app at /docs/ (a failed build does not keep the app from starting).
if NO_MKDOCS_2_WARNING=1 .venv/bin/mkdocs build --quiet --site-dir var/site > var/docs-build.log 2>&1; then
  docs="http://$HOST:$PORT/docs/"
else
  docs="the docs/ folder (the site did not build: var/docs-build.log)"
fi
.venv/bin/python -m celery -A config worker --loglevel=WARNING --concurrency=2 --pool=threads \
  > var/worker.log 2>&1 &
worker=$!
trap 'kill $worker 2>/dev/null || true' EXIT
check_port  # again: something may have taken it while we set up
echo
echo "  spanjudge is running at  http://$HOST:$PORT/"
echo "  Demo logins (password: demo-pass-2026):"
echo "    admin       - admin (everything, incl. /admin/)"
echo "    researcher  - researcher (datasets, runs, analytics)"
echo "    expert1, expert2 - annotators (their assignments only)"
echo "$demo" | sed 's/^/  /'
echo "  Documentation: $docs"
echo "  Next: ten minutes with the demo (README.md), then a first run on your data (the docs' Getting started)."
echo "  Celery worker log: var/worker.log     Stop with Ctrl-C."
echo
# --noreload: one server process instead of a watcher plus a server (half the memory, one start-up log);
# restart the script after editing code.
.venv/bin/python manage.py runserver --noreload "$HOST:$PORT"
