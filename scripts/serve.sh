#!/usr/bin/env bash
# Serve spanjudge as in production, with DJANGO_DEBUG=false, in one of four roles:
#   scripts/serve.sh                      all in one: migrate, collect static files, a Celery worker and gunicorn
#   scripts/serve.sh migrate              one-off: apply the migrations (run it once per release, from one host)
#   scripts/serve.sh web                  collect static files and run gunicorn (a web host behind the proxy)
#   scripts/serve.sh worker [--queues Q]  a Celery worker on the queues Q (comma-separated; default CELERY_QUEUE)
# web and worker refuse to start while a migration is unapplied: two hosts starting at once must not race on
# `migrate`. Needs DJANGO_SECRET_KEY, DATABASE_URL (PostgreSQL) and CELERY_BROKER_URL (Redis); see
# docs/guides/production.md for the HTTPS variables to set behind a proxy and for the multi-host set-up.
set -euo pipefail
cd "$(dirname "$0")/.."
role="${1:-all}"
[ $# -gt 0 ] && shift
queues="${CELERY_QUEUE:-spanjudge}"
case "$role" in
  all|migrate|web) [ $# -eq 0 ] || { echo "serve.sh $role: unexpected arguments: $*" >&2; exit 2; } ;;
  worker)
    while [ $# -gt 0 ]; do
      case "$1" in
        --queues) [ $# -ge 2 ] || { echo "serve.sh worker: --queues needs a value" >&2; exit 2; }
                  queues="$2"; shift 2 ;;
        --queues=*) queues="${1#--queues=}"; shift ;;
        *) echo "serve.sh worker: unknown argument $1 (only --queues Q1,Q2)" >&2; exit 2 ;;
      esac
    done
    [ -n "$queues" ] || { echo "serve.sh worker: --queues is empty" >&2; exit 2; } ;;
  *) echo "usage: scripts/serve.sh [migrate | web | worker [--queues Q1,Q2]]   (no role: all in one)" >&2; exit 2 ;;
esac
export DJANGO_DEBUG=false
: "${DJANGO_SECRET_KEY:?set DJANGO_SECRET_KEY (python -c 'import secrets; print(secrets.token_urlsafe(50))')}"
: "${DATABASE_URL:?set DATABASE_URL, e.g. postgres://spanjudge@127.0.0.1:5432/spanjudge}"
: "${CELERY_BROKER_URL:?set CELERY_BROKER_URL, e.g. redis://127.0.0.1:6379/0}"
[ -x .venv/bin/gunicorn ] || bash scripts/setup.sh run
# Per host: the worker log lives in this host's SPANJUDGE_VAR_DIR (two workers never share one file).
var_dir="${SPANJUDGE_VAR_DIR:-var}"
mkdir -p "$var_dir"

# Refuse to start a web host or a worker on a schema it does not match, naming the command that fixes it.
require_migrated() {
  local out
  if out="$(.venv/bin/python manage.py migrate --check --noinput 2>&1)"; then
    return 0
  fi
  if .venv/bin/python manage.py showmigrations --plan > /dev/null 2>&1; then
    echo "serve.sh $role: the database has unapplied migrations; run 'scripts/serve.sh migrate' once (from one" \
         "host), then start this $role again." >&2
  else
    echo "serve.sh $role: cannot check the migrations: the database or the settings are not usable:" >&2
    echo "$out" | tail -n 3 >&2
  fi
  exit 3
}

# The Celery worker, restarted whenever it exits: celery/kombu can give up on a lost Redis connection
# ("Unrecoverable error"); a job it was running is taken over by the new worker once its heartbeat is stale.
# It answers `celery -A config inspect ping` and records a beat the admins' home page reads.
supervise_worker() {
  while true; do
    .venv/bin/python -m celery -A config worker --loglevel="${LOG_LEVEL:-INFO}" -Q "$queues" \
      --concurrency="${CELERY_CONCURRENCY:-2}" --pool=threads >> "$var_dir/worker.log" 2>&1 &
    child=$!
    trap 'kill -TERM $child 2>/dev/null; wait $child 2>/dev/null; exit 0' TERM
    wait $child || true
    echo "$(date -u +%FT%TZ) serve.sh: the Celery worker exited; restarting it in 2 s" >> "$var_dir/worker.log"
    sleep 2
  done
}

case "$role" in
  migrate)
    exec .venv/bin/python manage.py migrate --noinput ;;
  web)
    require_migrated
    .venv/bin/python manage.py collectstatic --noinput -v0
    echo "spanjudge web: gunicorn on ${HOST:-127.0.0.1}:${PORT:-8000}"
    exec .venv/bin/gunicorn config.wsgi:application -c config/gunicorn.py ;;
  worker)
    require_migrated
    supervise_worker &
    worker=$!
    stop() { trap - INT TERM EXIT; kill -TERM "$worker" 2>/dev/null || true; wait "$worker" 2>/dev/null || true; }
    trap stop INT TERM EXIT
    echo "spanjudge worker: queues $queues (pid $worker), log $var_dir/worker.log"
    wait "$worker" ;;
  all)
    .venv/bin/python manage.py migrate --noinput
    .venv/bin/python manage.py collectstatic --noinput -v0
    supervise_worker &
    worker=$!
    .venv/bin/gunicorn config.wsgi:application -c config/gunicorn.py &
    web=$!
    # Ctrl-C or SIGTERM stops both (gunicorn finishes its requests; the worker's running job pauses and is
    # resumed by the next worker). The server runs in the background so that the trap fires at once.
    stop() { trap - INT TERM EXIT; kill -TERM "$web" "$worker" 2>/dev/null || true; wait "$web" "$worker" 2>/dev/null || true; }
    trap stop INT TERM EXIT
    echo "spanjudge: gunicorn on ${HOST:-127.0.0.1}:${PORT:-8000} (pid $web), Celery worker log $var_dir/worker.log"
    wait "$web" ;;
esac
