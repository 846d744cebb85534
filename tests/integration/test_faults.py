"""Faults with real PostgreSQL, Redis, worker processes and the simulated Ollama as a process: the job finishes
(or says why), no completed LLM call is asked again, no judgment or annotation is lost or duplicated.

The PostgreSQL restart restarts the machine's shared cluster, so it runs only when SPANJUDGE_DISRUPTIVE_TESTS=1
(`.ci/run` sets it: CI runs alone); run it alone with
`SPANJUDGE_DISRUPTIVE_TESTS=1 pytest tests/integration/test_faults.py -m disruptive`. The Redis fault uses a
redis-server of its own on a free port, never the shared one."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import threading
import time
from collections.abc import Callable, Iterator

import pytest
from django.db import InterfaceError, OperationalError, close_old_connections, connection
from django.test import Client
from kombu import Connection

from annotator.models import Assignment, JudgmentEvent, SpanJudgment
from annotator.selectors.spans import span_handle
from config.celery import app as celery_app
from corpus.models import Annotation
from evaluation.models import EvaluatorRun, LLMCall
from evaluation.runs.launch import run_create
from jobs.models import JobStatus
from tasks.jobs import TASKS
from tests.factories import build_campaign
from tests.integration.conftest import wait_for
from tests.integration.test_preannotation_worker import ANNOTATORS, N_ITEMS, SUPERVISOR, _dataset, _ok_repeats
from tests.ollama_sim.config import FaultRule, SimConfig
from tests.ollama_sim.process import SimProcess

pytestmark = pytest.mark.integration
TASK = "tasks.preannotation.run_preannotation"


def _fresh(query: Callable[[], bool]) -> Callable[[], bool]:
    """A wait_for predicate that survives the test's own connection breaking (PostgreSQL restarted)."""

    def check() -> bool:
        try:
            return query()
        except (OperationalError, InterfaceError):
            connection.close()
            return False

    return check


def _finished(run_pk: int) -> Callable[[], bool]:
    return _fresh(lambda: EvaluatorRun.objects.get(pk=run_pk).is_finished())


def _assert_complete(run: EvaluatorRun, sim: SimProcess, *, extra_calls: int = 0) -> None:
    """The job is done; every call answered once; one annotation per item and role, none twice."""
    run.refresh_from_db()
    assert run.status == JobStatus.DONE, run.message
    assert _ok_repeats(sim.stats()) == 0
    assert LLMCall.objects.count() == N_ITEMS * 4 + extra_calls
    assert Annotation.objects.filter(source=run, kind="ensemble").count() == N_ITEMS
    assert Annotation.objects.filter(source=run, kind="annotator").count() == N_ITEMS * 3
    assert Annotation.objects.filter(source=run, kind="supervisor").count() == N_ITEMS


def _sim_config(**kw) -> SimConfig:
    return SimConfig(models=[*ANNOTATORS, SUPERVISOR], parallel=2, **kw)


# --- PostgreSQL restarted mid-job ----------------------------------------------------------------------------


@pytest.mark.disruptive
@pytest.mark.skipif(os.environ.get("SPANJUDGE_DISRUPTIVE_TESTS") != "1",
                    reason="restarts the shared PostgreSQL cluster; set SPANJUDGE_DISRUPTIVE_TESTS=1 (CI does)")
