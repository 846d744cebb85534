"""Shared by the benchmarks: make sure the PostgreSQL database named in DATABASE_URL exists."""

from __future__ import annotations

import os
import urllib.parse


def ensure_postgres_database(script: str) -> None:
    """Create DATABASE_URL's database if missing; refuse anything but PostgreSQL (the targets are about it)."""
    url = os.environ["DATABASE_URL"]
    if not url.startswith("postgres"):
        raise SystemExit(f"{script} measures PostgreSQL: set DATABASE_URL to a postgres:// URL")
    import psycopg

    parts = urllib.parse.urlparse(url)
    name = parts.path.lstrip("/")
    admin = parts._replace(path="/postgres").geturl()
    with psycopg.connect(admin, autocommit=True) as conn:
        if conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,)).fetchone() is None:
            conn.execute(f'CREATE DATABASE "{name}"')


def allow_servers(*urls: str) -> None:
    """List the bench's simulated servers in OLLAMA_URLS, as an admin lists real ones: jobs may use no other."""
    from django.conf import settings

    settings.OLLAMA_URLS = [*settings.OLLAMA_URLS, *(url for url in urls if url not in settings.OLLAMA_URLS)]
