#!/usr/bin/env bash
# Restore a dump made by scripts/backup.sh into a database that must be new and empty. Usage:
#   bash scripts/restore.sh DUMP postgres://USER@HOST:5432/NEW_DATABASE
# It creates NEW_DATABASE (refusing one that exists, so nothing is overwritten), restores into it in one
# transaction, and prints the row count of every table so they can be compared with the source
# (`bash scripts/restore.sh --counts URL` prints the same for any database). Then point DATABASE_URL at it.
set -euo pipefail
cd "$(dirname "$0")/.."
counts() {
  psql --dbname="$1" --no-psqlrc --quiet --tuples-only --no-align --field-separator=' ' --command="
    SELECT table_name, (xpath('/row/c/text()', query_to_xml(format('SELECT count(*) AS c FROM public.%I', table_name),
                                                                false, true, '')))[1]::text
    FROM information_schema.tables WHERE table_schema = 'public' AND table_type = 'BASE TABLE' ORDER BY table_name"
}
if [ "${1:-}" = "--counts" ]; then counts "${2:?database URL}"; exit 0; fi
dump="${1:?usage: restore.sh DUMP postgres://USER@HOST:PORT/NEW_DATABASE}"
target="${2:?usage: restore.sh DUMP postgres://USER@HOST:PORT/NEW_DATABASE}"
[ -f "$dump" ] || { echo "restore.sh: no such dump: $dump" >&2; exit 2; }
dbname="$(basename "${target%%\?*}")"
admin="${target%/*}/postgres"  # the maintenance database on the same server
if [ -n "$(psql --dbname="$admin" --no-psqlrc -tAc "SELECT 1 FROM pg_database WHERE datname = '$dbname'")" ]; then
  echo "restore.sh: database $dbname exists; restore into a new one (nothing was changed)" >&2
  exit 3
fi
psql --dbname="$admin" --no-psqlrc --quiet -c "CREATE DATABASE \"$dbname\""
pg_restore --no-owner --no-privileges --single-transaction --exit-on-error --dbname="$target" "$dump"
counts "$target"
