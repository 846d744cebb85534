"""The ensemble job against the simulated Ollama: full run, cache, retries of bad answers, faults, cancel."""

from __future__ import annotations

import csv
import io
import json

import pytest
from django.core.management import CommandError, call_command

from corpus.models import Annotation, ErrorSpan
from evaluation.llm import BackendError, OllamaBackend
from evaluation.llm.policy import RetryPolicy
from evaluation.models import EvaluatorRun, LLMCall, RunCall
from evaluation.runs.launch import LaunchError, run_create
from jobs.kinds import job_execute
from jobs.lifecycle import job_cancel, job_requeue
from jobs.models import JobStatus
from tests import factories
from tests.ollama_sim.config import FaultRule, ReplyRule, SimConfig
from tests.ollama_sim.server import OllamaSim

pytestmark = pytest.mark.django_db(transaction=True)

ANNOTATORS = ["ann-a:1b", "ann-b:1b", "ann-c:1b"]
SUPERVISOR = "sup:1b"
OUTPUTS = [
    "The Copper Kettle is a cheap coffee shop in the city centre. It serves English food.",
    "Blue Lantern is a Japanese restaurant restaurant in the riverside area.",
    "Olive Grove is a moderately priced pub near Riverside Market in the riverside area.",
    "Zizzi is a French coffee shop. It is not family friendly and costs less than 20 pounds.",
]


@pytest.fixture
def dataset(db):
    return factories.dataset("tiny", input_headers=["Data"], output_header="Text", items=[
        {"external_id": f"i{i}", "inputs": {"Data": f"record {i}"}, "output": output}
        for i, output in enumerate(OUTPUTS)
    ])


@pytest.fixture
def sim(allow_ollama):
    config = SimConfig(models=[*ANNOTATORS, SUPERVISOR], parallel=2)
    with OllamaSim(config) as server:
        allow_ollama(server.url)
        yield server


def _create(dataset, sim, **kw) -> EvaluatorRun:
    return run_create(
        dataset=dataset, aspect_name="accuracy", annotators=ANNOTATORS, supervisor=SUPERVISOR,
        ollama_url=sim.url, parallel=2, **kw,
    )


def test_run_execute_full_run_stores_every_layer(dataset, sim):
    run = _create(dataset, sim)
    assert job_execute(EvaluatorRun, run.pk) == JobStatus.DONE
    run.refresh_from_db()
    n = len(OUTPUTS)
    assert run.status == JobStatus.DONE and run.done == run.total == n * 4
    assert Annotation.objects.filter(source=run, kind="annotator").count() == n * 3
    assert Annotation.objects.filter(source=run, kind="supervisor").count() == n
    assert Annotation.objects.filter(source=run, kind="ensemble").count() == n
    # Model-major: each model loaded once, in the configured order, supervisor last.
    stats = sim.stats
    assert stats.load_order == [*ANNOTATORS, SUPERVISOR]
    assert stats.requests == n * 4 == LLMCall.objects.count()
    # Ensemble score = mean of the annotators' scores.
    for ensemble in Annotation.objects.filter(source=run, kind="ensemble"):
        scores = list(
            Annotation.objects.filter(source=run, kind="annotator", item=ensemble.item).values_list("score", flat=True)
        )
        assert ensemble.score == pytest.approx(sum(scores) / len(scores))
    # Every aligned span slices exactly what it claims; unaligned ones have no offsets.
    for span in ErrorSpan.objects.filter(annotation__source=run).select_related("annotation__item"):
        if span.start is not None:
            assert span.match != "none"
            if span.match == "exact":
                assert span.annotation.item.output[span.start : span.end] == span.text
        else:
            assert span.match == "none"
    # Token counts and durations come from Ollama's responses.
    call = LLMCall.objects.first()
    assert call.prompt_tokens > 0 and call.completion_tokens > 0 and call.options["temperature"] == 0.0
    assert call.options["seed"] == 42 and "num_ctx" in call.options


def test_run_rerun_makes_zero_llm_calls(dataset, sim):
    first = _create(dataset, sim)
    job_execute(EvaluatorRun, first.pk)
    sim.reset_stats()
    second = _create(dataset, sim)
    assert job_execute(EvaluatorRun, second.pk) == JobStatus.DONE
    second.refresh_from_db()
    assert sim.stats.requests == 0
    assert second.cache_hits == second.total
    assert RunCall.objects.filter(run=second, from_cache=False).count() == 0
    assert Annotation.objects.filter(source=second, kind="ensemble").count() == len(OUTPUTS)


