"""Planted errors written by a model: the job end to end on the simulated Ollama (real HTTP on loopback), the copy's
text, planted stretch and copied machine spans after it, resume from the ledger, the draft it keeps closed, the
answers it refuses, and the API's and page's refusals."""

from __future__ import annotations

import re
import socket
from dataclasses import dataclass

import pytest
from celery import current_app

from annotator.models import Campaign
from evaluation.models import EvaluatorRun, LLMCall
from evaluation.runs.launch import run_create
from jobs.kinds import job_execute
from jobs.lifecycle import job_requeue
from jobs.models import JobStatus
from quality.models import CheckSpan, PlantedOutput, PlantedWriting, PlantedWritingJob
from quality.services import CheckSettings
from studies.setup import CampaignSpec, campaign_create
from tests import factories
from tests.ollama_sim import FaultRule, OllamaSim, SimConfig
from tests.quality.conftest import Api, box

pytestmark = pytest.mark.django_db(transaction=True)

ANNOTATORS = ["ann-a:1b", "ann-b:1b"]
SUPERVISOR = "sup:1b"
WRITER = "writer:1b"
Outcome = PlantedWriting.Outcome
PROMPT_MARK = "to change\n"  # the header above the output in the planted-error prompt


@pytest.fixture
def sim(allow_ollama):
    with OllamaSim(SimConfig(models=[*ANNOTATORS, SUPERVISOR, WRITER], parallel=2)) as server:
        allow_ollama(server.url)
        yield server


@pytest.fixture
def sent(monkeypatch) -> list[tuple[str, list]]:
    """The tasks queued (sent by name once the transaction commits), instead of a broker."""
    out: list[tuple[str, list]] = []
    monkeypatch.setattr(current_app, "send_task", lambda name, args=None, **kw: out.append((name, list(args))))
    return out


@dataclass
class SimStudy:
    campaign: Campaign
    run: EvaluatorRun

    def planted(self) -> list[PlantedOutput]:
        return list(PlantedOutput.objects.filter(campaign=self.campaign).select_related("item", "original")
                    .order_by("pk"))

    def job(self) -> PlantedWritingJob:
        return PlantedWritingJob.objects.filter(campaign=self.campaign).latest("pk")


def _study(sim, judges, researcher, settings, *, name: str = "planted", auto: bool = True,
           decoys: float = 0.0, moved_to: str = "") -> SimStudy:
    """Box scores judged by an ensemble on the simulator, then a campaign with planted outputs over them (after the
    run's server moved to `moved_to`, if given)."""
    settings.PLANTED_WRITE_AUTO = auto
    settings.DECOY_EXPLAIN_AUTO = False
    data = factories.dataset(f"{name} data", input_headers=["Data"], output_header="Summary",
                             items=[{"external_id": f"g{i}", "inputs": box(i)[0], "output": box(i)[1]}
                                    for i in range(8)])
    run = run_create(dataset=data, aspect_name="accuracy", annotators=ANNOTATORS, supervisor=SUPERVISOR,
                     ollama_url=sim.url, parallel=2)
    assert job_execute(EvaluatorRun, run.pk) == JobStatus.DONE
    if moved_to:
        EvaluatorRun.objects.filter(pk=run.pk).update(servers=[moved_to], ollama_url=moved_to)
    campaign = campaign_create(CampaignSpec(
        name=name, dataset=data, runs=[run], annotators=list(judges), aspects=["accuracy"], seed=7,
        checks=CheckSettings(planted=0.4, decoys=decoys)), created_by=researcher)
    return SimStudy(campaign, run)


def _twins(copy_id: int) -> list[CheckSpan]:
    return list(CheckSpan.objects.filter(role=CheckSpan.Role.COPY, span__annotation__item_id=copy_id)
                .select_related("span", "original"))


