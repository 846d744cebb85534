"""Every role on a host of its own: network namespaces on one bridge stand in for the machines of a lab, with
PostgreSQL and Redis on `db`, gunicorn on `web1` and `web2`, Celery on `worker1` and `worker2`, the simulated Ollama
on `llm`; the work goes through both web hosts, and faults hit one host while the others carry on.

Needs root (`ip netns add`); runs only with SPANJUDGE_MULTIHOST_TESTS=1 (`.ci/run` sets it). Every address is on the
test's own bridge (10.231.N.0/24, N free at start), so the machine's PostgreSQL and Redis are never touched."""

from __future__ import annotations

import contextlib
import io
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import uuid
import zipfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace

import httpx
import psycopg
import pytest
from django.core.management import call_command
from django.test import override_settings

from annotator.selectors.spans import span_handle
from corpus.models import Dataset
from dhp.engine.kinds import parse_kinds
from dhp.models import DhpRun
from dhp.services.runs import dhp_create
from jobs.kinds import job_execute
from tests.conftest import REPO
from tests.integration.test_preannotation_worker import ANNOTATORS, SUPERVISOR, _ok_repeats, _repeated
from tests.ollama_sim.config import SimConfig, normalize_name
from tests.ollama_sim.stats import SimStats

pytestmark = [
    pytest.mark.integration,
    pytest.mark.multihost,
    pytest.mark.skipif(os.environ.get("SPANJUDGE_MULTIHOST_TESTS") != "1",
                       reason="builds network namespaces as root; set SPANJUDGE_MULTIHOST_TESTS=1 (CI does)"),
]

HOSTS = {"db": 2, "web1": 3, "web2": 4, "worker1": 5, "worker2": 6, "llm": 7}
KEY = "multihost-test-key-" + "m" * 50
PASSWORD = "multihost-pass-2026"
N_ITEMS = 8
ASPECTS = ("accuracy", "faithfulness")
DHP_MODEL = "judge:1b"
POSTGRES_BIN = Path("/usr/lib/postgresql")


def _sh(*cmd: str, check: bool = True, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run(cmd, capture_output=True, text=True, check=check, timeout=timeout)


def _free_subnet() -> int:
    """A third octet of 10.231.N.0/24 that no route of this machine uses (a crashed run's bridge keeps its own)."""
    routes = _sh("ip", "-4", "route", "show").stdout
    free = [n for n in range(1, 255) if f"10.231.{n}." not in routes]
    if not free:
        pytest.skip("no free 10.231.N.0/24 subnet on this machine")
    return random.choice(free)


def _pg_bin(name: str) -> str:
    found = shutil.which(name)
    if found:
        return found
    versions = sorted(POSTGRES_BIN.iterdir()) if POSTGRES_BIN.is_dir() else []
    if not versions:
        pytest.skip(f"no PostgreSQL server binaries ({name})")
    return str(versions[-1] / "bin" / name)


@dataclass
class Proc:
    """A process started in a host; its whole session is signalled (serve.sh and its children)."""

    name: str
    popen: subprocess.Popen[bytes]
    log: Path

    def alive(self) -> bool:
        return self.popen.poll() is None

    def signal(self, sig: int) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.popen.pid, sig)

    def stop(self, timeout: float = 20) -> None:
        if not self.alive():
            return
        self.signal(signal.SIGTERM)
        try:
            self.popen.wait(timeout)
        except subprocess.TimeoutExpired:
            self.signal(signal.SIGKILL)
            self.popen.wait(10)

    def kill(self) -> None:
        """SIGKILL of every process of the host's session: what a host that lost power looks like."""
        self.signal(signal.SIGKILL)
        self.popen.wait(10)

    def tail(self, n: int = 4000) -> str:
        return self.log.read_text(errors="replace")[-n:] if self.log.exists() else ""