def test_run_unparseable_answer_retried_warmer_and_raw_kept(dataset, sim):
    garbage = "I cannot comply with the format, sorry."
    sim.configure(faults=(FaultRule(kind="garbage", model="ann-b:1b", first=2, text=garbage),))
    run = _create(dataset, sim, repair=False)  # the retries alone (the repair step is tested beside)
    job_execute(EvaluatorRun, run.pk)
    retried = RunCall.objects.filter(run=run, model="ann-b:1b", attempt__gt=0)
    assert retried.count() == 2
    assert all(rc.call.options["temperature"] == 0.1 for rc in retried.select_related("call"))
    bad = LLMCall.objects.filter(response=garbage)
    assert bad.count() == 2  # every raw answer is kept
    annotations = Annotation.objects.filter(source=run, model="ann-b:1b", kind="annotator")
    assert annotations.count() == len(OUTPUTS)
    assert all(a.parse_status != "failed" for a in annotations)


def test_run_supervisor_unusable_falls_back_to_overlap_merge(dataset, sim):
    sim.configure(rules=(ReplyRule(model=SUPERVISOR, reply="?!"),))
    run = _create(dataset, sim)
    assert job_execute(EvaluatorRun, run.pk) == JobStatus.DONE
    for ensemble in Annotation.objects.filter(source=run, kind="ensemble"):
        assert any("merged by span overlap" in p for p in ensemble.parse_problems)
        assert ensemble.spans.count() <= 8
    assert Annotation.objects.filter(source=run, kind="supervisor", parse_status="failed").count() == len(OUTPUTS)


def test_run_create_refuses_missing_model_up_front(dataset, sim):
    with pytest.raises(LaunchError) as excinfo:
        run_create(dataset=dataset, aspect_name="accuracy", annotators=["ann-a:1b", "ghost:70b"],
                   supervisor=SUPERVISOR, ollama_url=sim.url)
    assert "ollama pull ghost:70b" in str(excinfo.value)
    assert not EvaluatorRun.objects.exists()
    assert sim.stats.requests == 0


def test_run_create_refuses_unreachable_server_naming_url(dataset, allow_ollama):
    allow_ollama("http://127.0.0.1:9")
    with pytest.raises(LaunchError) as excinfo:
        run_create(dataset=dataset, aspect_name="accuracy", annotators=["a"], supervisor="b",
                   ollama_url="http://127.0.0.1:9")
    assert "http://127.0.0.1:9" in str(excinfo.value) and "ollama serve" in str(excinfo.value)


def test_run_server_errors_are_retried(dataset, sim):
    sim.configure(faults=(FaultRule(kind="error", model="ann-a:1b", nth=(1, 3)), FaultRule(kind="drop", nth=(5,))))
    run = _create(dataset, sim)
    assert job_execute(EvaluatorRun, run.pk) == JobStatus.DONE
    assert Annotation.objects.filter(source=run, kind="ensemble").count() == len(OUTPUTS)
    assert LLMCall.objects.filter(model="ann-a:1b").count() == len(OUTPUTS)


def test_run_pauses_when_server_keeps_failing_then_resumes_without_repeats(dataset, sim, settings):
    # ann-b fails every request: the run pauses after the backend's retries, keeping ann-a's answers.
    sim.configure(faults=(FaultRule(kind="error", model="ann-b:1b", status=503),))
    run = _create(dataset, sim)
    settings.LLM_RETRY = {"transport_retries": 1, "backoff": 0.01}  # the settings every run's clients are made with
    settings.LLM_LOAD_TIMEOUT = 5
    assert job_execute(EvaluatorRun, run.pk) == JobStatus.PAUSED
    run.refresh_from_db()
    assert "resume" in run.message.lower()
    assert Annotation.objects.filter(source=run, model="ann-a:1b").count() == len(OUTPUTS)
    ok_before = {r.prompt_sha256 + r.model for r in sim.stats.log if r.status == "ok"}
    sim.configure(faults=())
    sim.reset_stats()
    assert job_requeue(run, enqueue=False)
    assert job_execute(EvaluatorRun, run.pk) == JobStatus.DONE
    ok_after = {r.prompt_sha256 + r.model for r in sim.stats.log if r.status == "ok"}
    assert not ok_before & ok_after  # no finished call was repeated
    assert all(r.model != "ann-a:1b" for r in sim.stats.log)