def test_creation_starts_the_job_and_each_planted_output_gets_the_models_error(sim, judges, researcher, settings,
                                                                               sent):
    study = _study(sim, judges, researcher, settings)
    assert study.campaign.status == Campaign.Status.DRAFT  # nobody sees a planted output before the model wrote it
    job = study.job()
    planted = study.planted()
    assert len(planted) >= 4 and {p.kind for p in planted} <= {"number", "entity", "sentence", "insert"}
    assert (job.status, job.automatic, job.total, job.model, job.server) == (
        JobStatus.PENDING, True, len(planted), SUPERVISOR, sim.url)
    assert sent == [("quality.PlantedWritingJob", [job.pk])]
    rule_made = {p.pk: p.item.output for p in planted}

    assert job_execute(PlantedWritingJob, job.pk) == JobStatus.DONE
    job.refresh_from_db()
    assert (job.done, job.total, job.simulated) == (len(planted), len(planted), True)
    rows = {row.planted_id: row for row in job.rows.select_related("call")}
    assert {row.outcome for row in rows.values()} == {Outcome.REWRITTEN}
    twins_seen = 0
    for p in study.planted():
        row, copy, original = rows[p.pk], p.item, p.original
        assert row.before == rule_made[p.pk] and row.model == row.call.model == SUPERVISOR
        # The model was asked about the ORIGINAL output, with its input data.
        assert original.output in row.call.prompt and original.inputs["Data"] in row.call.prompt
        # The copy is the original with exactly the planted stretch changed, and says how it was made.
        assert p.kind == "llm" and copy.perturbation["kind"] == "planted:llm"
        assert copy.output[p.start:p.end] == p.after and p.after != p.before
        assert copy.output == original.output[:p.start] + p.after + original.output[p.start + len(p.before):]
        assert copy.output != rule_made[p.pk]
        # Each machine span copied onto it still marks its own words, and none touches the planted stretch.
        for twin in _twins(copy.pk):
            span = twin.span
            if twin.original.start is None or original.output[twin.original.start:twin.original.end] != span.text:
                continue
            assert copy.output[span.start:span.end] == span.text
            assert span.end <= p.start or span.start >= p.end
            twins_seen += 1
    assert twins_seen > 0  # the copies carry the ensemble's machine spans
    # A second job finds every answer in the ledger: nothing is asked again, and the copies stay as written.
    texts = {p.pk: p.item.output for p in study.planted()}
    requests = sim.stats.requests
    second = Api(researcher)("post", f"/campaigns/{study.campaign.pk}/planted/write")
    assert second.status_code == 201, second.content
    assert job_execute(PlantedWritingJob, second.json()["id"]) == JobStatus.DONE
    assert sim.stats.requests == requests
    assert {p.pk: p.item.output for p in study.planted()} == texts


def test_resume_after_a_lost_server_asks_only_what_is_left(sim, judges, researcher, settings, sent):
    settings.LLM_RETRY = {"transport_retries": 0, "backoff": 0.0}
    study = _study(sim, judges, researcher, settings, name="paused")
    job = study.job()
    sim.configure(faults=[FaultRule(kind="error", nth=(3,), status=500)], parallel=1)
    sim.reset_stats()
    assert job_execute(PlantedWritingJob, job.pk) == JobStatus.PAUSED
    job.refresh_from_db()
    before = job.rows.count()
    assert 0 < before == job.done < job.total and job.kept_message in job.message
    assert Api(researcher)("get", f"/planted-writing/{job.pk}").json()["done"] == before
    refused = Api(researcher)("post", f"/campaigns/{study.campaign.pk}/open")
    assert refused.status_code == 409 and "is paused" in refused.json()["detail"], refused.content
    assert "planted errors" in refused.json()["detail"]
    sim.configure(faults=[])
    sim.reset_stats()
    assert job_requeue(job, enqueue=False)
    assert job_execute(PlantedWritingJob, job.pk) == JobStatus.DONE
    job.refresh_from_db()
    assert job.done == job.total == job.rows.count() == len(study.planted())
    assert sim.stats.requests == job.total - before  # the outputs done before the pause are not asked again
    assert {row.outcome for row in job.rows.all()} == {Outcome.REWRITTEN}
    opened = Api(researcher)("post", f"/campaigns/{study.campaign.pk}/open")
    assert opened.status_code == 200 and opened.json()["status"] == "open", opened.content