@dataclass
class Lab:
    """The namespaces, their addresses and what runs in each; `close()` undoes all of it."""

    tag: str
    net: int
    root: Path
    pg_dir: Path
    procs: dict[str, Proc] = field(default_factory=dict)
    namespaces: list[str] = field(default_factory=list)
    bridge: str = ""
    tokens: dict[str, str] = field(default_factory=dict)
    t0: float = field(default_factory=time.monotonic)

    def ip(self, host: str) -> str:
        return f"10.231.{self.net}.{HOSTS[host]}"

    def ns(self, host: str) -> str:
        return f"sj{self.tag}-{host}"

    @property
    def database_url(self) -> str:
        return f"postgres://postgres@{self.ip('db')}:5432/spanjudge"

    @property
    def broker_url(self) -> str:
        return f"redis://{self.ip('db')}:6379/0"

    @property
    def llm_url(self) -> str:
        return f"http://{self.ip('llm')}:11434"

    def web(self, host: str) -> str:
        return f"http://{self.ip(host)}:8000"

    # --- hosts ---------------------------------------------------------------------------------------------

    def add_hosts(self) -> None:
        self.bridge = f"sjb{self.tag}"
        _sh("ip", "link", "add", self.bridge, "type", "bridge")
        # The bridge's own address lets this test (the root namespace) reach the hosts as a client does.
        _sh("ip", "addr", "add", f"10.231.{self.net}.1/24", "dev", self.bridge)
        _sh("ip", "link", "set", self.bridge, "up")
        for host, n in HOSTS.items():
            ns, veth = self.ns(host), f"sjv{self.tag}{n}"
            _sh("ip", "netns", "add", ns)
            self.namespaces.append(ns)
            _sh("ip", "link", "add", veth, "type", "veth", "peer", "name", "eth0", "netns", ns)
            _sh("ip", "link", "set", veth, "master", self.bridge, "up")
            _sh("ip", "-n", ns, "addr", "add", f"{self.ip(host)}/24", "dev", "eth0")
            _sh("ip", "-n", ns, "link", "set", "eth0", "up")
            _sh("ip", "-n", ns, "link", "set", "lo", "up")

    def start(self, host: str, name: str, cmd: list[str], env: dict[str, str] | None = None) -> Proc:
        """Run `cmd` on `host`: its network namespace and a hostname of its own (Celery names workers by it)."""
        log = self.root / f"{name}.log"
        wrapped = ["ip", "netns", "exec", self.ns(host), "unshare", "--uts", "sh", "-c",
                   'hostname "$0" && exec "$@"', f"{host}-{self.tag}", *cmd]
        with log.open("ab") as handle:
            popen = subprocess.Popen(wrapped, cwd=REPO, env=env, stdout=handle, stderr=subprocess.STDOUT,
                                     start_new_session=True)
        proc = Proc(name, popen, log)
        self.procs[name] = proc
        return proc

    def run_in(self, host: str, cmd: list[str], env: dict[str, str], timeout: float = 180) -> str:
        done = subprocess.run(["ip", "netns", "exec", self.ns(host), *cmd], cwd=REPO, env=env, capture_output=True,
                              text=True, timeout=timeout)
        assert done.returncode == 0, f"{cmd} on {host} failed:\n{done.stdout[-2000:]}\n{done.stderr[-3000:]}"
        return done.stdout

    # --- services on db and llm ----------------------------------------------------------------------------

    def start_postgres(self) -> None:
        data = self.pg_dir / "data"
        shutil.chown(self.pg_dir, "postgres", "postgres")
        _sh("runuser", "-u", "postgres", "--", _pg_bin("initdb"), "-D", str(data), "-A", "trust", "-U", "postgres",
            "--no-sync", timeout=120)
        with (data / "pg_hba.conf").open("a") as hba:
            hba.write(f"host all all 10.231.{self.net}.0/24 trust\n")
        opts = (f"-c listen_addresses={self.ip('db')} -c port=5432 -c unix_socket_directories={self.pg_dir} "
                "-c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200")
        _sh("ip", "netns", "exec", self.ns("db"), "runuser", "-u", "postgres", "--", _pg_bin("pg_ctl"), "-D",
            str(data), "-l", str(self.pg_dir / "postgres.log"), "-w", "-t", "60", "-o", opts, "start", timeout=90)
        with psycopg.connect(f"postgres://postgres@{self.ip('db')}:5432/postgres", autocommit=True) as admin:
            admin.execute("CREATE DATABASE spanjudge")

    def stop_postgres(self) -> None:
        data = self.pg_dir / "data"
        if (data / "postmaster.pid").exists():
            _sh("runuser", "-u", "postgres", "--", _pg_bin("pg_ctl"), "-D", str(data), "-m", "immediate", "stop",
                check=False, timeout=60)

    def start_redis(self) -> Proc:
        proc = self.start("db", "redis", ["redis-server", "--bind", self.ip("db"), "--port", "6379", "--save", "",
                                          "--appendonly", "no", "--protected-mode", "no"])
        assert _wait(lambda: _connects(self.ip("db"), 6379), 15), proc.tail()
        return proc

    def start_llm(self, config: SimConfig) -> Proc:
        path = self.root / "sim.json"
        path.write_text(json.dumps(config.to_dict()))
        proc = self.start("llm", "llm", [sys.executable, "-m", "tests.ollama_sim", "--host", self.ip("llm"),
                                         "--port", "11434", "--config", str(path)], env=_python_env())
        assert _wait(lambda: _connects(self.ip("llm"), 11434), 30), proc.tail()
        return proc

    def sim_stats(self) -> SimStats:
        return SimStats.from_dict(httpx.get(f"{self.llm_url}/_sim/stats", timeout=10).raise_for_status().json())

    # --- spanjudge roles -----------------------------------------------------------------------------------

    def env(self, host: str) -> dict[str, str]:
        """What the production guide says every host gets, plus this host's own var dir and address."""
        var = self.root / host / "var"
        var.mkdir(parents=True, exist_ok=True)
        return {**_python_env(), "HOME": str(self.root / host), "DJANGO_SECRET_KEY": KEY,
                "DATABASE_URL": self.database_url, "CELERY_BROKER_URL": self.broker_url,
                "CELERY_QUEUE": "spanjudge", "SPANJUDGE_MULTIHOST": "true", "SPANJUDGE_EXPORT_STORAGE": "database",
                "SPANJUDGE_VAR_DIR": str(var), "OLLAMA_URL": self.llm_url, "DATABASE_CONN_MAX_AGE": "0",
                "DJANGO_ALLOWED_HOSTS": f"{self.ip('web1')},{self.ip('web2')}",
                "HOST": self.ip(host), "PORT": "8000", "WEB_CONCURRENCY": "1", "GUNICORN_THREADS": "4",
                "GUNICORN_ACCESS_LOG": "", "CELERY_CONCURRENCY": "1", "RUN_STALE_SECONDS": "4",
                "JOB_SWEEP_SECONDS": "3", "LOG_LEVEL": "INFO"}

    def start_web(self, host: str, *, wait: bool = True) -> Proc:
        """web1 starts as `serve.sh web` does; web2 runs the same gunicorn without serve.sh's collectstatic, which
        would write the static files of this one checkout from two hosts at once (real hosts have their own)."""
        if host == "web1":
            cmd = ["bash", "scripts/serve.sh", "web"]
        else:
            cmd = [".venv/bin/gunicorn", "config.wsgi:application", "-c", "config/gunicorn.py"]
        proc = self.start(host, host, cmd, env={**self.env(host), "DJANGO_DEBUG": "false"})
        if wait:
            self.wait_web(host)
        return proc

    def wait_web(self, host: str) -> None:
        assert _wait(lambda: _status(f"{self.web(host)}/healthz") == 200, 180), self.procs[host].tail()

    def start_worker(self, host: str, *, wait: bool = True) -> Proc:
        log = self.root / host / "var" / "worker.log"
        log.unlink(missing_ok=True)
        proc = self.start(host, host, ["bash", "scripts/serve.sh", "worker"], env=self.env(host))
        if wait:
            self.wait_worker(host)
        return proc

    def wait_worker(self, host: str) -> None:
        log = self.root / host / "var" / "worker.log"
        assert _wait(lambda: "ready." in log.read_text(errors="replace"), 180), \
            self.procs[host].tail() + self.worker_log(host)[-3000:]

    def mark(self, what: str) -> None:
        """Time stamps of the set-up's steps, printed with -s (where a slow machine spends its minutes)."""
        print(f"[multihost {time.monotonic() - self.t0:6.1f} s] {what}", flush=True)

    def worker_log(self, host: str) -> str:
        log = self.root / host / "var" / "worker.log"
        return log.read_text(errors="replace") if log.exists() else ""

    def sql(self, query: str, *args: object) -> list[tuple]:
        with psycopg.connect(self.database_url, autocommit=True) as conn:
            return conn.execute(query, args).fetchall()

    def close(self) -> None:
        for proc in reversed(list(self.procs.values())):
            with contextlib.suppress(Exception):
                proc.stop(10)
        with contextlib.suppress(Exception):
            self.stop_postgres()
        for ns in self.namespaces:
            # Anything left in a namespace (a grandchild that left the session) dies with it.
            for pid in _sh("ip", "netns", "pids", ns, check=False).stdout.split():
                with contextlib.suppress(ProcessLookupError, ValueError):
                    os.kill(int(pid), signal.SIGKILL)
            _sh("ip", "netns", "del", ns, check=False)
        if self.bridge:
            _sh("ip", "link", "del", self.bridge, check=False)
        shutil.rmtree(self.pg_dir, ignore_errors=True)


