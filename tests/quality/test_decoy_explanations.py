"""Decoys explained by the evaluators' own models: the job end to end on the simulated Ollama (real HTTP on loopback,
through the official client, as runs are asked), its progress, cancel and resume, the draft it keeps closed, and
the explanation-only giveaway it removes."""

from __future__ import annotations

import re
import socket
from dataclasses import dataclass

import pytest
from celery import current_app
from django.db import connection

from annotator.models import Campaign
from evaluation.engine.parsing import parse_annotator_answer, parse_supervisor_answer
from evaluation.models import EvaluatorRun, LLMCall, LLMRole, RunCall
from evaluation.runs.launch import run_create
from jobs.kinds import job_execute
from jobs.lifecycle import job_requeue
from jobs.models import JobStatus
from quality.campaign_audit import campaign_cards
from quality.engine.audit import Card, decoy_audit
from quality.models import CheckSpan, DecoyExplanation, DecoyExplanationJob
from quality.services import CheckSettings, decoy_update
from studies.setup import CampaignSpec, campaign_create
from tests import factories
from tests.ollama_sim import FaultRule, OllamaSim, SimConfig
from tests.quality.conftest import Api, box, build_study

pytestmark = pytest.mark.django_db(transaction=True)

ANNOTATORS = ["ann-a:1b", "ann-b:1b"]
SUPERVISOR = "sup:1b"
SOLO = "solo:1b"
SIMULATED = re.compile(r'^\(simulated\) The phrase "(?P<quoted>.+)" is not supported by the given input\.$')
# What decoys said before this job existed: one of a few fixed sentences (the giveaway the audit caught).
SENTENCE_BANK = ('The figure "{}" does not match the input; the data gives a different value.',
                 '"{}" is not supported by the input data, which reports another name here.')
Outcome = DecoyExplanation.Outcome


@pytest.fixture
def sim(allow_ollama):
    with OllamaSim(SimConfig(models=[*ANNOTATORS, SUPERVISOR, SOLO], parallel=2)) as server:
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
    ensemble: EvaluatorRun
    solo: EvaluatorRun

    def decoys(self) -> list[CheckSpan]:
        return list(CheckSpan.objects.filter(campaign=self.campaign, role=CheckSpan.Role.DECOY)
                    .select_related("span__annotation__item", "campaign_run").order_by("pk"))

    def job(self) -> DecoyExplanationJob:
        return DecoyExplanationJob.objects.filter(campaign=self.campaign).latest("pk")


def _simulated_study(sim, judges, researcher, *, name: str = "voices", decoys: float = 0.4,
                     moved_to: str = "") -> SimStudy:
    """Box scores judged by an ensemble (two annotators and a supervisor) and a single model, both asked on the
    simulator, then a campaign with decoys over them (after the runs' server moved to `moved_to`, if given)."""
    data = factories.dataset(f"{name} data", input_headers=["Data"], output_header="Summary",
                             items=[{"external_id": f"g{i}", "inputs": box(i)[0], "output": box(i)[1]}
                                    for i in range(10)])
    ensemble = run_create(dataset=data, aspect_name="accuracy", annotators=ANNOTATORS, supervisor=SUPERVISOR,
                          ollama_url=sim.url, parallel=2)
    solo = run_create(dataset=data, aspect_name="accuracy", annotators=[SOLO], mode="single", ollama_url=sim.url,
                      parallel=2)
    for run in (ensemble, solo):
        assert job_execute(EvaluatorRun, run.pk) == JobStatus.DONE
    if moved_to:
        EvaluatorRun.objects.filter(pk__in=[ensemble.pk, solo.pk]).update(servers=[moved_to], ollama_url=moved_to)
    campaign = campaign_create(CampaignSpec(
        name=name, dataset=data, runs=[ensemble, solo], annotators=list(judges), aspects=["accuracy"], seed=7,
        checks=CheckSettings(decoys=decoys)), created_by=researcher)
    return SimStudy(campaign, ensemble, solo)


def _masked(explanation: str, text: str) -> str:
    """The explanation with its quotation of the marked words taken out: the evaluator's voice alone."""
    return explanation.replace(text, "<span>") if text else explanation