def test_postgres_restart_mid_job_loses_and_repeats_nothing(celery_worker_factory, allow_ollama):
    # The local cluster, found as scripts/setup.sh finds it (SPANJUDGE_PG_CLUSTER="15 main" overrides).
    versions = sorted(os.listdir("/etc/postgresql")) if os.path.isdir("/etc/postgresql") else []
    cluster = os.environ.get("SPANJUDGE_PG_CLUSTER", f"{versions[0] if versions else '15'} main").split()
    with SimProcess(_sim_config(call_time=0.15, swap_cost=0.05)) as sim:
        allow_ollama(sim.url)
        worker = celery_worker_factory({"RUN_STALE_SECONDS": "3"}).start()
        run = run_create(dataset=_dataset(), aspect_name="accuracy", annotators=ANNOTATORS,
                         supervisor=SUPERVISOR, ollama_url=sim.url, parallel=2)
        TASKS[EvaluatorRun].apply_async((run.pk,), queue=worker.queue)
        assert wait_for(_fresh(lambda: LLMCall.objects.count() >= N_ITEMS // 2), timeout=60), worker.log.read_text()
        connection.close()
        subprocess.run(["pg_ctlcluster", "--skip-systemctl-redirect", *cluster, "restart"], check=True, timeout=120)
        assert wait_for(_finished(run.pk), timeout=180), worker.log.read_text()[-4000:]
        _assert_complete(run, sim)


# --- Redis stopped and restarted mid-job ---------------------------------------------------------------------


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class RedisServer:
    """A private redis-server (no persistence) that the test stops and starts; never the shared one."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> RedisServer:
        self.proc = subprocess.Popen(
            ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.5).close()
                return self
            except OSError:
                time.sleep(0.1)
        raise RuntimeError("redis-server did not start")

    def stop(self) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(10)


@pytest.fixture
def private_redis() -> Iterator[RedisServer]:
    if shutil.which("redis-server") is None:
        pytest.fail("the Redis fault test needs redis-server (apt-get install redis-server)")
    server = RedisServer(_free_port()).start()
    yield server
    server.stop()


def test_redis_stopped_and_restarted_mid_job(celery_worker_factory, allow_ollama, private_redis):
    with SimProcess(_sim_config(call_time=0.1, swap_cost=0.05)) as sim:
        allow_ollama(sim.url)
        worker = celery_worker_factory({"CELERY_BROKER_URL": private_redis.url, "RUN_STALE_SECONDS": "3"}).start()
        run = run_create(dataset=_dataset(), aspect_name="accuracy", annotators=ANNOTATORS,
                         supervisor=SUPERVISOR, ollama_url=sim.url, parallel=2)
        with Connection(private_redis.url) as broker:
            celery_app.send_task(TASK, args=(run.pk,), queue=worker.queue, connection=broker)
        assert wait_for(lambda: LLMCall.objects.count() >= 4, timeout=60), worker.log.read_text()
        private_redis.stop()
        time.sleep(3)
        private_redis.start()

        def supervise() -> None:
            """Restart the worker if it gave up, as scripts/serve.sh does: celery 5.7 / kombu can exit with
            "Unrecoverable error" when the Redis connection drops (known upstream). A job the dead worker
            was running is taken over by the new one once its heartbeat is stale."""
            nonlocal worker
            if worker.proc.poll() is not None:
                assert "Connection to broker lost" in worker.log.read_text()
                worker = celery_worker_factory({"CELERY_BROKER_URL": private_redis.url, "RUN_STALE_SECONDS": "3"})
                worker.start()

        assert wait_for(lambda: _finished(run.pk)() or worker.proc.poll() is not None, timeout=120)
        supervise()
        assert wait_for(_finished(run.pk), timeout=120), worker.log.read_text()[-4000:]
        _assert_complete(run, sim)
        time.sleep(3)  # let a worker that is going to give up on the lost connection do so
        supervise()
        # A job sent after the restart runs too: the broker and a worker work again.
        again = run_create(dataset=_dataset(name="after-restart"), aspect_name="accuracy", annotators=ANNOTATORS,
                           supervisor=SUPERVISOR, ollama_url=sim.url, parallel=2)
        with Connection(private_redis.url) as broker:
            celery_app.send_task(TASK, args=(again.pk,), queue=worker.queue, connection=broker)
        assert wait_for(_finished(again.pk), timeout=60), worker.log.read_text()[-4000:]
        again.refresh_from_db()
        assert again.status == JobStatus.DONE, again.message
        # Same texts, so the same prompts: answered from the stored calls, nothing asked twice.
        assert LLMCall.objects.count() == N_ITEMS * 4 and _ok_repeats(sim.stats()) == 0


# --- the simulated Ollama answers slowly or with garbage -----------------------------------------------------


def test_slow_and_garbage_answers_are_retried_and_the_job_finishes(celery_worker_factory, allow_ollama):
    faults = [
        FaultRule(kind="slow", model=ANNOTATORS[0], nth=(3, 4), delay=4.0),  # past OLLAMA_TIMEOUT: retried
        FaultRule(kind="garbage", model=ANNOTATORS[1], nth=(2, 6)),  # unparseable: asked again at temperature 0.1
    ]
    with SimProcess(_sim_config(call_time=0.02, swap_cost=0.02, faults=faults)) as sim:
        allow_ollama(sim.url)
        worker = celery_worker_factory({"OLLAMA_TIMEOUT": "1.5"}).start()
        run = run_create(dataset=_dataset(), aspect_name="accuracy", annotators=ANNOTATORS,
                         supervisor=SUPERVISOR, ollama_url=sim.url, parallel=2)
        TASKS[EvaluatorRun].apply_async((run.pk,), queue=worker.queue)
        assert wait_for(_finished(run.pk), timeout=120), worker.log.read_text()[-4000:]
        stats = sim.stats()
        assert stats.faults_injected.get("slow") == 2 and stats.faults_injected.get("garbage") == 2
        # The two garbage answers are stored (audited) calls of their own; their retries differ in options.
        _assert_complete(run, sim, extra_calls=2)


# --- two workers pick the same run ---------------------------------------------------------------------------


def test_two_workers_given_the_same_run_do_it_once(celery_worker_factory, allow_ollama):
    with SimProcess(_sim_config(call_time=0.05, swap_cost=0.05)) as sim:
        allow_ollama(sim.url)
        first = celery_worker_factory({"RUN_STALE_SECONDS": "4"}, concurrency=1).start()
        celery_worker_factory({"RUN_STALE_SECONDS": "4"}, concurrency=1).start()  # same queue
        run = run_create(dataset=_dataset(), aspect_name="accuracy", annotators=ANNOTATORS,
                         supervisor=SUPERVISOR, ollama_url=sim.url, parallel=2)
        for _ in range(2):  # a double click, or a recovery racing a launch
            TASKS[EvaluatorRun].apply_async((run.pk,), queue=first.queue)
        assert wait_for(_finished(run.pk), timeout=120), first.log.read_text()[-4000:]
        _assert_complete(run, sim)


# --- the same judgment saved from two tabs at once -----------------------------------------------------------


def test_same_judgment_saved_from_two_tabs_at_once(transactional_db, make_user):
    ann = make_user("two-tabs")
    built = build_campaign([ann], per_item=1)
    assignment = Assignment.objects.get(annotator=ann, item=built.items[0])
    spans = [built.spans["b1_family"], built.spans["a1_family"], built.spans["a1_missing"]]
    rounds = 8
    barrier = threading.Barrier(2)
    statuses: list[int] = []
    lock = threading.Lock()

    def tab(name: str) -> None:
        client = Client()
        client.force_login(ann)
        try:
            for span in spans:
                for i in range(rounds):
                    barrier.wait(timeout=30)  # both tabs send this save at the same moment
                    response = client.post(f"/work/{assignment.pk}/errors/{span_handle(assignment.pk, span.pk)}/",
                                           {"field": "comment", "value": f"{name} {i}"})
                    with lock:
                        statuses.append(response.status_code)
        finally:
            close_old_connections()
            connection.close()

    threads = [threading.Thread(target=tab, args=(name,)) for name in ("left", "right")]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert statuses == [200] * (2 * len(spans) * rounds)
    for span in spans:
        judgments = SpanJudgment.objects.filter(assignment=assignment, span=span)
        assert judgments.count() == 1  # the two first saves raced to create it: one row
        judgment = judgments.get()
        events = list(JudgmentEvent.objects.filter(judgment=judgment).order_by("at", "pk"))
        # Every save changed the value (each tab writes its own text), so every save left its audit row,
        # and the rows chain: each one's old value is the previous one's new value.
        assert len(events) == 2 * rounds
        assert [e.old_value for e in events[1:]] == [e.new_value for e in events[:-1]]
        assert judgment.comment == events[-1].new_value
