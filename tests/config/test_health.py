"""/healthz answers 200 or 503 naming what failed; the admins' home says when no worker has answered; the
multi-host switch refuses every single-machine part by the setting to change."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import tempfile
from datetime import timedelta

import pytest
from django.utils import timezone

from analytics.models import ExportJob
from jobs.models import WorkerBeat
from jobs.worker import worker_beat
from tests import factories as make
from tests.conftest import REPO


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _manage(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    """manage.py in a fresh process with a var folder of its own (no local.env) and `env` over the environment."""
    base = {k: v for k, v in os.environ.items() if not k.startswith(("SPANJUDGE_", "DJANGO_DEBUG"))}
    with tempfile.TemporaryDirectory() as var:
        base.update(SPANJUDGE_VAR_DIR=var, DJANGO_DEBUG="true", **env)
        return subprocess.run([sys.executable, "manage.py", *args], cwd=REPO, env=base, capture_output=True,
                              text=True, timeout=120)


def test_healthz_answers_ok_without_a_login(client, db):
    answer = client.get("/healthz")
    assert answer.status_code == 200
    assert answer.json() == {"status": "ok", "checks": {"database": "ok", "broker": "ok"}}
    assert "no-cache" in answer["Cache-Control"]


def test_healthz_answers_503_naming_the_broker_when_it_is_down(client, db, settings):
    settings.CELERY_BROKER_URL = f"redis://127.0.0.1:{_free_port()}/0"  # nothing listens there
    answer = client.get("/healthz")
    assert answer.status_code == 503
    body = answer.json()
    assert body["status"] == "failed: broker" and body["checks"]["database"] == "ok"
    assert body["checks"]["broker"] != "ok"


def test_healthz_answers_503_naming_the_database_when_it_is_down():
    down = f"postgres://postgres@127.0.0.1:{_free_port()}/spanjudge"
    code = ("from django.test import Client; r = Client().get('/healthz'); "
            "import json; print(json.dumps({'status': r.status_code, 'body': r.json()}))")
    done = _manage("shell", "-c", code, DATABASE_URL=down)
    assert done.returncode == 0, done.stderr[-2000:]
    answer = json.loads(done.stdout.strip().splitlines()[-1])
    assert answer["status"] == 503 and answer["body"]["status"] == "failed: database"
    assert answer["body"]["checks"]["broker"] == "ok" and "OperationalError" in answer["body"]["checks"]["database"]


def test_admins_home_says_when_no_worker_of_its_queue_answered_and_what_waits(client, db, settings):
    settings.CELERY_TASK_DEFAULT_QUEUE = "q-home"
    settings.WORKER_SILENCE_MINUTES = 5
    dataset = make.dataset("waiting")
    for _ in range(2):
        ExportJob.objects.create(dataset=dataset, format="jsonl")
    client.force_login(make.user("boss", role="admin"))
    never = client.get("/").content.decode()
    assert 'id="worker-silence"' in never and "has ever answered" in never
    assert "Queued meanwhile: 2 export jobs." in never
    worker_beat("w1@elsewhere", ["another-queue"])  # a worker, but not on this queue
    assert 'id="worker-silence"' in client.get("/").content.decode()
    worker_beat("w2@cpu-host", ["q-home"])
    assert 'id="worker-silence"' not in client.get("/").content.decode()
    WorkerBeat.objects.filter(hostname="w2@cpu-host").update(beat_at=timezone.now() - timedelta(minutes=7))
    silent = client.get("/").content.decode()
    assert "w2@cpu-host" in silent and "has answered for 5 minutes" in silent
    client.force_login(make.user("rosa", role="researcher"))
    assert 'id="worker-silence"' not in client.get("/").content.decode()


POSTGRES = "postgres://postgres@127.0.0.1:5432/spanjudge"
REDIS = "redis://127.0.0.1:6379/0"


SQLITE = "sqlite:///" + str(REPO / "var" / "never-opened.sqlite3")


@pytest.mark.parametrize(("env", "setting", "part"), [
    ({"DATABASE_URL": SQLITE, "CELERY_BROKER_URL": REDIS}, "DATABASE_URL", "SQLite"),
    ({"DATABASE_URL": POSTGRES, "CELERY_BROKER_URL": ""}, "CELERY_BROKER_URL", "the file-system broker"),
    ({"DATABASE_URL": POSTGRES, "CELERY_BROKER_URL": REDIS, "SPANJUDGE_EXPORT_STORAGE": "folder"},
     "SPANJUDGE_EXPORT_STORAGE", "a local export folder"),
])
def test_the_multihost_switch_refuses_each_single_machine_part_by_name(env, setting, part):
    refused = _manage("check", SPANJUDGE_MULTIHOST="true", **env)
    assert refused.returncode != 0
    assert f"SPANJUDGE_MULTIHOST=true refuses {part}" in refused.stderr and setting in refused.stderr, refused.stderr
    assert "Traceback" not in refused.stderr


def test_the_multihost_switch_starts_with_shared_parts():
    for storage in ("database", "s3"):
        done = _manage("check", SPANJUDGE_MULTIHOST="true", DATABASE_URL=POSTGRES, CELERY_BROKER_URL=REDIS,
                       SPANJUDGE_EXPORT_STORAGE=storage, SPANJUDGE_EXPORT_S3_BUCKET="exports")
        assert done.returncode == 0, done.stderr[-2000:]