def test_creation_starts_the_job_and_each_decoy_is_explained_by_its_evaluators_model(sim, judges, researcher,
                                                                                     sent):
    study = _simulated_study(sim, judges, researcher)
    job = study.job()
    decoys = study.decoys()
    assert len(decoys) >= 10 and all(d.donor_id for d in decoys)  # each copies a real span, named on its row
    assert (job.status, job.automatic, job.total) == (JobStatus.PENDING, True, len(decoys))
    assert sent == [("quality.DecoyExplanationJob", [job.pk])]
    fallback = {d.pk: d.span.explanation for d in decoys}

    assert job_execute(DecoyExplanationJob, job.pk) == JobStatus.DONE
    job.refresh_from_db()
    assert (job.done, job.total, job.simulated) == (len(decoys), len(decoys), True)
    rows = {row.decoy_id: row for row in job.rows.select_related("call")}
    assert {row.outcome for row in rows.values()} == {Outcome.REWRITTEN}
    for decoy in study.decoys():
        row, span, item = rows[decoy.pk], decoy.span, decoy.span.annotation.item
        run = study.ensemble if decoy.campaign_run.run_id == study.ensemble.pk else study.solo
        model, role = (SUPERVISOR, LLMRole.SUPERVISOR) if run == study.ensemble else (SOLO, LLMRole.ANNOTATOR)
        assert row.model == model == row.call.model and row.before == fallback[decoy.pk]
        # The model was asked with the prompt it answered for this output in its run, then the stretch.
        own = RunCall.objects.get(run=run, item=item, role=role, model=model, attempt=0).call.prompt
        assert row.call.prompt.startswith(own.rstrip("\n")) and f'"{span.text}"' in row.call.prompt[len(own):]
        # Its answer is in the run's format, read by the run's parser; its error at the stretch is the decoy's now.
        parse = parse_supervisor_answer if role == LLMRole.SUPERVISOR else parse_annotator_answer
        parsed = parse(row.call.response)
        assert parsed.status == "ok" and [e.location for e in parsed.errors] == [span.text]
        assert span.explanation == parsed.errors[0].explanation and span.severity == parsed.errors[0].severity
        assert SIMULATED.match(span.explanation)["quoted"] == span.text
    # A second job finds every answer in the ledger: nothing is asked again.
    requests = sim.stats.requests
    second = Api(researcher)("post", f"/campaigns/{study.campaign.pk}/decoys/explain")
    assert second.status_code == 202, second.content
    assert job_execute(DecoyExplanationJob, second.json()["id"]) == JobStatus.DONE
    assert sim.stats.requests == requests


def test_the_draft_stays_closed_while_the_job_has_not_finished(sim, judges, researcher, sent):
    study = _simulated_study(sim, judges, researcher, name="closed")
    url = f"/campaigns/{study.campaign.pk}/open"
    pending = Api(researcher)("post", url, {"accept_audit": True})
    assert pending.status_code == 409 and "is pending" in pending.json()["detail"], pending.content
    seen: list[tuple[int, str]] = []

    def open_while_asked(request):
        if "### The error to report" in request.prompt and not seen:
            answer = Api(researcher)("post", url, {"accept_audit": True})  # from the server's thread, mid-job
            seen.append((answer.status_code, answer.json()["detail"]))
            connection.close()
        return None

    sim.configure(answer=open_while_asked)
    assert job_execute(DecoyExplanationJob, study.job().pk) == JobStatus.DONE
    assert seen and seen[0][0] == 409 and "is running" in seen[0][1], seen
    assert Campaign.objects.get(pk=study.campaign.pk).status == Campaign.Status.DRAFT
    opened = Api(researcher)("post", url, {"accept_audit": True})
    assert opened.status_code == 200 and opened.json()["status"] == "open", opened.content


def test_progress_pause_on_a_lost_server_and_resume_asks_only_what_is_left(sim, judges, researcher, sent, settings):
    settings.LLM_RETRY = {"transport_retries": 0, "backoff": 0.0}
    study = _simulated_study(sim, judges, researcher, name="paused")
    job = study.job()
    sim.configure(faults=[FaultRule(kind="error", nth=(4,), status=500)])
    sim.reset_stats()
    assert job_execute(DecoyExplanationJob, job.pk) == JobStatus.PAUSED
    job.refresh_from_db()
    before = job.rows.count()
    assert 0 < before == job.done < job.total and job.kept_message in job.message
    assert Api(researcher)("get", f"/decoy-explanations/{job.pk}").json()["done"] == before
    sim.configure(faults=[])
    sim.reset_stats()
    assert job_requeue(job, enqueue=False)
    assert job_execute(DecoyExplanationJob, job.pk) == JobStatus.DONE
    job.refresh_from_db()
    assert job.done == job.total == job.rows.count() == len(study.decoys())
    assert sim.stats.requests == job.total - before  # the decoys done before the pause are not asked again
    assert {row.outcome for row in job.rows.all()} == {Outcome.REWRITTEN}