def test_run_cancel_stops_pending_run(dataset, sim):
    run = _create(dataset, sim)
    assert job_cancel(run)
    assert job_execute(EvaluatorRun, run.pk) is None
    run.refresh_from_db()
    assert run.status == JobStatus.CANCELLED and sim.stats.requests == 0


def test_preannotate_command_sync(dataset, sim):
    out = io.StringIO()
    call_command("preannotate", dataset="tiny", aspect="accuracy", annotators=",".join(ANNOTATORS),
                 supervisor=SUPERVISOR, ollama_url=sim.url, parallel=2, sync=True, stdout=out)
    assert "done" in out.getvalue()
    assert Annotation.objects.filter(kind="ensemble").count() == len(OUTPUTS)
    with pytest.raises(CommandError, match="no aspect 'charm'"):
        call_command("preannotate", dataset="tiny", aspect="charm", ollama_url=sim.url, sync=True)


def test_run_records_template_version_in_force_and_export_shows_match(dataset, sim):
    from annotator.services.exporting import dataset_records
    from evaluation.models import PromptTemplate
    from evaluation.services.templates import TemplateError, template_revise

    builtin = PromptTemplate.objects.get(kind="annotator", task=None, is_active=True)
    first = _create(dataset, sim)
    assert first.templates["annotator"] == builtin.text
    revised = template_revise(template=builtin, text=builtin.text + "\nBe concise.", note="shorter")
    assert revised.version == builtin.version + 1
    builtin.refresh_from_db()
    assert not builtin.is_active
    second = _create(dataset, sim)
    assert second.templates["annotator"].endswith("Be concise.")
    first.refresh_from_db()
    assert first.templates["annotator"] == builtin.text  # frozen at creation
    with pytest.raises(TemplateError, match="nonsense"):
        template_revise(template=revised, text="${nonsense} and ${output}")
    job_execute(EvaluatorRun, second.pk)
    spans = [
        span
        for record in dataset_records(dataset)
        for annotation in record["annotations"]
        if annotation["source"] == second.label
        for span in annotation["spans"]
    ]
    assert spans and all(span["match"] in {"exact", "normalized", "fuzzy", "none"} for span in spans)
    assert all((span["start"] is None) == (span["match"] == "none") for span in spans)


def test_task_retries_after_database_error_and_keeps_stored_calls(dataset, sim, monkeypatch):
    from datetime import timedelta

    from celery.exceptions import Retry
    from django.db import OperationalError
    from django.utils import timezone

    from evaluation.runs.writes import RunWriter
    from tasks.jobs import TASKS

    run = _create(dataset, sim)
    real_record = RunWriter.record_batch
    calls = {"n": 0}

    def flaky_record(self, *args, **kwargs):
        calls["n"] += 1
        if calls["n"] == 2:
            raise OperationalError("server closed the connection unexpectedly")
        return real_record(self, *args, **kwargs)

    monkeypatch.setattr(RunWriter, "record_batch", flaky_record)
    with pytest.raises(Retry):
        TASKS[EvaluatorRun].apply(args=(run.pk,), throw=True)
    stored = LLMCall.objects.count()
    assert stored > 0  # answers that arrived before the failure are kept
    assert EvaluatorRun.objects.get(pk=run.pk).status == JobStatus.RUNNING
    monkeypatch.setattr(RunWriter, "record_batch", real_record)
    # Time passes: the dead attempt's heartbeat goes stale, so the retry may claim the run.
    EvaluatorRun.objects.filter(pk=run.pk).update(heartbeat_at=timezone.now() - timedelta(hours=1))
    sim.reset_stats()
    assert job_execute(EvaluatorRun, run.pk) == JobStatus.DONE
    assert sim.stats.requests == len(OUTPUTS) * 4 - stored  # only the calls that were never answered


