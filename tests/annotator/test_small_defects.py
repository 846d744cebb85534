"""Small defects a newcomer met: each fixed and seen by a test."""

from __future__ import annotations

import io

import pytest
from django.core.management import call_command

from comparison.models import ComparisonJob
from comparison.services.jobs import comparison_create
from dhp.models import SurveyWeights
from evaluation.models import EvaluatorRun
from jobs.kinds import job_execute
from tests import factories
from tests.ollama_sim import OllamaSim, SimConfig

pytestmark = pytest.mark.django_db


def test_an_expert_with_nothing_done_is_offered_start_not_resume(client):
    call_command("load_demo", stdout=io.StringIO())
    from accounts.models import User

    client.force_login(User.objects.get(username="expert1"))
    home = client.get("/").content.decode()
    assert "resume →" in home  # the demo's four sample judgments count as done
    from annotator.models import Assignment

    Assignment.objects.filter(annotator__username="expert1").update(status=Assignment.Status.TODO, phase="judging",
                                                                     finished_at=None)
    home = client.get("/").content.decode()
    assert "start →" in home and "resume →" not in home


def test_every_role_can_change_its_password(client, annotator_user):
    client.force_login(annotator_user)
    home = client.get("/").content.decode()
    assert 'href="/accounts/password/"' in home
    page = client.get("/accounts/password/")
    assert page.status_code == 200 and 'class="topbar"' in page.content.decode()
    done = client.post("/accounts/password/", {"old_password": "pass-1234", "new_password1": "a-new-pass-9876",
                                               "new_password2": "a-new-pass-9876"})
    assert done.status_code == 302 and done.url == "/accounts/password/done/"
    annotator_user.refresh_from_db()
    assert annotator_user.check_password("a-new-pass-9876")


def test_help_texts_have_no_raw_markdown(client, make_user):
    client.force_login(make_user("rita", role="researcher"))
    page = client.get("/datasets/import/").content.decode()
    assert "`" not in page


def test_the_admin_names_survey_weights_once():
    assert SurveyWeights._meta.verbose_name_plural == "survey weights"


def test_sample_run_has_no_message_in_error_red(client):
    call_command("load_demo", stdout=io.StringIO())
    from accounts.models import User

    client.force_login(User.objects.get(username="admin"))
    run = EvaluatorRun.objects.get(label="sample-ensemble")
    page = client.get(f"/runs/{run.pk}/").content.decode()
    assert 'class="error"' not in page and "hand-written sample annotations" in page


@pytest.mark.django_db(transaction=True)
def test_runs_a_comparison_makes_stay_off_the_home_page(client, allow_ollama):
    dataset = factories.dataset("cmp-set", task="summarization", input_headers=["Article"], output_header="Summary",
                                score_aspects=["relevance"],
                                items=[{"external_id": str(i), "inputs": {"Article": f"Story {i}."},
                                        "output": f"Summary {i}.", "human_scores": {"relevance": i}}
                                       for i in range(3)])
    with OllamaSim(SimConfig(models=["judge:1b"])) as sim:
        allow_ollama(sim.url)
        job = comparison_create(dataset=dataset, metrics="annotator:judge:1b", ollama_url=sim.url)
        job_execute(ComparisonJob, job.pk)
    run = EvaluatorRun.objects.get(dataset=dataset)
    assert run.config["part_of"] == f"comparison {job.pk}"
    client.force_login(factories.user("root", role="admin"))
    assert run.label not in client.get("/").content.decode()


def test_export_files_are_named_readably():
    from analytics.exports.jobs import _safe

    assert _safe("Demo: restaurants (data-to-text)") == "Demo-restaurants-data-to-text"
    assert _safe("tiny-study") == "tiny-study" and _safe("«»") == "dataset"


def test_input_panels_carry_no_internal_kind_tag(client):
    from accounts.models import User
    from annotator.models import Assignment

    call_command("load_demo", stdout=io.StringIO())
    expert = User.objects.get(username="expert1")
    client.force_login(expert)
    assignment = Assignment.objects.filter(annotator=expert, status=Assignment.Status.TODO).first()
    page = client.get(f"/work/{assignment.pk}/").content.decode()
    assert "<h2>Data</h2>" in page and "keyvalue" not in page