def test_the_draft_stays_closed_until_the_job_ends_or_is_cancelled(sim, judges, researcher, settings, sent):
    study = _study(sim, judges, researcher, settings, name="closed")
    url = f"/campaigns/{study.campaign.pk}/open"
    pending = Api(researcher)("post", url)
    assert pending.status_code == 409 and "is pending" in pending.json()["detail"], pending.content
    assert f"job {study.job().pk}" in pending.json()["detail"]
    cancelled = Api(researcher)("post", f"/planted-writing/{study.job().pk}/cancel")
    assert cancelled.status_code == 200 and cancelled.json()["status"] == "cancelled", cancelled.content
    opened = Api(researcher)("post", url)
    assert opened.status_code == 200, opened.content
    # nothing was rewritten: every copy keeps its rule-made error
    assert {p.kind for p in study.planted()} <= {"number", "entity", "sentence", "insert"}


def test_answers_that_are_not_one_usable_change_keep_the_rule_made_error(sim, judges, researcher, settings, sent):
    study = _study(sim, judges, researcher, settings, name="unusable")
    planted = study.planted()
    before = {p.pk: (p.item.output, p.kind, p.start, p.end) for p in planted}
    twins = {p.pk: sorted((t.span.start, t.span.end) for t in _twins(p.item_id)) for p in planted}
    originals = [p.original.output for p in planted]
    first_span = {p.original.output: t.original for p in planted for t in _twins(p.item_id)
                  if t.original.start is not None}

    def garbled(request):
        if PROMPT_MARK not in request.prompt:
            return None
        output = next(o for o in originals if o in request.prompt)
        span = first_span.get(output)
        if span is not None and originals.index(output) % 2:  # a machine span's words swapped for a name
            return f"<text>{output[:span.start]}Quillmere{output[span.end:]}</text>"
        return "<text>" + re.sub(r"\d+", lambda m: str(int(m.group()) + 1), output) + "</text>"  # every number

    sim.configure(answer=garbled)
    job = study.job()
    assert job_execute(PlantedWritingJob, job.pk) == JobStatus.DONE
    body = Api(researcher)("get", f"/planted-writing/{job.pk}").json()
    assert body["unusable"] == body["total"] == len(planted) and body["rewritten"] == body["kept"] == 0
    notes = {row.note for row in job.rows.all()}
    assert any("separate stretches" in n for n in notes), notes
    if any(originals.index(o) % 2 for o in first_span):
        assert any("must stay as it is" in n for n in notes), notes
    for p in study.planted():
        assert (p.item.output, p.kind, p.start, p.end) == before[p.pk]
        assert sorted((t.span.start, t.span.end) for t in _twins(p.item_id)) == twins[p.pk]
    assert all(row.call_id and LLMCall.objects.filter(pk=row.call_id).exists() for row in job.rows.all())


def test_a_model_the_server_lacks_keeps_every_rule_made_error(sim, judges, researcher, settings, sent):
    study = _study(sim, judges, researcher, settings, name="no model", auto=False)
    campaign = study.campaign
    assert campaign.status == Campaign.Status.OPEN and not PlantedWritingJob.objects.filter(campaign=campaign)
    Campaign.objects.filter(pk=campaign.pk).update(status=Campaign.Status.DRAFT)
    started = Api(researcher)("post", f"/campaigns/{campaign.pk}/planted/write", {"model": "absent:1b"})
    assert started.status_code == 201, started.content
    body = started.json()
    assert set(body) == {"id", "campaign_id", "status", "done", "total", "message", "server", "model", "automatic",
                         "simulated", "rewritten", "unusable", "kept"}
    assert (body["model"], body["server"], body["automatic"]) == ("absent:1b", sim.url, False)
    assert job_execute(PlantedWritingJob, body["id"]) == JobStatus.DONE
    done = Api(researcher)("get", f"/planted-writing/{body['id']}").json()
    assert done["kept"] == done["total"] == len(study.planted()) > 0
    assert all("does not have absent:1b" in row.note for row in PlantedWriting.objects.filter(job_id=body["id"]))