def test_run_single_model_mode_makes_one_call_per_item_and_no_supervisor(dataset, sim):
    run = run_create(dataset=dataset, aspect_name="accuracy", annotators=["ann-c:1b"], ollama_url=sim.url,
                     mode="single")
    assert run.total == len(OUTPUTS) and run.label.startswith("single-")
    assert set(run.templates) == {"annotator"}
    assert job_execute(EvaluatorRun, run.pk) == JobStatus.DONE
    assert sim.stats.requests == len(OUTPUTS) and sim.stats.load_order == ["ann-c:1b"]
    assert Annotation.objects.filter(source=run, kind="annotator").count() == len(OUTPUTS)
    assert not Annotation.objects.filter(source=run).exclude(kind="annotator").exists()
    with pytest.raises(LaunchError, match="exactly one model"):
        run_create(dataset=dataset, aspect_name="accuracy", annotators=ANNOTATORS, ollama_url=sim.url, mode="single")


def test_run_distilled_mode_stores_0_to_100_scores(dataset, sim):
    run = run_create(dataset=dataset, aspect_name="accuracy", annotators=["ann-a:1b"], ollama_url=sim.url,
                     mode="distilled")
    assert job_execute(EvaluatorRun, run.pk) == JobStatus.DONE
    prompt = LLMCall.objects.get(run_calls__run=run, run_calls__item__position=0).prompt
    assert "0 to 100" in prompt
    from evaluation.engine.parsing import parse_distilled_answer

    annotations = list(Annotation.objects.filter(source=run))
    assert len(annotations) == len(OUTPUTS)
    for annotation in annotations:
        # Stored on the 0-100 scale the model answered, not mapped to labels.
        assert annotation.score == parse_distilled_answer(annotation.raw_answer).score100
        assert 0 <= annotation.score <= 100 and annotation.score_label == ""


def _running(run: EvaluatorRun, seconds_since_beat: float) -> None:
    from datetime import timedelta

    from django.utils import timezone

    beat = timezone.now() - timedelta(seconds=seconds_since_beat)
    EvaluatorRun.objects.filter(pk=run.pk).update(status=JobStatus.RUNNING, heartbeat_at=beat)


def test_recovery_takes_only_runs_whose_heartbeat_is_stale(dataset, settings):
    from jobs.lifecycle import job_claim, jobs_going_stale, jobs_needing_recovery

    settings.RUN_STALE_SECONDS = 90
    fresh, stale, pending = (run_create(dataset=dataset, aspect_name="accuracy", annotators=ANNOTATORS,
                                        supervisor=SUPERVISOR, check=False) for _ in range(3))
    _running(fresh, 10)  # a live worker beat 10 s ago
    _running(stale, 120)  # its worker stopped two minutes ago
    assert jobs_needing_recovery(EvaluatorRun) == [stale.pk]  # not every running run, and not the pending one
    (going,) = jobs_going_stale(EvaluatorRun)
    assert going[0] == fresh.pk and 79 < going[1] <= 80  # stale in 80 s
    # The claim applies the same rule: it takes the stale run over and leaves the live worker's alone.
    assert not job_claim(EvaluatorRun, fresh.pk, "other-worker")
    assert job_claim(EvaluatorRun, stale.pk, "other-worker")
    assert EvaluatorRun.objects.get(pk=pending.pk).status == JobStatus.PENDING


def test_starting_worker_requeues_stale_runs_now_and_fresh_ones_once_they_would_be_stale(
    dataset, settings, monkeypatch
):
    from tasks.jobs import TASKS

    settings.RUN_STALE_SECONDS = 90
    fresh, stale = (run_create(dataset=dataset, aspect_name="accuracy", annotators=ANNOTATORS,
                               supervisor=SUPERVISOR, check=False) for _ in range(2))
    _running(fresh, 30)
    _running(stale, 300)
    now: list[int] = []
    later: list[tuple[int, float]] = []
    monkeypatch.setattr(TASKS[EvaluatorRun], "delay", lambda run_id: now.append(run_id))
    monkeypatch.setattr(TASKS[EvaluatorRun], "apply_async",
                        lambda args, countdown: later.append((args[0], countdown)))
    TASKS[EvaluatorRun].recover()
    assert now == [stale.pk]
    assert [run_id for run_id, _ in later] == [fresh.pk] and 60 < later[0][1] <= 61


