"""`scripts/run.sh` stops everything it started when it is told to: a plain `kill` (TERM) and Ctrl-C (INT)."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import time
import urllib.request
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.integration


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _session(sid: int) -> list[tuple[int, str]]:
    """(pid, command) of every live process of session `sid` (zombies are gone already)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            command = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2:].split()
        if int(fields[3]) == sid and fields[0] != "Z":
            found.append((int(entry.name), command.strip()))
    return found


@pytest.mark.parametrize("sent", [signal.SIGTERM, signal.SIGINT])
def test_run_sh_leaves_no_process_after_it_is_stopped(tmp_path, sent):
    port = _free_port()
    env = {**os.environ, "PORT": str(port), "DATABASE_URL": f"sqlite:///{tmp_path / 'demo.sqlite3'}",
           "CELERY_BROKER_URL": "", "SPANJUDGE_SIMULATOR": "1", "HOME": str(tmp_path)}
    env.pop("DJANGO_SETTINGS_MODULE", None)
    log = (tmp_path / "run.log").open("w")
    script = subprocess.Popen(["bash", "scripts/run.sh"], cwd=REPO, env=env, stdout=log, stderr=subprocess.STDOUT,
                              start_new_session=True)
    try:
        deadline = time.monotonic() + 600
        while time.monotonic() < deadline:
            assert script.poll() is None, (tmp_path / "run.log").read_text()[-2000:]
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/accounts/login/", timeout=5)
                break
            except OSError:
                time.sleep(1)
        else:
            pytest.fail("the app did not answer within 10 minutes")
        started = _session(script.pid)
        commands = " | ".join(command for _, command in started)
        # the app, the worker and the simulated server are all there before the signal
        assert "runserver" in commands and "celery" in commands and "tests.ollama_sim" in commands, commands
        script.send_signal(sent)
        assert script.wait(timeout=60) != 0  # it ends (130 or 143), and says it was stopped
        time.sleep(0.5)
        assert _session(script.pid) == []
        with socket.socket() as sock:
            assert sock.connect_ex(("127.0.0.1", port)) != 0  # nobody listens on the app's port any more
    finally:
        log.close()
        if script.poll() is None:
            os.killpg(script.pid, signal.SIGKILL)
        for pid, _ in _session(script.pid):
            os.kill(pid, signal.SIGKILL)
