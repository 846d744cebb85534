"""DHP with the OpeNLGauge ensemble and the distilled model as evaluators: evaluation runs over exactly the
originals and perturbed texts, their scores in the DHP run, and a rerun that asks nothing."""

from __future__ import annotations

import time

import pytest

from corpus.models import Annotation, Item
from dhp.engine.kinds import parse_kinds
from dhp.models import DhpRun, DhpScore
from dhp.services.perturbing import perturb_dataset
from dhp.services.runs import dhp_create
from evaluation.engine.presets import get_preset
from evaluation.models import EvaluatorRun
from evaluation.runs.launch import run_create
from evaluation.selectors import own_runs
from jobs.kinds import job_execute
from jobs.lifecycle import job_heartbeat, job_requeue
from jobs.models import JobStatus
from tests import factories
from tests.dhp.conftest import make_dataset
from tests.ollama_sim import FaultRule, OllamaSim, SimConfig

pytestmark = pytest.mark.django_db(transaction=True)
N = 5


def _dhp(dataset, evaluator: str, url: str) -> DhpRun:
    run = dhp_create(dataset=dataset, evaluator=evaluator, metrics=["coherence", "fluency"],
                     kinds=parse_kinds("typo:minor,word-delete:minor"), samples=5, seed=2, ollama_url=url, parallel=2)
    assert job_execute(DhpRun, run.pk) == JobStatus.DONE, DhpRun.objects.get(pk=run.pk).message
    return DhpRun.objects.get(pk=run.pk)


def test_ensemble_evaluator_scores_through_evaluation_runs(settings, client):
    settings.ENSEMBLE_PRESET = "laptop"
    preset = get_preset("laptop")
    dataset = make_dataset(n=N)
    with OllamaSim(SimConfig(models=[*preset.annotators, preset.supervisor], parallel=2)) as sim:
        run = _dhp(dataset, "ensemble", sim.url)
        assert run.samples == 1  # temperature 0: one sample is all there is
        eval_runs = list(run.evaluator_runs.all())
        assert sorted(r.aspect.name for r in eval_runs) == ["coherence", "fluency"]
        texts = N * 3
        for eval_run in eval_runs:
            assert eval_run.status == JobStatus.DONE and len(eval_run.config["item_ids"]) == texts
            assert Annotation.objects.filter(source=eval_run, kind="ensemble").count() == texts
        assert DhpScore.objects.filter(run=run).count() == texts * 2
        ensemble_score = Annotation.objects.get(source=eval_runs[0], kind="ensemble", item__external_id="d0").score
        assert DhpScore.objects.get(run=run, item__external_id="d0", metric=eval_runs[0].aspect.name).score \
            == ensemble_score
        calls = sim.stats.requests
        assert run.llm_calls == calls == texts * 2 * (len(preset.annotators) + 1)
        assert len(run.results["perturbations"]) == 2
        # The evaluation runs belong to the DHP run: shown under it, not with the researchers' own runs.
        assert all(r.config["part_of"] == f"DHP run {run.pk}" for r in eval_runs)
        assert not set(own_runs().values_list("pk", flat=True)) & {r.pk for r in eval_runs}
        client.force_login(factories.user("dhp-admin", role="admin"))
        home = client.get("/").content.decode()
        dhp_page = client.get(f"/dhp/runs/{run.pk}/").content.decode()
        dataset_page = client.get(f"/datasets/{dataset.pk}/").content.decode()
        for eval_run in eval_runs:
            assert eval_run.label not in home and eval_run.label not in dataset_page
            assert f'href="/runs/{eval_run.pk}/"' in dhp_page
        again = _dhp(dataset, "ensemble", sim.url)
        assert sim.stats.requests == calls and again.llm_calls == 0 and again.cache_hits == calls
        assert again.results == run.results


def test_distilled_evaluator_uses_the_0_100_score():
    dataset = make_dataset(n=N)
    with OllamaSim(SimConfig(models=["small:1b"], parallel=2)) as sim:
        run = _dhp(dataset, "distilled:small:1b", sim.url)
    scores = list(DhpScore.objects.filter(run=run).values_list("score", flat=True))
    assert len(scores) == N * 3 * 2 and all(s is not None and 0 <= s <= 100 for s in scores)
    assert any(s > 5 for s in scores)  # the distilled model's own scale, not labels


def test_normal_runs_leave_perturbed_items_alone():
    dataset = make_dataset(n=N)
    perturb_dataset(dataset=dataset, kinds=parse_kinds("typo:minor"), seed=0)
    assert Item.objects.filter(dataset=dataset).count() == 2 * N
    run = run_create(dataset=dataset, aspect_name="fluency", mode="single", annotators=["x:1b"], check=False)
    assert run.total == N and "item_ids" not in run.config
    assert EvaluatorRun.objects.count() == 1


def test_heartbeat_beats_while_a_long_step_runs(settings):
    dataset = make_dataset(n=1)
    run = dhp_create(dataset=dataset, evaluator="ensemble", metrics=["fluency"], kinds=parse_kinds("typo:minor"),
                     samples=5, check=False)
    assert run.samples == 1 and run.notes == ["ensemble answers at temperature 0: one sample per text instead of 5"]
    with job_heartbeat(DhpRun, run.pk, every=0.05):
        time.sleep(0.3)
    assert DhpRun.objects.get(pk=run.pk).heartbeat_at is not None


def test_failed_evaluation_run_is_resumed_with_the_dhp_run(settings):
    settings.ENSEMBLE_PRESET = "laptop"
    preset = get_preset("laptop")
    dataset = make_dataset(n=3)
    fault = FaultRule(kind="error", model=preset.annotators[1], status=404, message="model not found")
    with OllamaSim(SimConfig(models=[*preset.annotators, preset.supervisor], parallel=2, faults=[fault])) as sim:
        run = dhp_create(dataset=dataset, evaluator="ensemble", metrics=["fluency"], kinds=parse_kinds("typo:minor"),
                         samples=1, ollama_url=sim.url, parallel=2)
        assert job_execute(DhpRun, run.pk) == JobStatus.FAILED
        eval_run = DhpRun.objects.get(pk=run.pk).evaluator_runs.get()
        assert eval_run.status == JobStatus.FAILED and "ollama pull" in DhpRun.objects.get(pk=run.pk).message
        sim.configure(faults=[])
        asked = sim.stats.requests
        assert job_requeue(run, enqueue=False)
        assert job_execute(DhpRun, run.pk) == JobStatus.DONE
        eval_run.refresh_from_db()
        assert eval_run.status == JobStatus.DONE
        # The first annotator's answers were kept: only the rest of the ensemble was asked.
        assert sim.stats.requests - asked == 6 * (len(preset.annotators) - 1 + 1)
