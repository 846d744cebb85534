"""DHP runs pause when Ollama is away and resume from the cache; claims, cancel and resume; editable sizes;
the admin pages that create runs and surveys."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.core.exceptions import ValidationError
from django.test import Client
from django.utils import timezone

from accounts.services.tokens import token_create
from corpus.models import Item
from dhp.engine.kinds import parse_kinds
from dhp.models import DhpRun, PerturbationSizes, Survey
from dhp.services.perturbing import perturb_dataset
from dhp.services.runs import dhp_create
from jobs.kinds import job_execute
from jobs.lifecycle import job_claim, job_requeue, jobs_needing_recovery
from jobs.models import JobStatus
from tests import factories
from tests.dhp.conftest import MODEL, make_dataset
from tests.ollama_sim import OllamaSim


def _client(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


@pytest.mark.django_db(transaction=True)
def test_unreachable_server_pauses_then_resume_finishes_from_where_it_stopped(sim_config):
    dataset = make_dataset(n=4)
    run = dhp_create(dataset=dataset, evaluator=MODEL, metrics=["fluency"], kinds=parse_kinds("typo:minor"),
                     samples=2, ollama_url="http://127.0.0.1:9", check=False)
    assert job_execute(DhpRun, run.pk) == JobStatus.PAUSED
    run.refresh_from_db()
    assert "Cannot reach Ollama" in run.message and run.finished_at is None
    assert Item.objects.filter(dataset=dataset, derived_from__isnull=False).count() == 4  # kept
    with OllamaSim(sim_config) as sim:
        DhpRun.objects.filter(pk=run.pk).update(ollama_url=sim.url)
        assert job_requeue(run, enqueue=False)
        assert job_execute(DhpRun, run.pk) == JobStatus.DONE
        assert sim.stats.requests == 8 * 2


@pytest.mark.django_db
def test_claim_takes_pending_and_stale_runs_only(settings):
    settings.RUN_STALE_SECONDS = 60
    dataset = make_dataset(n=2)
    run = dhp_create(dataset=dataset, evaluator=MODEL, metrics=["fluency"], kinds=parse_kinds("typo:minor"),
                     check=False)
    assert job_claim(DhpRun, run.pk, "a")
    assert not job_claim(DhpRun, run.pk, "b")  # running, fresh heartbeat: another worker has it
    assert jobs_needing_recovery(DhpRun) == []
    DhpRun.objects.filter(pk=run.pk).update(heartbeat_at=timezone.now() - timedelta(seconds=61))
    assert jobs_needing_recovery(DhpRun) == [run.pk]
    assert job_claim(DhpRun, run.pk, "c") and DhpRun.objects.get(pk=run.pk).celery_task_id == "c"


@pytest.mark.django_db
def test_cancel_and_resume_through_api_and_pages(make_user):
    dataset = make_dataset(n=2)
    run = dhp_create(dataset=dataset, evaluator=MODEL, metrics=["fluency"], kinds=parse_kinds("typo:minor"),
                     check=False)
    admin, annotator = make_user("adm", role="admin"), make_user("ann", role="annotator")
    auth = {"HTTP_AUTHORIZATION": f"Bearer {token_create(user=admin)}"}
    assert Client().post(f"/api/dhp/runs/{run.pk}/cancel",
                         HTTP_AUTHORIZATION=f"Bearer {token_create(user=annotator)}").status_code == 403
    cancelled = Client().post(f"/api/dhp/runs/{run.pk}/cancel", **auth)
    assert cancelled.status_code == 200 and cancelled.json()["status"] == "cancelled"
    assert Client().post(f"/api/dhp/runs/{run.pk}/cancel", **auth).status_code == 409
    assert Client().post(f"/api/dhp/runs/{run.pk}/resume", **auth).status_code == 409
    DhpRun.objects.filter(pk=run.pk).update(status=JobStatus.FAILED)
    assert _client(admin).post(f"/dhp/runs/{run.pk}/resume/").status_code == 302
    assert DhpRun.objects.get(pk=run.pk).status == JobStatus.PENDING
    assert _client(annotator).get(f"/dhp/runs/{run.pk}/").status_code == 403


@pytest.mark.django_db
def test_admin_sizes_override_the_papers_k():
    dataset = make_dataset(n=3)
    PerturbationSizes.objects.create(task=dataset.task, sizes={"typo:minor": 3})
    reports = perturb_dataset(dataset=dataset, kinds=parse_kinds("typo:minor,char-delete:minor"), seed=0)
    assert [r.k for r in reports] == [3, 10]
    edits = [len(i.perturbation["edits"]) for i in Item.objects.filter(perturbation__kind="typo:minor")]
    assert edits == [3, 3, 3]


@pytest.mark.django_db
def test_admin_pages_create_a_survey_and_a_run(make_user, settings):
    settings.OLLAMA_URLS = [settings.OLLAMA_URL, "http://127.0.0.1:9"]  # the form offers the allowed servers only
    admin = make_user("chief", role="admin")
    expert = make_user("exp", role="annotator")
    client = _client(admin)
    assert client.get("/dhp/surveys/new/").status_code == 200
    created = client.post("/dhp/surveys/new/", {"task": "summarization", "title": "T", "metrics": "coherence,fluency",
                                                 "issues": ["typo", "swap-ending"], "experts": [expert.pk]})
    survey = Survey.objects.get()
    assert created.status_code == 302 and survey.issues == ["typo", "swap-ending"]
    bad = client.post("/dhp/surveys/new/", {"task": "summarization", "metrics": "coherence,tastiness"})
    assert bad.status_code == 200 and "no aspect" in bad.content.decode()
    dataset = make_dataset(n=2)
    page = client.post("/dhp/runs/new/", {"dataset": dataset.pk, "evaluator": MODEL, "metrics": "fluency",
                                          "kinds": ["typo:minor"], "samples": 2, "seed": 0,
                                          "ollama_url": "http://127.0.0.1:9"})
    assert page.status_code == 200 and "Cannot reach Ollama at http://127.0.0.1:9" in page.content.decode()
    assert not DhpRun.objects.exists()
    elsewhere = client.post("/dhp/runs/new/", {"dataset": dataset.pk, "evaluator": MODEL, "metrics": "fluency",
                                               "kinds": ["typo:minor"], "samples": 2, "seed": 0,
                                               "ollama_url": "http://10.0.0.1:11434"})
    assert elsewhere.status_code == 200 and "Select a valid choice" in elsewhere.content.decode()
    assert factories.task("summarization").dhp_surveys.count() == 1


@pytest.mark.django_db
def test_sizes_are_checked_when_an_admin_edits_them():
    task = factories.task("summarization")
    for sizes, message in (({"typo": 3}, "not a kind with a size"), ({"typo:minor": 0}, "whole number"),
                           ({"llm-grammar:minor": 2}, "not a kind with a size"), ([], "Give an object"),
                           ({"sentence-reorder:minor": 3}, "swap two")):
        with pytest.raises(ValidationError, match=message):
            PerturbationSizes(task=task, sizes=sizes).full_clean()
    PerturbationSizes(task=task, sizes={"typo:minor": 4, "sentence-reorder:major": 0}).full_clean()