def test_cancel_stops_at_the_next_batch_and_keeps_what_was_written(sim, judges, researcher, sent):
    study = _simulated_study(sim, judges, researcher, name="cancelled")
    job = study.job()
    fallback = {d.pk: d.span.explanation for d in study.decoys()}

    def cancel_once_asked(request):
        if "### The error to report" in request.prompt:
            DecoyExplanationJob.objects.filter(pk=job.pk).update(cancel_requested=True)
            connection.close()
        return None

    sim.configure(answer=cancel_once_asked, call_time=0.4, parallel=1)
    assert job_execute(DecoyExplanationJob, job.pk) == JobStatus.CANCELLED
    job.refresh_from_db()
    rows = {row.decoy_id: row for row in job.rows.all()}
    assert 0 < job.done == len(rows) < job.total and job.message == DecoyExplanationJob.cancelled_message
    for decoy in study.decoys():
        if decoy.pk in rows:
            assert SIMULATED.match(decoy.span.explanation)
        else:
            assert decoy.span.explanation == fallback[decoy.pk]  # not asked: its explanation is as it was
    assert not job.can_resume()


def test_the_explanation_only_giveaway_disappears(sim, judges, researcher, sent):
    """Decoy explanations from a fixed sentence bank are told apart by their wording alone (AUC near 1); once the
    evaluators' models have written them, decoy and real explanations read alike (AUC near chance)."""
    study = _simulated_study(sim, judges, researcher, name="giveaway", decoys=0.45)
    for n, decoy in enumerate(study.decoys()):
        decoy_update(decoy=decoy, explanation=SENTENCE_BANK[n % 2].format(decoy.span.text))

    def voices() -> list[Card]:
        """Every card of the campaign with only its explanation, the quotation of its marked words taken out."""
        return [Card(explanation=_masked(card.explanation, card.text), text="", label="", severity=None, category="",
                     ambiguous=False, match="exact", position=0.0, decoy=card.decoy)
                for card in campaign_cards(study.campaign)]

    def auc(cards: list[Card]) -> float:
        result = decoy_audit(cards, seed=1, resamples=200)
        assert result.auc is not None, result.reason
        return result.auc

    cards = voices()
    before, whole_before = auc(cards), auc(campaign_cards(study.campaign))
    assert before > 0.95
    assert job_execute(DecoyExplanationJob, study.job().pk) == JobStatus.DONE
    cards = voices()
    after, whole_after = auc(cards), auc(campaign_cards(study.campaign))
    assert after < 0.6, after
    real = {c.explanation for c in cards if not c.decoy}
    assert {c.explanation for c in cards if c.decoy} <= real  # every decoy now says what real cards say
    print(f"explanation-only AUC: sentence bank {before:.2f}, evaluators' models {after:.2f}; whole cards "
          f"{whole_before:.2f} -> {whole_after:.2f} ({sum(c.decoy for c in cards)} decoys, "
          f"{sum(not c.decoy for c in cards)} real cards)")


def test_decoys_without_a_model_at_hand_keep_their_explanation(sim, judges, researcher, sent):
    """A campaign over an imported run (no server) and a simulated one: only the latter's decoys are asked."""
    study = _simulated_study(sim, judges, researcher, name="mixed")
    imported = build_study(list(judges), name="imported", checks=CheckSettings(decoys=0.3), opened=False)
    assert not DecoyExplanationJob.objects.filter(campaign=imported.campaign).exists()  # nothing to ask: no job
    refused = Api(researcher)("post", f"/campaigns/{imported.campaign.pk}/decoys/explain")
    assert refused.status_code == 409 and "names no LLM server" in refused.json()["detail"], refused.content
    # The single model's run loses its server (as an imported run has none): its decoys are kept as written.
    EvaluatorRun.objects.filter(pk=study.solo.pk).update(servers=[], ollama_url="")
    solo = [d for d in study.decoys() if d.campaign_run.run_id == study.solo.pk]
    decoy = solo[0]
    job = study.job()
    assert job_execute(DecoyExplanationJob, job.pk) == JobStatus.DONE
    body = Api(researcher)("get", f"/decoy-explanations/{job.pk}").json()
    kept = job.rows.get(decoy_id=decoy.pk)
    assert kept.outcome == Outcome.KEPT and "names no LLM server" in kept.note
    assert CheckSpan.objects.get(pk=decoy.pk).span.explanation == decoy.span.explanation
    assert body["kept"] == len(solo) and body["rewritten"] == body["total"] - len(solo) > 0
    assert body["rewritten"] + body["unusable"] + body["kept"] == body["total"] == body["done"]


