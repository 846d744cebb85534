"""scripts/serve.sh by role: `migrate` once, `web` and `worker` refuse an unmigrated database naming the command to
run, a web host answers /healthz, a worker on its queues answers `celery inspect ping` and records its beat."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import uuid

import psycopg
import pytest
from django.db import connection

from corpus.models import Dataset
from jobs.models import WorkerBeat
from tasks.maintenance import ping_dataset
from tests import factories
from tests.conftest import REPO
from tests.integration.conftest import _database_url, wait_for
from tests.integration.test_serve import _free_port, _get

pytestmark = pytest.mark.integration

KEY = "roles-test-" + "k" * 50


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "DJANGO_DEBUG"}
    env.update(DJANGO_SECRET_KEY=KEY, DATABASE_CONN_MAX_AGE="0", WEB_CONCURRENCY="1", **extra)
    return env


def _serve(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["bash", "scripts/serve.sh", *args], cwd=REPO, env=env, capture_output=True, text=True,
                          timeout=300)


@pytest.fixture
def empty_database():
    """A database of its own with no table, on the tests' PostgreSQL server; dropped afterwards."""
    s = connection.settings_dict
    server = f"postgres://{s.get('USER') or 'postgres'}@{s.get('HOST') or '127.0.0.1'}:{s.get('PORT') or 5432}"
    name = f"{s['NAME']}_roles_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(f"{server}/postgres", autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    yield f"{server}/{name}"
    with psycopg.connect(f"{server}/postgres", autocommit=True) as admin:
        admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def test_serve_sh_refuses_an_unknown_role_or_argument():
    for args, says in ((["nonsense"], "usage: scripts/serve.sh"), (["web", "--queues", "a"], "unexpected arguments"),
                       (["worker", "--threads", "4"], "unknown argument --threads")):
        done = _serve(*args, env=_env())
        assert done.returncode == 2 and says in done.stderr, (args, done.stderr)


def test_web_and_worker_refuse_an_unmigrated_database_until_migrate_ran(empty_database):
    env = _env(DATABASE_URL=empty_database)
    for role in ("web", "worker"):
        refused = _serve(role, env=env)
        assert refused.returncode == 3, refused.stdout + refused.stderr
        assert "unapplied migrations; run 'scripts/serve.sh migrate'" in refused.stderr
        assert "gunicorn" not in refused.stdout and "queues" not in refused.stdout  # nothing was started
    down = _serve("web", env=_env(DATABASE_URL=f"postgres://postgres@127.0.0.1:{_free_port()}/none"))
    assert down.returncode == 3 and "cannot check the migrations" in down.stderr, down.stderr
    migrated = _serve("migrate", env=env)
    assert migrated.returncode == 0, migrated.stderr[-3000:]
    check = subprocess.run([sys.executable, "manage.py", "migrate", "--check"], cwd=REPO, env=env,
                           capture_output=True, text=True, timeout=120)
    assert check.returncode == 0, check.stdout + check.stderr  # what web and worker check before they start


def test_web_role_answers_healthz_and_worker_role_consumes_its_queues_and_answers_ping(transactional_db, tmp_path):
    port = _free_port()
    queues = [f"roles-a-{port}", f"roles-b-{port}"]
    env = _env(DATABASE_URL=_database_url(), PORT=str(port), CELERY_QUEUE=queues[0])
    logs = {role: (tmp_path / f"{role}.log").open("wb") for role in ("web", "worker")}
    web = subprocess.Popen(["bash", "scripts/serve.sh", "web"], cwd=REPO, env=env, stdout=logs["web"],
                           stderr=subprocess.STDOUT, start_new_session=True)
    worker = subprocess.Popen(["bash", "scripts/serve.sh", "worker", "--queues", ",".join(queues)], cwd=REPO,
                              env=env, stdout=logs["worker"], stderr=subprocess.STDOUT, start_new_session=True)
    try:
        url = f"http://127.0.0.1:{port}/healthz"
        assert wait_for(lambda: _get(url)[0] == 200, timeout=120), (tmp_path / "web.log").read_text()[-3000:]
        status, _, body = _get(url)
        assert '"database": "ok"' in body and '"broker": "ok"' in body
        assert wait_for(lambda: WorkerBeat.objects.filter(queues=sorted(queues)).exists(), timeout=120), \
            (tmp_path / "worker.log").read_text()[-3000:]
        hostname = WorkerBeat.objects.get(queues=sorted(queues)).hostname
        ping = subprocess.run([sys.executable, "-m", "celery", "-A", "config", "inspect", "ping", "-d", hostname,
                               "--timeout", "10"], cwd=REPO, env=env, capture_output=True, text=True, timeout=120)
        assert ping.returncode == 0 and f"{hostname}: OK" in ping.stdout and "pong" in ping.stdout, ping.stdout
        dataset = factories.dataset("served by role")
        ping_dataset.apply_async((dataset.pk, "second queue"), queue=queues[1])
        assert wait_for(lambda: Dataset.objects.get(pk=dataset.pk).description == "second queue", timeout=60)
    finally:
        for proc in (web, worker):
            os.killpg(proc.pid, signal.SIGTERM)
        for proc in (web, worker):
            try:
                proc.wait(30)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
    assert _get(url)[0] == 0  # the web host stopped with its script