def _python_env() -> dict[str, str]:
    keep = ("PATH", "LANG", "LC_ALL", "TMPDIR")
    return {**{k: os.environ[k] for k in keep if k in os.environ}, "PYTHONUNBUFFERED": "1",
            "PYTHONDONTWRITEBYTECODE": "1"}


_LAST_ERROR: list[str] = []  # what the last failed poll raised, for the assertion's message


def _wait(predicate: Callable[[], bool], timeout: float, interval: float = 0.25) -> bool:
    """Poll until `predicate` holds; a poll that raises (a host restarting) counts as not yet."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if predicate():
                return True
        except Exception as exc:  # noqa: BLE001 - kept for the message
            _LAST_ERROR[:] = [repr(exc)]
        time.sleep(interval)
    return False


def _connects(host: str, port: int) -> bool:
    import socket

    try:
        socket.create_connection((host, port), timeout=0.5).close()
        return True
    except OSError:
        return False


def _status(url: str) -> int:
    try:
        return httpx.get(url, timeout=5).status_code
    except httpx.HTTPError:
        return 0


def _namespaces_work() -> str:
    """Return why this machine cannot build namespaces, or ''."""
    if os.geteuid() != 0:
        return "network namespaces need root"
    for tool in ("ip", "unshare", "runuser", "redis-server"):
        if shutil.which(tool) is None:
            return f"needs {tool}"
    probe = f"sjprobe{uuid.uuid4().hex[:6]}"
    done = _sh("ip", "netns", "add", probe, check=False)
    if done.returncode != 0:
        return f"`ip netns add` fails here: {done.stderr.strip()}"
    _sh("ip", "netns", "del", probe, check=False)
    return ""


@pytest.fixture(scope="module")
def lab() -> Iterator[Lab]:
    why = _namespaces_work()
    if why:
        pytest.skip(why)
    tag = uuid.uuid4().hex[:5]
    root = Path(tempfile.mkdtemp(prefix=f"spanjudge-h66-{tag}-"))
    pg_dir = Path(tempfile.mkdtemp(prefix=f"spanjudge-h66-pg-{tag}-"))
    lab = Lab(tag=tag, net=_free_subnet(), root=root, pg_dir=pg_dir)
    try:
        lab.add_hosts()
        lab.start_postgres()
        lab.start_redis()
        lab.mark("db host up")
        lab.start_llm(SimConfig(models=[*ANNOTATORS, SUPERVISOR, DHP_MODEL], parallel=2, call_time=0.4,
                                swap_cost=0.05))
        lab.run_in("web1", ["bash", "scripts/serve.sh", "migrate"], lab.env("web1"), timeout=300)
        lab.mark("migrated")
        # All at once: on 2 cores the set-up is Django start-ups, and they overlap.
        lab.start_web("web1", wait=False)
        lab.start_web("web2", wait=False)
        lab.start_worker("worker1", wait=False)
        lab.start_worker("worker2", wait=False)
        _make_people(lab)
        for host in ("web1", "web2"):
            lab.wait_web(host)
        for host in ("worker1", "worker2"):
            lab.wait_worker(host)
        lab.mark("web hosts and workers up")
        yield lab
    finally:
        lab.close()
        shutil.rmtree(root, ignore_errors=True)


def _make_people(lab: Lab) -> None:
    """An admin and two experts with their API tokens, made by the management shell on web1 (as an admin would)."""
    code = (
        "from accounts.models import User\n"
        "from accounts.services.tokens import token_create\n"
        f"for name, role in (('rosa', 'admin'), ('expert1', 'annotator'), ('expert2', 'annotator')):\n"
        f"    user = User.objects.create_user(name, password='{PASSWORD}', role=role)\n"
        "    print('TOKEN', name, token_create(user=user))\n"
    )
    out = lab.run_in("web1", [".venv/bin/python", "manage.py", "shell", "-c", code], lab.env("web1"))
    lab.tokens = {line.split()[1]: line.split()[2] for line in out.splitlines() if line.startswith("TOKEN ")}
    assert set(lab.tokens) == {"rosa", "expert1", "expert2"}, out


class Api:
    """A client of one user that sends each request to the web host given (a proxy's choice, made by the test)."""

    def __init__(self, lab: Lab, user: str) -> None:
        self.lab = lab
        self.headers = {"Authorization": f"Bearer {lab.tokens[user]}"}

    def call(self, host: str, method: str, path: str, **kw) -> httpx.Response:
        return httpx.request(method, f"{self.lab.web(host)}/api{path}", headers=self.headers, timeout=60, **kw)

    def ok(self, host: str, method: str, path: str, status: int = 200, **kw) -> dict:
        answer = self.call(host, method, path, **kw)
        assert answer.status_code == status, f"{method} {path} on {host}: {answer.status_code} {answer.text[:800]}"
        return answer.json() if answer.content else {}


def _items(prefix: str) -> bytes:
    rows = [{"id": f"{prefix}{i}", "inputs": {"Data": f"team {i} | points {90 + i} | coach Rivera"},
             "outputs": {"Text": f"Team {i} scored {95 + i} points in a close game, and their coach praised the "
                                 "defence."}} for i in range(N_ITEMS)]
    return "".join(json.dumps(r) + "\n" for r in rows).encode()


def _import(api: Api, host: str, name: str, data: bytes, task: str = "data-to-text") -> int:
    made = api.ok(host, "POST", "/datasets/import", 201, files={"file": ("items.jsonl", data)},
                  data={"dataset": name, "task": task})
    assert made["created_items"] == N_ITEMS
    return made["dataset_id"]


def _wait_job(api: Api, path: str, timeout: float, hosts: tuple[str, ...] = ("web1", "web2")) -> dict:
    """Poll a job through the web hosts in turn until it is finished; return its last answer."""
    state: dict = {}

    def finished() -> bool:
        nonlocal state
        host = hosts[int(time.monotonic()) % len(hosts)]
        answer = api.call(host, "GET", path)
        if answer.status_code == 200:
            state = answer.json()
        return state.get("status") in {"done", "failed", "cancelled"}

    assert _wait(finished, timeout, interval=0.5), f"{path} did not finish: {state}"
    return state


def _holder(lab: Lab, run_id: int) -> str:
    """The worker host running the run: the one whose log names the Celery task that claimed it ('' before)."""
    rows = lab.sql("SELECT celery_task_id FROM evaluation_evaluatorrun WHERE source_id = %s", run_id)
    token = rows[0][0] if rows else ""
    for host in ("worker1", "worker2"):
        if token and f"[{token}]" in lab.worker_log(host):
            return host
    return ""


def _calls(lab: Lab) -> int:
    return lab.sql("SELECT count(*) FROM evaluation_llmcall")[0][0]


def _repeats_since(lab: Lab, start: int) -> int:
    """Calls the simulator answered more than once among its log's records after the first `start` (this test's)."""
    return _ok_repeats(SimpleNamespace(log=lab.sim_stats().log[start:]))


def test_work_through_both_web_hosts_with_a_worker_host_killed_and_a_web_host_restarted(lab: Lab):
    rosa = Api(lab, "rosa")
    before = lab.sim_stats()
    calls_before, asked_before, logged_before = _calls(lab), before.requests, len(before.log)
    dataset = _import(rosa, "web1", "lab items", _items("m"))

    # Two pre-annotation runs, one launched on each web host: each worker host takes one (concurrency 1).
    runs = [rosa.ok(host, "POST", "/runs", 201, json={
        "dataset": "lab items", "aspect": aspect, "annotators": ANNOTATORS, "supervisor": SUPERVISOR,
        "ollama_url": lab.llm_url, "parallel": 2})["id"]
        for host, aspect in zip(("web1", "web2"), ASPECTS, strict=True)]
    assert _wait(lambda: _holder(lab, runs[0]) and _holder(lab, runs[1]), 60), (
        runs, lab.sql("SELECT source_id, status, celery_task_id FROM evaluation_evaluatorrun"), _LAST_ERROR,
        lab.worker_log("worker1")[-1000:] + lab.worker_log("worker2")[-1000:])
    assert {_holder(lab, runs[0]), _holder(lab, runs[1])} == {"worker1", "worker2"}  # split over the hosts

    lab.mark("runs split")
    # SIGKILL the host holding the first run once it has made some of its calls; the other finishes both.
    victim = _holder(lab, runs[0])
    survivor = "worker2" if victim == "worker1" else "worker1"
    progress = "SELECT status, done, total FROM evaluation_evaluatorrun WHERE source_id = %s"
    assert _wait(lambda: lab.sql(progress, runs[0])[0][1] >= 4, 60)
    lab.procs[victim].kill()
    status, done, total = lab.sql(progress, runs[0])[0]
    assert status == "running" and done < total, (status, done, total)  # killed mid-run
    stored = {(normalize_name(model), digest) for model, digest in lab.sql(
        "SELECT model, encode(sha256(convert_to(prompt, 'UTF8')), 'hex') FROM evaluation_llmcall")}
    for run_id in runs:
        state = _wait_job(rosa, f"/runs/{run_id}", 180)
        assert state["status"] == "done", (state, lab.worker_log(survivor)[-3000:])
    # No stored LLM call was asked again. One the server answered in the instant the host died (sent, never
    # stored) is asked again by the survivor: at most the run's 2 in flight.
    repeats = _repeated(SimpleNamespace(log=lab.sim_stats().log[logged_before:]))
    assert sum(repeats.values()) <= 2 and not {(model, digest) for model, digest, _ in repeats} & stored, repeats
    calls, asked = _calls(lab) - calls_before, lab.sim_stats().requests - asked_before
    # Every stored call was asked once; beyond them only the calls in flight when the host died (at most the
    # run's 2 parallel slots), whose answers never arrived.
    assert calls == 2 * N_ITEMS * 4 and calls <= asked <= calls + 2
    token = lab.sql("SELECT celery_task_id FROM evaluation_evaluatorrun WHERE source_id = %s", runs[0])[0][0]
    assert f"[{token}]" in lab.worker_log(survivor)  # the survivor took the killed host's run over
    per_run = dict(lab.sql("SELECT source_id, count(*) FROM corpus_annotation WHERE kind = 'ensemble' "
                           "AND source_id = ANY(%s) GROUP BY source_id", runs))
    assert per_run == {runs[0]: N_ITEMS, runs[1]: N_ITEMS}

    lab.mark("runs done")
    # A campaign on the first run, opened on web2; each expert judges every machine error.
    campaign = rosa.ok("web2", "POST", "/campaigns", 201, json={
        "name": "lab campaign", "dataset_id": dataset, "run_ids": [runs[0]], "aspects": ["accuracy"],
        "annotators": ["expert1", "expert2"], "annotators_per_item": 2, "guidelines": "Judge each error."})["id"]
    expected = _verdict_burst(lab, campaign)

    lab.mark("verdicts done")
    # The figures, read from both web hosts, are the hand-counted ones.
    label = rosa.ok("web1", "GET", f"/runs/{runs[0]}")["label"]
    for host in ("web1", "web2"):
        table = rosa.ok(host, "GET", f"/analytics/campaigns/{campaign}/tables/accuracy")
        rows = [r for r in table["rows"] if r["run"] == label]
        assert len(rows) == 1, table["rows"]
        row = rows[0]
        assert row["judged"] == expected["judged"]
        assert row["span_ok_pct"] == pytest.approx(expected["span_ok_pct"], abs=0.05)
        assert row["exp_correct_pct"] == pytest.approx(expected["exp_correct_pct"], abs=0.05)

    lab.mark("figures read")
    # An export queued on web1, written by a worker, downloaded from web2 (the files are in the database).
    job = rosa.ok("web1", "POST", f"/datasets/{dataset}/exports", 202, json={"format": "jsonl"})["id"]
    state = _wait_job(rosa, f"/exports/{job}", 60)
    assert state["status"] == "done" and state["files"], state
    body = rosa.call("web2", "GET", f"/exports/{job}/files/{state['files'][0]}")
    assert body.status_code == 200, body.text[:500]
    records = [json.loads(line) for line in body.text.splitlines()]
    judged = [j for r in records for a in r["annotations"] for s in a["spans"] for j in s.get("judgments", [])]
    # One record per item and aspect (the two runs judged different aspects); the experts' verdicts on the first.
    assert sorted((r["item_id"], r["aspect"]) for r in records) == sorted(
        (f"m{i}", aspect) for i in range(N_ITEMS) for aspect in ASPECTS)
    assert len(judged) == expected["judged"]

    lab.mark("export downloaded")
    # The report's LaTeX sources from web1; compiled to a PDF where pdflatex is installed.
    report = rosa.call("web1", "GET", f"/analytics/campaigns/{campaign}/report.zip", params={"format": "latex"})
    assert report.status_code == 200, report.text[:500]
    _compile_report(lab, report.content)


def _verdict_burst(lab: Lab, campaign: int) -> dict:
    """Both experts judge every error (expert1 through web1, expert2 through web2) while web2 is killed and started
    again; a save whose answer is lost is sent again, unchanged, to the other host. Return the hand counts."""
    planned: dict[tuple[int, int], tuple[str, str]] = {}
    errors: list[str] = []
    sent = {"replayed": 0}
    saves = {"expert1": 0, "expert2": 0}
    kinds = [("error", "correct"), ("not_error", "incorrect"), ("error", "vague")]

    def judge(user: str, home: str) -> None:
        api = Api(lab, user)
        other = "web1" if home == "web2" else "web2"

        def send(method: str, path: str, **kw) -> httpx.Response:
            """To this expert's web host; when it gives no answer, the same request to the other (a proxy's retry)."""
            try:
                answer = api.call(home, method, path, **kw)
                if answer.status_code < 500:
                    return answer
            except httpx.HTTPError:
                pass
            sent["replayed"] += 1
            return api.call(other, method, path, **kw)

        try:
            for assignment in send("GET", "/assignments", params={"limit": 1000}).json()["items"]:
                detail = send("GET", f"/assignments/{assignment['id']}").json()
                for i, error in enumerate(detail["errors"]):
                    span, explanation = kinds[(i + assignment["id"]) % len(kinds)]
                    planned[(assignment["id"], error["span_id"])] = (span, explanation)
                    saves[user] += 1
                    answer = send("POST", f"/assignments/{assignment['id']}/judgments", json={
                        "span_id": error["span_id"], "span_verdict": span, "explanation_verdict": explanation,
                        "version": 0})
                    assert answer.status_code == 200, answer.text[:500]
                    assert answer.json()["version"] == 1
        except Exception as exc:  # noqa: BLE001 - reported by the main thread
            errors.append(f"{user}: {exc!r}")

    threads = [threading.Thread(target=judge, args=args) for args in (("expert1", "web1"), ("expert2", "web2"))]
    for thread in threads:
        thread.start()
    assert _wait(lambda: saves["expert2"] >= 2, 60, interval=0.05), errors
    lab.procs["web2"].kill()  # mid-burst: requests in flight on web2 lose their answers
    time.sleep(1)
    lab.start_web("web2")
    for thread in threads:
        thread.join(240)
    assert not errors, errors

    # A replay of a save already stored (its answer lost): the same value at the stored version + 1 is a 200.
    (assignment, span), (sv, ev) = next(iter(planned.items()))
    user_of = lab.sql("SELECT u.username FROM annotator_assignment a JOIN accounts_user u ON u.id = a.annotator_id "
                      "WHERE a.id = %s", assignment)[0][0]
    replay = Api(lab, user_of).call("web2", "POST", f"/assignments/{assignment}/judgments",
                                    json={"span_id": span, "span_verdict": sv, "explanation_verdict": ev,
                                          "version": 0})
    assert replay.status_code == 200 and replay.json()["version"] == 1, replay.text[:500]
    other_value = "not_error" if sv == "error" else "error"
    stale = Api(lab, user_of).call("web1", "POST", f"/assignments/{assignment}/judgments",
                                   json={"span_id": span, "span_verdict": other_value, "version": 0})
    assert stale.status_code == 409  # a different value typed against the old version is still refused

    # Nothing lost or doubled: one judgment per planned save, with its value, and one audit row per field.
    with override_settings(SECRET_KEY=KEY):  # the API names spans by handles keyed with the hosts' secret
        stored = {(a, span_handle(a, s)): (sv, ev) for a, s, sv, ev in lab.sql(
        "SELECT assignment_id, span_id, span_verdict, explanation_verdict FROM annotator_spanjudgment "
            "WHERE assignment_id IN (SELECT id FROM annotator_assignment WHERE campaign_id = %s)", campaign)}
    assert stored == planned
    events = lab.sql("SELECT count(*) FROM annotator_judgmentevent")[0][0]
    assert events == 2 * len(planned)
    # Each expert finishes their items (the figures count finished work), through the other web host.
    for user, host in (("expert1", "web2"), ("expert2", "web1")):
        api = Api(lab, user)
        for assignment in api.ok(host, "GET", "/assignments", params={"limit": 1000})["items"]:
            api.ok(host, "POST", f"/assignments/{assignment['id']}/finish", json={})
    n = len(planned)
    assert sent["replayed"] > 0  # the restart did cost expert2 answers, which the other host gave
    lab.mark(f"{n} verdicts, {sent['replayed']} requests sent again to the other web host")
    by_key = list(planned.values())
    return {"judged": n, "replayed": sent["replayed"],
            "span_ok_pct": 100 * sum(v[0] == "error" for v in by_key) / n,
            "exp_correct_pct": 100 * sum(v[1] == "correct" for v in by_key) / n}


def _compile_report(lab: Lab, zipped: bytes) -> None:
    folder = lab.root / "report"
    with zipfile.ZipFile(io.BytesIO(zipped)) as archive:
        names = archive.namelist()
        archive.extractall(folder)
    tex = [n for n in names if n.endswith(".tex")]
    assert tex, names
    if shutil.which("pdflatex") is None:
        return
    main = folder / ("report.tex" if "report.tex" in names else tex[0])
    done = subprocess.run(["pdflatex", "-interaction=nonstopmode", "-halt-on-error", main.name], cwd=main.parent,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout[-3000:]
    assert main.with_suffix(".pdf").read_bytes().startswith(b"%PDF")


def test_redis_on_the_db_host_stopped_for_ten_seconds_and_jobs_resume(lab: Lab, transactional_db, settings, tmp_path):
    rosa = Api(lab, "rosa")
    logged_before = len(lab.sim_stats().log)
    for host in ("worker1", "worker2"):  # the first test may have killed one of them
        if not lab.procs[host].alive():
            lab.start_worker(host)
    rows = [{"id": f"d{i}", "inputs": {"Article": f"Long article {i} about a flood in the old town."},
             "outputs": {"Summary": f"Report {i}: the river flooded the old mill after three days of rain. "
                                    "Volunteers filled sandbags through the night."}} for i in range(N_ITEMS)]
    items = "".join(json.dumps(r) + "\n" for r in rows).encode()
    _import(rosa, "web2", "lab summaries", items, "summarization")
    dhp = rosa.ok("web2", "POST", "/dhp/runs", 201, json={
        "dataset": "lab summaries", "evaluator": DHP_MODEL, "metrics": ["coherence"],
        "kinds": ["char-delete:minor", "word-delete:major"], "samples": 2, "ollama_url": lab.llm_url,
        "parallel": 2})["id"]
    assert _wait(lambda: rosa.ok("web1", "GET", f"/dhp/runs/{dhp}")["done_steps"] > 0, 60)
    lab.procs["redis"].stop()
    assert _wait(lambda: _status(f"{lab.web('web1')}/healthz") == 503, 15)  # the proxy takes it out
    time.sleep(10)
    lab.start_redis()
    assert _wait(lambda: _status(f"{lab.web('web1')}/healthz") == 200, 30)
    state = _wait_job(rosa, f"/dhp/runs/{dhp}", 180)
    assert state["status"] == "done", (state, lab.worker_log("worker1")[-2000:], lab.worker_log("worker2")[-2000:])
    assert state["summary"]["D_min"] is not None and state["llm_calls"] > 0
    assert _repeats_since(lab, logged_before) == 0
    # A job queued after the outage runs too: the broker and the workers are back.
    again = rosa.ok("web1", "POST", "/runs", 201, json={
        "dataset": "lab summaries", "aspect": "coherence", "annotators": ANNOTATORS, "supervisor": SUPERVISOR,
        "ollama_url": lab.llm_url, "parallel": 2})["id"]
    assert _wait_job(rosa, f"/runs/{again}", 120)["status"] == "done"

    # The same DHP work on one host (this process, the tests' own database, the same simulated server): the same
    # figures, so neither the hosts nor the outage changed a number.
    settings.OLLAMA_URLS = [lab.llm_url]
    (tmp_path / "items.jsonl").write_bytes(items)
    call_command("import_items", str(tmp_path / "items.jsonl"), "--dataset", "lab summaries", "--task",
                 "summarization")
    local = dhp_create(dataset=Dataset.objects.get(name="lab summaries"), evaluator=DHP_MODEL, metrics=["coherence"],
                       kinds=parse_kinds("char-delete:minor,word-delete:major"), samples=2, ollama_url=lab.llm_url,
                       parallel=2)
    job_execute(DhpRun, local.pk)
    local.refresh_from_db()
    assert local.status == "done", local.message
    assert local.results["summary"] == pytest.approx(state["summary"])
    assert local.results["perturbations"] == state["perturbations"]