def test_run_leaves_an_outlier_out_of_the_supervisor_prompt_but_not_out_of_the_score(dataset, sim):
    def answer(label: str, location: str) -> str:
        return f"Error 1:\nLocation: {location}\nExplanation: wrong\nSeverity: 3\nOverall score: {label}"

    # leave-one-out over [5, 5, 1]: ann-c is 4 points from the unanimous others, so it is the outlier
    sim.configure(rules=(ReplyRule(model="ann-a:1b", reply=answer("Excellent", "first-marker")),
                         ReplyRule(model="ann-b:1b", reply=answer("Excellent", "second-marker")),
                         ReplyRule(model="ann-c:1b", reply=answer("Unacceptable", "outlier-marker"))))
    run = _create(dataset, sim)
    assert job_execute(EvaluatorRun, run.pk) == JobStatus.DONE
    flagged = Annotation.objects.filter(source=run, kind="annotator", is_outlier=True)
    assert set(flagged.values_list("model", flat=True)) == {"ann-c:1b"} and flagged.count() == len(OUTPUTS)
    prompts = LLMCall.objects.filter(run_calls__run=run, run_calls__role="supervisor").values_list("prompt", flat=True)
    assert len(prompts) == len(OUTPUTS)
    assert all("first-marker" in p and "second-marker" in p and "outlier-marker" not in p for p in prompts)
    for ensemble in Annotation.objects.filter(source=run, kind="ensemble"):
        assert ensemble.score == pytest.approx((5 + 5 + 1) / 3)
        assert "ann-c:1b: Unacceptable" in ensemble.score_explanation


def test_run_cancelled_while_running_stops_at_a_checkpoint_and_keeps_what_it_finished(dataset, sim):
    import threading
    import time

    from django.db import connection

    sim.configure(call_time=0.2)  # 4 items, 2 in flight: 0.4 s per annotator model
    run = _create(dataset, sim)

    def cancel_soon() -> None:
        time.sleep(0.5)
        assert job_cancel(run)
        connection.close()

    admin = threading.Thread(target=cancel_soon)
    admin.start()
    assert job_execute(EvaluatorRun, run.pk) == JobStatus.CANCELLED
    admin.join()
    run.refresh_from_db()
    assert run.finished_at is not None and "Cancelled" in run.message
    assert 0 < run.done < run.total
    assert Annotation.objects.filter(source=run).count() == run.done  # every counted step is stored
    assert LLMCall.objects.count() == sim.stats.requests  # every answer that arrived is kept
    assert not RunCall.objects.filter(run=run, role="supervisor").exists()


def test_run_fails_when_a_model_is_gone_by_the_time_it_runs(dataset, sim):
    run = run_create(dataset=dataset, aspect_name="accuracy", annotators=["ann-a:1b", "gone:1b"],
                     supervisor=SUPERVISOR, ollama_url=sim.url, parallel=2, check=False)
    assert job_execute(EvaluatorRun, run.pk) == JobStatus.FAILED
    run.refresh_from_db()
    assert "ollama pull gone:1b" in run.message and run.finished_at is not None
    assert sim.stats.requests == 0  # found out before any call


def test_preannotate_export_shows_ambiguous_spans_as_such(dataset, sim):
    from annotator.services.exporting import export_csv, export_jsonl

    reply = ("**Error 1:**\n**Location:** restaurant\n**Explanation:** The word is repeated.\n**Severity:** 2\n"
             "Error 2:\nLocation: restaurant (second mention)\nExplanation: Repeated word.\nSeverity: 2\n"
             "Overall score: Good\nExplanation of the score: One slip.")
    sim.configure(rules=(ReplyRule(reply=reply),))
    call_command("preannotate", dataset="tiny", aspect="accuracy", annotators=",".join(ANNOTATORS),
                 supervisor=SUPERVISOR, ollama_url=sim.url, parallel=2, sync=True, stdout=io.StringIO())
    output = OUTPUTS[1]  # "... Japanese restaurant restaurant ..."
    records = [json.loads(line) for line in export_jsonl(dataset)]
    record = next(r for r in records if r["item_id"] == "i1")
    ensemble = next(a for a in record["annotations"] if a["kind"] == "ensemble")
    first, second = ensemble["spans"]
    assert first["ambiguous"] is True and (first["start"], first["end"]) == (output.index("restaurant"),
                                                                          output.index("restaurant") + 10)
    assert "ambiguous" not in second and second["start"] == output.rindex("restaurant")
    # items where the word is absent: unaligned spans are never flagged
    assert all("ambiguous" not in s for r in records if r["item_id"] != "i1"
               for a in r["annotations"] for s in a["spans"])
    rows = list(csv.DictReader(io.StringIO("".join(export_csv(dataset)))))
    flagged = [r for r in rows if r["ambiguous"] == "true"]
    assert flagged and all(r["item_id"] == "i1" and r["start"] == str(output.index("restaurant")) for r in flagged)