def test_the_api_refuses_a_bad_body_a_non_draft_and_a_second_job(sim, judges, researcher, settings, sent):
    study = _study(sim, judges, researcher, settings, name="refusals", auto=False)
    campaign = study.campaign
    url = f"/campaigns/{campaign.pk}/planted/write"
    assert Api(judges[0])("post", url).status_code == 403
    assert Api(researcher)("post", "/campaigns/999999/planted/write").status_code == 404
    late = Api(researcher)("post", url)  # a campaign with planted outputs only opens at once without the setting
    assert late.status_code == 409 and "only a draft" in late.json()["detail"], late.content
    Campaign.objects.filter(pk=campaign.pk).update(status=Campaign.Status.DRAFT)
    api = Api(researcher)
    for body, field in [({"server": 5}, "server"), ({"model": "m" * 201}, "model"), ({"colour": "red"}, "colour"),
                        ({"server": "ftp://example.org"}, "server"), ({"server": "http://10.9.9.9:11434"}, "server")]:
        answer = api("post", url, body)
        assert answer.status_code == 400 and answer.json()["detail"].startswith(f"{field}:"), (body, answer.content)
    raw = api.client.post(f"/api{url}", data="not json", content_type="application/json", **api.auth)
    assert raw.status_code == 400 and raw.json()["detail"].startswith("body:"), raw.content
    assert not PlantedWritingJob.objects.filter(campaign=campaign).exists()
    first = api("post", url, {"model": WRITER})
    assert first.status_code == 201 and first.json()["model"] == WRITER
    again = api("post", url)
    assert again.status_code == 409 and f"Job {first.json()['id']}" in again.json()["detail"]
    bare = factories.campaign("bare draft", campaign.dataset, [], [], status=Campaign.Status.DRAFT)
    none = api("post", f"/campaigns/{bare.pk}/planted/write")
    assert none.status_code == 409 and "no planted outputs" in none.json()["detail"], none.content


def test_the_checks_page_starts_the_job_and_shows_its_outcomes_escaped(sim, judges, researcher, settings, sent,
                                                                       client):
    study = _study(sim, judges, researcher, settings, name="page", auto=False, decoys=0.3)
    campaign = study.campaign
    assert campaign.status == Campaign.Status.DRAFT and not PlantedWritingJob.objects.filter(campaign=campaign)
    client.force_login(researcher)
    page = client.get(f"/campaigns/{campaign.pk}/decoys/").content.decode()
    assert 'id="planted-write"' in page and f'placeholder="{SUPERVISOR}"' in page
    marked = "<b>Varnholt</b>"

    def tagged(request):
        if PROMPT_MARK not in request.prompt:
            return None
        output = next(p.original.output for p in study.planted() if p.original.output in request.prompt)
        return "<text>" + re.sub(r"\b[A-Z][a-z]+ [A-Z][a-z]+\b", marked, output, count=1) + "</text>"

    sim.configure(answer=tagged)
    answer = client.post(f"/campaigns/{campaign.pk}/planted/write/", {"model": WRITER, "server": ""})
    job = study.job()
    assert answer.status_code == 302 and answer["Location"] == f"/campaigns/planted-writing/{job.pk}/"
    assert (job.model, job.automatic, job.created_by) == (WRITER, False, researcher)
    assert job_execute(PlantedWritingJob, job.pk) == JobStatus.DONE
    job_page = client.get(f"/campaigns/planted-writing/{job.pk}/").content.decode()
    rewritten = job.rows.filter(outcome=Outcome.REWRITTEN).count()
    assert rewritten and job_page.count('data-outcome="rewritten"') == rewritten and "data-simulated" in job_page
    assert marked not in job_page and "&lt;b&gt;Varnholt&lt;/b&gt;" in job_page  # the model's text is escaped
    checks_page = client.get(f"/campaigns/{campaign.pk}/decoys/").content.decode()
    assert 'id="planted-writing-status" data-status="done"' in checks_page
    assert f"{rewritten} rewritten" in checks_page