def test_an_unparseable_answer_keeps_the_explanation_and_is_counted(sim, judges, researcher, sent, settings):
    settings.LLM_RETRY = {"answer_attempts": 1, "repair": False}
    study = _simulated_study(sim, judges, researcher, name="garbled")
    fallback = {d.pk: d.span.explanation for d in study.decoys()}
    sim.configure(answer=lambda request: "I cannot help with that." if "### The error to report" in request.prompt
                  else None)
    job = study.job()
    assert job_execute(DecoyExplanationJob, job.pk) == JobStatus.DONE
    assert {d.pk: d.span.explanation for d in study.decoys()} == fallback
    body = Api(researcher)("get", f"/decoy-explanations/{job.pk}").json()
    assert body["unusable"] == body["total"] == len(fallback) and body["rewritten"] == 0
    assert all(row.call_id and LLMCall.objects.get(pk=row.call_id).response == "I cannot help with that."
               for row in job.rows.all())


def test_api_and_page_start_a_job_only_for_a_draft(sim, judges, researcher, sent, settings, client):
    settings.DECOY_EXPLAIN_AUTO = False
    study = _simulated_study(sim, judges, researcher, name="by hand")
    campaign = study.campaign
    assert not DecoyExplanationJob.objects.filter(campaign=campaign).exists()  # the setting is off: no job yet
    assert Api(judges[0])("post", f"/campaigns/{campaign.pk}/decoys/explain").status_code == 403
    client.force_login(researcher)
    page = client.get(f"/campaigns/{campaign.pk}/decoys/").content.decode()
    assert 'id="decoys-explain"' in page and "Rewrite decoy explanations with the evaluators' models" in page
    answer = client.post(f"/campaigns/{campaign.pk}/decoys/explain/")
    job = study.job()
    assert answer.status_code == 302 and answer["Location"] == f"/campaigns/decoy-explanations/{job.pk}/"
    assert (job.automatic, job.created_by, job.status) == (False, researcher, JobStatus.PENDING)
    again = Api(researcher)("post", f"/campaigns/{campaign.pk}/decoys/explain")
    assert again.status_code == 409 and f"Job {job.pk}" in again.json()["detail"]
    cancelled = Api(researcher)("post", f"/decoy-explanations/{job.pk}/cancel")
    assert cancelled.status_code == 200 and cancelled.json()["status"] == "cancelled", cancelled.content
    started = Api(researcher)("post", f"/campaigns/{campaign.pk}/decoys/explain")
    assert started.status_code == 202, started.content
    body = started.json()
    assert set(body) == {"id", "campaign_id", "status", "done", "total", "message", "automatic", "simulated",
                         "rewritten", "unusable", "kept"}
    assert (body["campaign_id"], body["status"], body["total"]) == (campaign.pk, "pending", len(study.decoys()))
    assert job_execute(DecoyExplanationJob, body["id"]) == JobStatus.DONE
    job_page = client.get(f"/campaigns/decoy-explanations/{body['id']}/").content.decode()
    assert job_page.count('data-outcome="rewritten"') == body["total"] and "data-simulated" in job_page
    decoys_page = client.get(f"/campaigns/{campaign.pk}/decoys/").content.decode()
    assert 'id="decoy-explanation-status" data-status="done"' in decoys_page
    Campaign.objects.filter(pk=campaign.pk).update(status=Campaign.Status.OPEN)
    late = Api(researcher)("post", f"/campaigns/{campaign.pk}/decoys/explain")
    assert late.status_code == 409 and "only a draft" in late.json()["detail"]


def test_no_job_starts_by_itself_when_the_server_is_away_and_a_paused_job_keeps_the_draft_closed(sim, judges,
                                                                                                 researcher, sent):
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        away = f"http://127.0.0.1:{probe.getsockname()[1]}"  # nobody listens there once the socket is closed
    study = _simulated_study(sim, judges, researcher, name="away", moved_to=away)
    assert not DecoyExplanationJob.objects.filter(campaign=study.campaign).exists() and sent == []
    started = Api(researcher)("post", f"/campaigns/{study.campaign.pk}/decoys/explain")  # by hand: no probe
    assert started.status_code == 202, started.content
    job = study.job()
    assert job_execute(DecoyExplanationJob, job.pk) == JobStatus.PAUSED
    job.refresh_from_db()
    assert away in job.message and job.done == 0
    url = f"/campaigns/{study.campaign.pk}/open"
    refused = Api(researcher)("post", url, {"accept_audit": True})
    assert refused.status_code == 409 and "is paused" in refused.json()["detail"]
    assert Api(researcher)("post", f"/decoy-explanations/{job.pk}/cancel").status_code == 200
    opened = Api(researcher)("post", url, {"accept_audit": True})
    assert opened.status_code == 200, opened.content