@pytest.mark.strict_allowlist
def test_run_create_refuses_ollama_url_outside_allowlist(dataset, settings):
    settings.OLLAMA_URLS = [settings.OLLAMA_URL]
    with OllamaSim(SimConfig(models=[*ANNOTATORS, SUPERVISOR])) as unlisted:  # its port is not listed
        for given in (unlisted.url, f"{settings.OLLAMA_URL},{unlisted.url}", f"openai+{unlisted.url}"):
            with pytest.raises(LaunchError) as excinfo:
                run_create(dataset=dataset, aspect_name="accuracy", annotators=ANNOTATORS, supervisor=SUPERVISOR,
                           ollama_url=given)
            assert "not an allowed LLM server" in str(excinfo.value) and "OLLAMA_URLS" in str(excinfo.value)
        assert unlisted.stats.requests == 0  # nothing was fetched from the unlisted server
    assert not EvaluatorRun.objects.exists()


def test_ollama_errors_never_echo_the_fetched_body(allow_ollama):
    """A server that answers with a page of its own: the message says what went wrong, not what it said."""
    import http.server
    import threading

    secret = "internal-admin-panel-secret-token"

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            body = f"<html>{secret}</html>".encode()
            self.send_response(self.server.status)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}"
        allow_ollama(url)
        for status in (200, 404, 500):  # a page that is not JSON, a refusal, a server error
            server.status = status
            with pytest.raises(BackendError) as excinfo:
                OllamaBackend(url, timeout=5, policy=RetryPolicy(transport_retries=0)).check(["a:1b"])
            assert secret not in str(excinfo.value) and url in str(excinfo.value), (status, str(excinfo.value))
    finally:
        server.shutdown()


def test_run_counts_agree_on_every_page_when_answers_fail(dataset, sim, client, make_user):
    """Every annotator fails on every output (garbage even after the retries): the run page's unparseable count,
    its list and the API name the same answers, each with its model; the home page counts steps, not calls."""
    sim.configure(faults=tuple(FaultRule(kind="garbage", model=model, text="no format here") for model in ANNOTATORS))
    run = _create(dataset, sim, repair=False)
    assert job_execute(EvaluatorRun, run.pk) == JobStatus.DONE
    run.refresh_from_db()
    failed = Annotation.objects.filter(source=run, parse_status="failed")
    assert failed.filter(kind="ensemble").count() == len(OUTPUTS)  # nothing to merge: no answer of a model
    answers = failed.exclude(kind="ensemble")
    assert run.failed_calls == answers.count() == len(OUTPUTS) * len(ANNOTATORS)
    calls = RunCall.objects.filter(run=run, from_cache=False).count()
    assert calls > run.total  # the retries are LLM calls beyond the steps

    client.force_login(make_user("boss", role="admin"))
    page = client.get(f"/runs/{run.pk}/").content.decode()
    assert f'<dd data-count="failed">{run.failed_calls}</dd>' in page
    assert f'<dd data-count="llm_calls">{calls}</dd>' in page
    shown = page.count("<details><summary>")
    assert shown == run.failed_calls == 12  # all of them (the list shows at most 20, and says so when it cuts)
    assert f'data-shown="{shown}">Unparseable answers (raw)</h2>' in page
    summaries = [s.split(" on item ")[0] for s in page.split("<details><summary>")[1:]]
    assert all(s in ANNOTATORS for s in summaries), summaries  # every entry names its model
    api = client.get(f"/api/runs/{run.pk}").json()
    assert api["failed"] == run.failed_calls and api["llm_calls"] == calls
    assert {f["model"] for f in api["failures"]} <= set(ANNOTATORS) and len(api["failures"]) == shown
    home = client.get("/").content.decode()
    assert "<th>Steps</th>" in home and f"{run.done} / {run.total}" in home
