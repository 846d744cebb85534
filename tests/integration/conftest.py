"""Real services for integration tests: a Celery worker process on Redis against the test database."""

from __future__ import annotations

import os
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from django.db import connection

from tests.conftest import REPO


def _database_url() -> str:
    s = connection.settings_dict
    host = s.get("HOST") or "127.0.0.1"
    port = s.get("PORT") or 5432
    user = s.get("USER") or "postgres"
    return f"postgres://{user}@{host}:{port}/{s['NAME']}"


class WorkerProcess:
    """A `celery worker` subprocess consuming one private queue; its log is kept for assertions."""

    def __init__(self, queue: str, log: Path, env: dict[str, str], concurrency: int = 2) -> None:
        self.queue = queue
        self.log = log
        self.env = env
        self.concurrency = concurrency
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self, timeout: float = 60) -> WorkerProcess:
        handle = self.log.open("ab")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "celery", "-A", "config", "worker", "-Q", self.queue, "--pool=threads",
             f"--concurrency={self.concurrency}", "--loglevel=INFO", "--without-gossip", "--without-mingle",
             "--without-heartbeat", "-n", f"{self.queue}@%h"],
            cwd=REPO, env=self.env, stdout=handle, stderr=subprocess.STDOUT,
        )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"worker exited early:\n{self.log.read_text()[-3000:]}")
            if "ready." in self.log.read_text(errors="replace"):
                return self
            time.sleep(0.2)
        raise RuntimeError(f"worker not ready after {timeout}s:\n{self.log.read_text()[-3000:]}")

    def kill(self) -> None:
        """SIGKILL: the worker gets no chance to clean up (what a crashed machine looks like)."""
        if self.proc and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(10)

    def stop(self) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                self.kill()


@pytest.fixture
def celery_worker_factory(transactional_db, tmp_path) -> Iterator[Callable[..., WorkerProcess]]:
    broker = os.environ.get("CELERY_BROKER_URL", "")
    if not broker.startswith("redis://"):
        pytest.fail("integration tests need CELERY_BROKER_URL=redis://... (scripts/test.sh sets it)")
    if connection.vendor != "postgresql":
        pytest.fail("integration tests need DATABASE_URL pointing at PostgreSQL (scripts/test.sh sets it)")
    workers: list[WorkerProcess] = []
    queue = f"test-{uuid.uuid4().hex[:10]}"

    def make(extra_env: dict[str, str] | None = None, concurrency: int = 2) -> WorkerProcess:
        env = dict(os.environ)
        env.update({"DATABASE_URL": _database_url(), "CELERY_BROKER_URL": broker, "CELERY_QUEUE": queue,
                    "DATABASE_CONN_MAX_AGE": "0", "PYTHONUNBUFFERED": "1",
                    # the worker opens every job's servers through the allowlist; simulated ones use random ports
                    "LLM_ALLOW_LOOPBACK": "1"})
        env.update(extra_env or {})
        worker = WorkerProcess(queue, tmp_path / f"worker-{len(workers)}.log", env, concurrency)
        workers.append(worker)
        return worker

    make.queue = queue  # type: ignore[attr-defined]
    yield make
    for worker in workers:
        worker.stop()


def wait_for(predicate: Callable[[], bool], timeout: float = 30, interval: float = 0.2) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(interval)
    return predicate()
