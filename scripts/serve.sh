#!/usr/bin/env bash
# Serve spanjudge as in production: migrate, collect static files, start a Celery worker, then gunicorn,
# with DJANGO_DEBUG=false. Needs DJANGO_SECRET_KEY, DATABASE_URL (PostgreSQL) and CELERY_BROKER_URL (Redis);
# see docs/guides/production.md for the HTTPS variables to set behind a proxy.
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
# The Celery worker, restarted whenever it exits: celery/kombu can give up on a lost Redis connection
# ("Unrecoverable error"); a job it was running is taken over by the new worker once its heartbeat is stale.
supervise_worker() {
  while true; do
    .venv/bin/python -m celery -A config worker --loglevel="${LOG_LEVEL:-INFO}" \
      --concurrency="${CELERY_CONCURRENCY:-2}" --pool=threads >> var/worker.log 2>&1 &
    child=$!
    trap 'kill -TERM $child 2>/dev/null; wait $child 2>/dev/null; exit 0' TERM
    wait $child || true
    echo "$(date -u +%FT%TZ) serve.sh: the Celery worker exited; restarting it in 2 s" >> var/worker.log
    sleep 2
  done
}
supervise_worker &
worker=$!
.venv/bin/gunicorn config.wsgi:application -c config/gunicorn.py &
web=$!
# Ctrl-C or SIGTERM stops both (gunicorn finishes its requests; the worker's running job pauses and is
# resumed by the next worker). The server runs in the background so that the trap fires at once.
stop() { trap - INT TERM EXIT; kill -TERM "$web" "$worker" 2>/dev/null || true; wait "$web" "$worker" 2>/dev/null || true; }
trap stop INT TERM EXIT
echo "spanjudge: gunicorn on ${HOST:-127.0.0.1}:${PORT:-8000} (pid $web), Celery worker log var/worker.log"
wait "$web"
