#!/usr/bin/env bash
# Set everything up and run the app with the demo dataset. Embedded defaults: SQLite and a
# file-system Celery broker when DATABASE_URL / CELERY_BROKER_URL are not set, so no server is needed.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh run
export DJANGO_DEBUG="${DJANGO_DEBUG:-true}"
HOST="${HOST:-127.0.0.1}"
PORT="${PORT:-8000}"
mkdir -p var
.venv/bin/python manage.py migrate --noinput
.venv/bin/python manage.py load_demo
.venv/bin/python -m celery -A config worker --loglevel=WARNING --concurrency=2 --pool=threads \
  > var/worker.log 2>&1 &
worker=$!
trap 'kill $worker 2>/dev/null || true' EXIT
echo
echo "  spanjudge is running at  http://$HOST:$PORT/"
echo "  Demo logins (password: demo-pass-2026):"
echo "    admin       - admin (everything, incl. /admin/)"
echo "    researcher  - researcher (datasets, runs, analytics)"
echo "    expert1, expert2 - annotators (their assignments only)"
echo "  Celery worker log: var/worker.log     Stop with Ctrl-C."
echo
.venv/bin/python manage.py runserver "$HOST:$PORT"