def test_machine_spans_after_a_longer_change_move_by_its_length_and_those_before_stay(sim, judges, researcher,
                                                                                     settings, sent):
    study = _study(sim, judges, researcher, settings, name="shifted")
    planted = study.planted()
    longer = "Bartholomew Quillmere"

    def renamed(request):
        """The player's name (in the second sentence) becomes a longer invented one."""
        if PROMPT_MARK not in request.prompt:
            return None
        output = next(p.original.output for p in planted if p.original.output in request.prompt)
        name = re.search(r"(?<=\. )[A-Z][a-z]+ [A-Z][a-z]+", output)
        return f"<text>{output[:name.start()]}{longer}{output[name.end():]}</text>"

    sim.configure(answer=renamed)
    job = study.job()
    assert job_execute(PlantedWritingJob, job.pk) == JobStatus.DONE
    moved = stayed = 0
    for p in study.planted():
        row = job.rows.get(planted=p)
        if row.outcome != Outcome.REWRITTEN:
            assert "machine span" in row.note  # the name lay inside a machine span: the rule-made error stays
            continue
        original = p.original.output
        shift = len(longer) - len(p.before)
        assert p.after == longer and shift != 0 and p.item.output[p.start:p.end] == longer
        for twin in _twins(p.item_id):
            source, span = twin.original, twin.span
            if source.start is None:
                continue
            if source.start >= p.start + len(p.before):
                assert (span.start, span.end) == (source.start + shift, source.end + shift)
                moved += 1
            else:
                assert (span.start, span.end) == (source.start, source.end) and source.end <= p.start
                stayed += 1
            if original[source.start:source.end] == span.text:
                assert p.item.output[span.start:span.end] == span.text
    assert moved and stayed, (moved, stayed)


def test_no_job_starts_by_itself_when_the_server_is_away_and_a_paused_job_keeps_the_draft_closed(
        sim, judges, researcher, settings, sent, allow_ollama):
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        away = f"http://127.0.0.1:{probe.getsockname()[1]}"  # nobody listens there once the socket is closed
    allow_ollama(sim.url, away)
    settings.LLM_RETRY = {"transport_retries": 0, "backoff": 0.0}
    study = _study(sim, judges, researcher, settings, name="away", moved_to=away)
    assert study.campaign.status == Campaign.Status.DRAFT  # the setting is on: a draft, whether or not a job starts
    assert not PlantedWritingJob.objects.filter(campaign=study.campaign).exists() and sent == []
    started = Api(researcher)("post", f"/campaigns/{study.campaign.pk}/planted/write")  # by hand: no probe
    assert started.status_code == 201 and started.json()["server"] == away, started.content
    job = study.job()
    assert job_execute(PlantedWritingJob, job.pk) == JobStatus.PAUSED
    job.refresh_from_db()
    assert away in job.message and job.done == 0 and job.kept_message in job.message
    url = f"/campaigns/{study.campaign.pk}/open"
    refused = Api(researcher)("post", url)
    assert refused.status_code == 409 and "is paused" in refused.json()["detail"]
    assert Api(researcher)("post", f"/planted-writing/{job.pk}/cancel").status_code == 200
    assert Api(researcher)("post", url).status_code == 200
