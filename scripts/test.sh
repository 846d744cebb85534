#!/usr/bin/env bash
# Set everything up and run the whole test suite on PostgreSQL + Redis (what CI runs).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh test
export DATABASE_URL="${DATABASE_URL:-postgres://postgres@127.0.0.1:5432/spanjudge}"
export CELERY_BROKER_URL="${CELERY_BROKER_URL:-redis://127.0.0.1:6379/15}"
export DJANGO_SETTINGS_MODULE=config.settings
echo "==> ruff"
.venv/bin/ruff check .
echo "==> import-linter (layers: config > tasks > analytics | dhp | comparison > studies > quality > annotator > evaluation > corpus > accounts > jobs)"
.venv/bin/lint-imports
echo "==> docs (mkdocs build --strict: a broken link, a missing page or an undocumented setting fails it)"
NO_MKDOCS_2_WARNING=1 .venv/bin/mkdocs build --strict --quiet --site-dir var/site
echo "==> the real-model tier's server: llama-cpp-python with SmolLM2-135M (built once into ~/.cache/spanjudge, then reused)"
# Its tests (pytest -m real_model) start the server themselves; preparing it here keeps the one-off build apart from
# the tests' time, and says why they will skip when the build is impossible on this machine.
started=$SECONDS
bash scripts/small_model.sh prepare > /dev/null || echo "    (the real_model tests will skip: see the line above)"
echo "    ready in $((SECONDS - started)) s"
# The zero-setup default serves studies too: the fuzz of every write operation (JSON, raw bytes and form bodies),
# the raw-bytes probes and the form-body rules also run on SQLite (a fresh file; pytest-django's test database is
# in memory).
echo "==> API fuzz and raw-bytes probes on SQLite"
DATABASE_URL="sqlite:///$(mktemp -d)/fuzz.sqlite3" .venv/bin/pytest -q tests/test_api_schema.py \
  tests/studies/test_raw_bytes_pages.py tests/studies/test_bounded_input.py tests/config/test_clean_form_bodies.py
echo "==> pytest (DATABASE_URL=$DATABASE_URL, CELERY_BROKER_URL=$CELERY_BROKER_URL)"
exec .venv/bin/pytest "$@"
