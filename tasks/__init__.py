"""Celery tasks: thin, idempotent wrappers around domain services (listed in CELERY_IMPORTS)."""
