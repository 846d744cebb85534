"""A DHP run on a real model: rule-based perturbations of three demo texts scored by SmolLM2-135M, end to end."""

from __future__ import annotations

import json

import pytest

from dhp.engine.kinds import parse_kinds
from dhp.models import DhpRun, DhpScore
from dhp.services.runs import dhp_create
from jobs.kinds import job_execute
from jobs.models import JobStatus
from tests import factories
from tests.conftest import REPO
from tests.real_model.conftest import ALIASES, SmallModel

pytestmark = [pytest.mark.real_model, pytest.mark.django_db(transaction=True)]

KINDS = "typo:major,word-delete:major"
N_ITEMS = 2


def test_a_dhp_run_with_two_perturbation_kinds_runs_to_its_results(settings, small_model: SmallModel):
    settings.LLM_ANSWER_TOKENS = 160
    settings.LLM_RETRY = {"answer_attempts": 2, "repair": False, "backoff": 0.1}
    settings.OLLAMA_URLS = [small_model.server]
    rows = [json.loads(line) for line in (REPO / "demo" / "restaurants.jsonl").read_text().splitlines()]
    best = [r for r in rows if r["score"]["fluency"] >= 4][:N_ITEMS]  # DHP degrades good texts
    dataset = factories.dataset("real-dhp", task="data-to-text", input_headers=["Data"], output_header="Text", items=[
        {"external_id": f"{r['id']}-{r['system']}", "inputs": r["inputs"], "output": r["outputs"]["Text"]}
        for r in best
    ])
    run = dhp_create(dataset=dataset, evaluator=ALIASES[0], metrics=["fluency"], kinds=parse_kinds(KINDS),
                     samples=1, seed=3, ollama_url=small_model.server, parallel=1)
    status = job_execute(DhpRun, run.pk)
    run.refresh_from_db()
    assert not run.simulated and run.llm_calls > 0
    scores = list(DhpScore.objects.filter(run=run).select_related("call", "item"))
    assert len({s.item_id for s in scores}) == len(scores)  # each text scored once (one sample)
    assert sum(not s.item.perturbation for s in scores) == N_ITEMS  # every original
    perturbed = {s.item.perturbation["kind"] for s in scores if s.item.perturbation}
    assert perturbed == set(KINDS.split(","))
    for score in scores:
        assert score.call is not None and score.call.response.strip()  # answered; the raw text is kept
        assert score.call.prompt_tokens and score.call.cached_tokens is None
        assert score.score is None or 1 <= score.score <= 5
    unusable = sum(score.score is None for score in scores)
    if status == JobStatus.DONE:
        assert {row["kind"] for row in run.results["perturbations"]} == set(KINDS.split(","))
    else:  # a 135M model often writes no "Score: N" line: the run says so, with the count, instead of inventing p
        assert status == JobStatus.FAILED and unusable > 0, run.message
        assert "no perturbation has scored pairs" in run.message and "without a usable score" in run.message
