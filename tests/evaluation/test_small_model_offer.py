"""The small real model as run.sh --small-model offers it: allowlisted, labelled in the forms, marked on the pages of
what it answered (no server needed: the real-model tier, tests/real_model, runs it)."""

from __future__ import annotations

import re

import pytest

from comparison.models import ComparisonJob
from dhp.models import DhpRun
from evaluation.engine.presets import PRESETS, SMALL_MODEL_LABEL, SMALL_MODELS
from evaluation.runs.backends import allowed_server_names, server_choices
from tests import factories
from tests.conftest import REPO

pytestmark = pytest.mark.django_db
URL = "openai+http://127.0.0.1:8089"


def test_the_script_serves_the_names_the_app_knows():
    script = (REPO / "scripts" / "small_model.sh").read_text()
    served = re.search(r"^ALIASES=\((.*)\)$", script, re.MULTILINE)
    assert served and tuple(served.group(1).split()) == SMALL_MODELS
    assert PRESETS["tiny"].annotators == SMALL_MODELS and PRESETS["tiny"].supervisor == SMALL_MODELS[0]


@pytest.mark.strict_allowlist
def test_the_small_model_is_allowed_only_while_run_sh_says_so_and_offered_under_its_name(settings, client, make_user):
    settings.LLM_ALLOW_LOOPBACK = False
    settings.SMALL_MODEL_URL = URL
    assert URL in allowed_server_names()
    assert (URL, f"{SMALL_MODEL_LABEL}: {URL}") in server_choices()
    client.force_login(make_user("root", role="admin"))
    for path in ("/runs/new/", "/dhp/runs/new/", "/comparisons/new/"):
        page = client.get(path).content.decode()
        assert f'<option value="{URL}">{SMALL_MODEL_LABEL}: {URL}</option>' in page, path
    settings.SMALL_MODEL_URL = ""
    assert URL not in allowed_server_names()


def test_pages_mark_what_the_tiny_model_answered_and_nothing_else(client, make_user):
    client.force_login(make_user("root", role="admin"))
    dataset = factories.dataset("tiny-marks", items=[{"external_id": "a", "output": "Blue Door serves Thai food."}])
    tiny = factories.run(dataset, "tiny-run", config={"annotators": list(SMALL_MODELS), "supervisor": SMALL_MODELS[0]})
    other = factories.run(dataset, "other-run", config={"annotators": ["qwen2.5:7b"], "supervisor": "qwen2.5:7b"})
    page = client.get(f"/runs/{tiny.pk}/").content.decode()
    assert 'id="tiny-model-note"' in page and SMALL_MODEL_LABEL in page and "data-tiny-model" in page
    assert 'id="tiny-model-note"' not in client.get(f"/runs/{other.pk}/").content.decode()
    dhp = DhpRun.objects.create(dataset=dataset, evaluator=SMALL_MODELS[0], metrics=["accuracy"], kinds=["typo:major"],
                                config={"model": SMALL_MODELS[0], "perturb_model": SMALL_MODELS[0]})
    assert SMALL_MODEL_LABEL in client.get(f"/dhp/runs/{dhp.pk}/").content.decode()
    job = ComparisonJob.objects.create(dataset=dataset, metrics=["length", f"gptscore:{SMALL_MODELS[1]}"],
                                       aspects=["accuracy"])
    assert job.tiny_models() == [SMALL_MODELS[1]]
    assert SMALL_MODEL_LABEL in client.get(f"/comparisons/{job.pk}/").content.decode()
