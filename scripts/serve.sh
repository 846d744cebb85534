#!/usr/bin/env bash
# Serve spanjudge as in production: migrate, collect static files, start a Celery worker, then gunicorn,
# with DJANGO_DEBUG=false. Needs DJANGO_SECRET_KEY, DATABASE_URL (PostgreSQL) and CELERY_BROKER_URL (Redis);
# see README, "Production", for the HTTPS variables to set behind a proxy.
set -euo pipefail
cd "$(dirname "$0")/.."
export DJANGO_DEBUG=false
: "${DJANGO_SECRET_KEY:?set DJANGO_SECRET_KEY (python -c 'import secrets; print(secrets.token_urlsafe(50))')}"
: "${DATABASE_URL:?set DATABASE_URL, e.g. postgres://spanjudge@127.0.0.1:5432/spanjudge}"
: "${CELERY_BROKER_URL:?set CELERY_BROKER_URL, e.g. redis://127.0.0.1:6379/0}"
[ -x .venv/bin/gunicorn ] || bash scripts/setup.sh run
mkdir -p var
.venv/bin/python manage.py migrate --noinput
.venv/bin/python manage.py collectstatic --noinput -v0
.venv/bin/python -m celery -A config worker --loglevel="${LOG_LEVEL:-INFO}" \
  --concurrency="${CELERY_CONCURRENCY:-2}" --pool=threads >> var/worker.log 2>&1 &
worker=$!
# Stop the worker with the server (warm shutdown: a running job pauses and is resumed by the next worker).
trap 'kill -TERM $worker 2>/dev/null || true; wait $worker 2>/dev/null || true' EXIT
echo "spanjudge: gunicorn on ${HOST:-127.0.0.1}:${PORT:-8000}, Celery worker pid $worker (log var/worker.log)"
.venv/bin/gunicorn config.wsgi:application -c config/gunicorn.py
