"""scripts/serve.sh serves the app as production does: gunicorn with DEBUG off, static files, a Celery worker."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import time
import urllib.request

import pytest

from corpus.models import Dataset
from tasks.maintenance import ping_dataset
from tests import factories
from tests.conftest import REPO
from tests.integration.conftest import _database_url, wait_for

pytestmark = pytest.mark.integration


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _get(url: str) -> tuple[int, dict[str, str], str]:
    try:
        with urllib.request.urlopen(url, timeout=5) as resp:
            return resp.status, dict(resp.headers), resp.read().decode(errors="replace")
    except OSError:
        return 0, {}, ""


def test_serve_script_runs_gunicorn_and_a_worker_with_debug_off(transactional_db, tmp_path):
    port = _free_port()
    queue = f"serve-{port}"
    env = {k: v for k, v in os.environ.items() if k != "DJANGO_DEBUG"}
    env.update(DATABASE_URL=_database_url(), PORT=str(port), CELERY_QUEUE=queue, WEB_CONCURRENCY="1",
               DJANGO_SECRET_KEY="serve-test-" + "k" * 50, DATABASE_CONN_MAX_AGE="0")
    log = tmp_path / "serve.log"
    proc = subprocess.Popen(["bash", "scripts/serve.sh"], cwd=REPO, env=env, stdout=log.open("wb"),
                            stderr=subprocess.STDOUT, start_new_session=True)
    base = f"http://127.0.0.1:{port}"
    try:
        assert wait_for(lambda: _get(f"{base}/accounts/login/")[0] == 200, timeout=90), log.read_text()[-3000:]
        status, headers, body = _get(f"{base}/accounts/login/")
        assert "script-src 'self'" in headers.get("Content-Security-Policy", "")
        assert headers.get("X-Frame-Options") == "DENY"
        assert "gunicorn" in log.read_text()
        status, _, css = _get(f"{base}/static/css/app.css")  # collected and served by whitenoise
        assert status == 200 and ".htmx-indicator" in css
        status, _, body = _get(f"{base}/no-such-page/")
        assert "Traceback" not in body  # DEBUG is off: no debug page
        # The script's worker consumes the configured queue.
        dataset = factories.dataset("served")
        ping_dataset.apply_async((dataset.pk, "pinged via serve.sh"), queue=queue)
        assert wait_for(lambda: Dataset.objects.get(pk=dataset.pk).description == "pinged via serve.sh",
                        timeout=60), (REPO / "var" / "worker.log").read_text()[-3000:]
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
    time.sleep(0.5)
    assert _get(f"{base}/accounts/login/")[0] == 0  # stopped with the script
