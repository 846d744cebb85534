"""The run page tells the truth: actions inside the polled part, a paused clock, honest messages, checked input."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from corpus.models import Annotation
from evaluation.models import Aspect
from evaluation.selectors import run_progress
from jobs.lifecycle import job_cancel
from jobs.models import JobStatus
from tests import factories

pytestmark = pytest.mark.django_db


@pytest.fixture
def data():
    return factories.dataset("run page data", items=[{"external_id": "1", "output": "A text."}])


def test_a_paused_run_offers_resume_in_the_polled_part_and_stops_its_clock(client, data, make_user):
    admin = make_user("boss", role="admin")
    started = timezone.now() - timedelta(seconds=100)
    run = factories.run(data, "paused-run", status=JobStatus.PAUSED, total=10, done=4,
                        started_at=started, heartbeat_at=started + timedelta(seconds=40))
    client.force_login(admin)
    partial = client.get(f"/runs/{run.pk}/", HTTP_HX_REQUEST="true").content.decode()
    assert 'id="resume-run"' in partial and 'id="cancel-run"' in partial
    progress = run_progress(run)
    assert progress["eta_seconds"] is None and progress["elapsed_seconds"] == 40.0
    # Cancelling it after 4 calls says so (not "before it ran").
    assert job_cancel(run)
    run.refresh_from_db()
    assert run.message.startswith("Cancelled after 4 of 10 calls")
    assert 'id="resume-run"' not in client.get(f"/runs/{run.pk}/", HTTP_HX_REQUEST="true").content.decode()


def test_a_running_run_has_an_eta_and_no_resume(client, data, make_user):
    admin = make_user("boss2", role="admin")
    run = factories.run(data, "busy-run", status=JobStatus.RUNNING, total=10, done=5,
                        started_at=timezone.now() - timedelta(seconds=10))
    client.force_login(admin)
    partial = client.get(f"/runs/{run.pk}/", HTTP_HX_REQUEST="true").content.decode()
    assert 'id="resume-run"' not in partial and 'id="cancel-run"' in partial
    assert run_progress(run)["eta_seconds"] is not None


def test_the_eta_goes_at_the_pace_since_the_first_answer_not_the_cold_start(data):
    """A run that spent 60 s before its first answer (servers checked, the model loaded) and then answered 4
    more steps in 20 s has 5 s a step ahead of it, not the 16 s that 80 s over 5 steps would say."""
    from evaluation.models import LLMCall, LLMRole, RunCall

    now = timezone.now()
    run = factories.run(data, "cold-run", status=JobStatus.RUNNING, total=15, done=5,
                        started_at=now - timedelta(seconds=80))
    call = LLMCall.objects.create(cache_key="cold-1", model="m:1b", prompt="p", wall_seconds=50.0)
    first = RunCall.objects.create(run=run, item=data.items.get(), role=LLMRole.ANNOTATOR, model="m:1b", call=call)
    RunCall.objects.filter(pk=first.pk).update(created_at=now - timedelta(seconds=20))
    eta = run_progress(run)["eta_seconds"]
    assert eta == pytest.approx(10 * 5.0, rel=0.02)


def test_a_finished_sample_run_does_not_read_zero_of_zero_steps(client, data, researcher):
    run = factories.run(data, "sample-run", status=JobStatus.DONE)
    Annotation.objects.create(item=data.items.get(), source=run, kind="ensemble", aspect="accuracy", is_sample=True)
    client.force_login(researcher)
    html = client.get(f"/runs/{run.pk}/").content.decode()
    assert "0 / 0 steps" not in html and "hand-written sample annotations" in html


def test_run_form_checks_the_url_and_offers_aspects_as_a_choice(client, data, make_user, settings):
    settings.OLLAMA_URLS = [settings.OLLAMA_URL, "http://ollama:11434"]  # a service name an admin allowed
    client.force_login(make_user("boss3", role="admin"))
    page = client.get("/runs/new/")
    aspect_choices = dict(page.context["form"].fields["aspect"].choices)
    assert ("accuracy", "accuracy") in aspect_choices["data-to-text"]
    response = client.post("/runs/new/", {"dataset": data.pk, "aspect": "coherence", "ollama_url": "ftp://x:1",
                                          "all_aspects": "on", "parallel": 1, "mode": "ensemble",
                                          "outlier_rule": "leave_one_out"})
    errors = response.context["form"].errors
    assert "'ftp://x:1' is not an address of the form http://HOST:PORT" in errors["ollama_url"][0]
    assert "not an aspect of data-to-text" in errors["aspect"][0]
    assert response.content.decode().count("is not an address of the form") == 1  # each error shown once
    fine = client.post("/runs/new/", {"dataset": data.pk, "aspect": "coherence", "ollama_url": "http://ollama:11434",
                                      "all_aspects": "on", "parallel": 1, "mode": "ensemble",
                                      "outlier_rule": "leave_one_out"})
    assert "ollama_url" not in fine.context["form"].errors


def test_the_unparseable_list_says_when_it_shows_only_the_latest(client, data, researcher):
    run = factories.run(data, "many-failures", status=JobStatus.DONE, total=25, done=25)
    item = data.items.get()
    for n in range(25):
        Annotation.objects.create(item=item, source=run, kind="annotator", aspect=f"a{n}", model=f"m{n}",
                                  parse_status="failed", raw_answer=f"answer {n}")
    Annotation.objects.create(item=item, source=run, kind="ensemble", aspect="a0", parse_status="failed")
    run.failed_calls = 25
    run.save(update_fields=["failed_calls"])
    client.force_login(researcher)
    page = client.get(f"/runs/{run.pk}/").content.decode()
    assert "Unparseable answers (raw, the latest 20 of 25)" in page
    assert page.count("<details><summary>") == 20 and "<details><summary> on item" not in page
    assert "m24 on item" in page and "m4 on item" not in page  # the newest first


def test_the_run_form_offers_the_aspects_of_the_dataset_s_task_and_the_others_when_asked(client, data, make_user):
    """Every task has a fluency of its own: once the dataset is picked, only its task's aspects are offered (an
    htmx re-render keeps what was typed), and "show every task's aspects" brings the others back, its task first."""
    client.force_login(make_user("boss4", role="admin"))
    task = data.task.slug
    own = sorted(Aspect.objects.filter(task=data.task).values_list("name", flat=True))
    others = Aspect.objects.exclude(task=data.task)
    assert own and others.exists()
    picked = client.get("/runs/new/", {"dataset": data.pk, "annotators": "m1, m2"}, HTTP_HX_REQUEST="true")
    form = picked.context["form"]
    assert [value for value, _ in form.fields["aspect"].choices if value] == own
    assert picked.content.decode().lstrip().startswith('<form method="post" class="stacked" id="run-form">')
    assert 'hx-target="#id_aspect" hx-select="#id_aspect"' in picked.content.decode()  # only the aspect is swapped
    assert 'value="m1, m2"' in picked.content.decode()  # what was typed is kept
    wide = client.get("/runs/new/", {"dataset": data.pk, "all_aspects": "on"}).context["form"]
    groups = [label for label, _ in wide.fields["aspect"].choices[1:]]
    assert groups[0] == task and set(groups) == set(Aspect.objects.values_list("task__slug", flat=True))
    other = others.first()
    refused = client.post("/runs/new/", {"dataset": data.pk, "aspect": other.name, "parallel": 1, "mode": "ensemble",
                                         "outlier_rule": "leave_one_out"}).context["form"].errors
    if other.name not in own:
        assert "aspect" in refused
    nothing = client.get("/runs/new/").context["form"]  # no dataset yet: every task's, grouped
    assert len(nothing.fields["aspect"].choices) - 1 == Aspect.objects.values("task").distinct().count()


def test_a_preset_brings_its_answer_format_and_a_run_may_ask_for_another(data, settings):
    from evaluation.runs.launch import run_create

    tiny = run_create(dataset=data, aspect_name="accuracy", preset="tiny", check=False)
    assert tiny.config["answer_format"] == "json" and tiny.config["options"]["format"]["required"] == ["errors"]
    assert run_create(dataset=data, aspect_name="accuracy", preset="laptop", check=False).config["answer_format"] == \
        "text"
    named = run_create(dataset=data, aspect_name="accuracy", preset="tiny", annotators=["m1", "m2"],
                       supervisor="m1", check=False)
    assert named.config["answer_format"] == "text"  # models given by name: the paper's format
    asked = run_create(dataset=data, aspect_name="accuracy", preset="tiny", answer_format="text", check=False)
    assert asked.config["answer_format"] == "text" and "format" not in asked.config["options"]


def test_a_model_is_planned_at_its_pace_per_step_retries_and_repairs_included(data):
    """Steps whose answers are retried take all their calls' time: after the run's first step (its cold start,
    left out), two steps, one retried once, three calls of 10 s, is 15 s a step (not 10 s a call); time spent
    loading the model is not pace; a model never seen in a run is planned per call."""
    from evaluation.models import LLMCall, LLMRole, RunCall
    from evaluation.runs.modes import ModelPass
    from evaluation.runs.timings import model_works

    run = factories.run(data, "paced")
    item = data.items.get()
    other = factories.item(data, "2", "Another text.", position=2)
    cold = factories.item(data, "0", "The first text.", position=3)

    def call(n: int, seconds: float, model: str = "slow:1b", load: float = 0.0) -> LLMCall:
        return LLMCall.objects.create(cache_key=f"{model}-{n}", model=model, prompt=f"p{n}", wall_seconds=seconds,
                                      load_duration_ns=int(load * 1e9))

    RunCall.objects.create(run=run, item=cold, role=LLMRole.ANNOTATOR, model="slow:1b", call=call(0, 90.0))
    for step_item, attempt, n, load in ((item, 0, 1, 0.0), (item, 1, 2, 0.0), (other, 0, 3, 30.0)):
        RunCall.objects.create(run=run, item=step_item, role=LLMRole.ANNOTATOR, model="slow:1b", attempt=attempt,
                               call=call(n, 10.0 + load, load=load))
    call(9, 4.0, model="fresh:1b")  # answered outside any run (a preflight, a DHP score)
    works = {w.model: w for w in model_works({ModelPass("slow:1b", LLMRole.ANNOTATOR): 5,
                                              ModelPass("fresh:1b", LLMRole.ANNOTATOR): 5})}
    assert works["slow:1b"].call_seconds == 15.0 and works["fresh:1b"].call_seconds == 4.0
    assert works["slow:1b"].load_seconds == 30.0
    run.config = {**run.config, "answer_format": "json"}
    run.save(update_fields=["config"])
    as_json = model_works({ModelPass("slow:1b", LLMRole.ANNOTATOR): 5}, answer_format="json")[0]
    as_text = model_works({ModelPass("slow:1b", LLMRole.ANNOTATOR): 5}, answer_format="text")[0]
    assert as_json.call_seconds == 15.0 and as_text.call_seconds == 37.5  # no text step yet: the mean per call
