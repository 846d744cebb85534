#!/usr/bin/env bash
# Back up the spanjudge database: one pg_dump file in PostgreSQL's custom format (compressed; pg_restore can
# restore all of it or single tables). Usage:
#   DATABASE_URL=postgres://USER@HOST:5432/spanjudge bash scripts/backup.sh [DIR]     (DIR defaults to var/backups)
# Prints the path of the dump. The dump is consistent (one snapshot) while the app keeps running.
set -euo pipefail
cd "$(dirname "$0")/.."
: "${DATABASE_URL:?set DATABASE_URL to the database to back up}"
case "$DATABASE_URL" in postgres://*|postgresql://*) ;; *) echo "backup.sh: DATABASE_URL is not PostgreSQL" >&2; exit 2;; esac
dir="${1:-${BACKUP_DIR:-var/backups}}"
mkdir -p "$dir"
name="$(basename "${DATABASE_URL%%\?*}")"
file="$dir/$name-$(date -u +%Y%m%dT%H%M%SZ).dump"
pg_dump --format=custom --no-owner --no-privileges --file="$file.partial" --dbname="$DATABASE_URL"
mv "$file.partial" "$file"  # a dump that is there is complete
echo "$file"
