"""DHP runs in-process (`--sync`) against the simulated Ollama: scores, statistics, cache, export."""

from __future__ import annotations

import json
import math
from io import StringIO

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.test import Client

from accounts.services.tokens import token_create
from corpus.models import Item
from dhp.engine.errors import DhpError
from dhp.engine.kinds import parse_kinds
from dhp.models import DhpRun, DhpScore
from dhp.services.perturbing import perturb_dataset
from dhp.services.runs import dhp_create
from dhp.services.surveys import survey_create, votes_save
from evaluation.models import LLMCall
from jobs.kinds import job_execute
from jobs.models import JobStatus
from tests.dhp.conftest import MODEL, N_ITEMS, make_dataset
from tests.ollama_sim import OllamaSim

pytestmark = pytest.mark.django_db(transaction=True)

KINDS = "typo:major,sentence-reorder:minor,llm-entities:minor"


def _run(dataset, url, **kw) -> DhpRun:
    run = dhp_create(dataset=dataset, evaluator=MODEL, metrics=["coherence", "fluency"],
                     kinds=parse_kinds(kw.pop("kinds", KINDS)), samples=2, seed=7, ollama_url=url, parallel=2, **kw)
    assert job_execute(DhpRun, run.pk) == JobStatus.DONE, DhpRun.objects.get(pk=run.pk).message
    return DhpRun.objects.get(pk=run.pk)


def test_dhp_run_scores_tests_and_a_rerun_makes_no_call(sim_config):
    dataset = make_dataset()
    with OllamaSim(sim_config) as sim:
        run = _run(dataset, sim.url)
        n_texts = N_ITEMS * 4  # originals + three kinds
        assert DhpScore.objects.filter(run=run).count() == n_texts * 2 * 2
        assert run.llm_calls == n_texts * 2 * 2 + N_ITEMS and run.cache_hits == 0  # scores + LLM perturbations
        llm_items = Item.objects.filter(dataset=dataset, perturbation__kind="llm-entities:minor")
        assert llm_items.count() == N_ITEMS
        assert all("eleven days" in i.output and "raw_answer" in i.perturbation for i in llm_items)
        requests = sim.stats.requests
        assert requests == n_texts * 2 * 2 + N_ITEMS  # scores + one LLM perturbation per item
        per_kind = {p["kind"]: p for p in run.results["perturbations"]}
        assert set(per_kind) == {"typo:major", "sentence-reorder:minor", "llm-entities:minor"}
        for record in per_kind.values():
            assert record["n_pairs"] == N_ITEMS and record["n_zero"] == 0, record
            assert record["p_hmp"] < 0.05 and record["D"] > 1  # the simulated judge discerns every kind
            assert record["D_ew"] is None
        assert run.results["summary"]["D_min"] > 1

        rerun = _run(dataset, sim.url)
        assert sim.stats.requests == requests  # everything came from the cache
        assert rerun.llm_calls == 0 and rerun.cache_hits == n_texts * 2 * 2
        assert rerun.results["perturbations"] == run.results["perturbations"]
        assert LLMCall.objects.count() == requests


def test_sample_calls_have_distinct_cache_keys(sim_config):
    dataset = make_dataset(n=3)
    with OllamaSim(sim_config) as sim:
        run = _run(dataset, sim.url, kinds="typo:minor")
    seeds = sorted({c.options["seed"] for c in LLMCall.objects.all()})
    assert len(seeds) == 2 and LLMCall.objects.count() == 3 * 2 * 2 * 2
    assert run.samples == 2


def test_export_json_follows_the_contract(sim_config, tmp_path):
    dataset = make_dataset()
    with OllamaSim(sim_config) as sim:
        run = _run(dataset, sim.url, kinds="typo:major,word-delete:minor")
    out = StringIO()
    call_command("export_dhp", "--run", str(run.pk), "--format", "json", stdout=out)
    record = json.loads(out.getvalue())
    assert list(record) == ["run", "dataset", "evaluator", "metrics", "seed", "samples", "weights",
                            "perturbations", "summary", "scores"]
    assert record["weights"] is None and record["samples"] == 2 and record["seed"] == 7
    first = record["perturbations"][0]
    assert list(first) == ["kind", "level", "method", "degree", "n_pairs", "n_zero", "tests", "p_hmp", "p_hmp_ew",
                           "D", "D_ew"]
    assert set(first["tests"]) == {"coherence", "fluency"} and set(first["tests"]["fluency"]) == {"statistic", "p"}
    assert set(record["summary"]) == {"D_avg", "D_min", "D_avg_ew", "D_min_ew"}
    assert record["summary"]["D_avg_ew"] is None
    score = record["scores"][0]
    assert set(score) == {"item_id", "kind", "metric", "original", "perturbed"}
    assert score["original"] in (4.5,) and score["perturbed"] in (2.5,)  # mean of the two samples: 4,5 / 2,3
    path = tmp_path / "dhp.csv"
    call_command("export_dhp", "--run", str(run.pk), "--format", "csv", "-o", str(path))
    lines = path.read_text().splitlines()
    assert lines[0].startswith("run,kind,level") and len(lines) == 1 + 2 * 2


def test_commands_refuse_bad_input_with_clear_messages(sim_config):
    make_dataset()
    with pytest.raises(CommandError, match="no dataset named 'nope'"):
        call_command("dhp", "--dataset", "nope", "--evaluator", MODEL, "--metrics", "fluency", "--sync")
    with pytest.raises(CommandError, match="no aspect"):
        call_command("dhp", "--dataset", "dhp-set", "--evaluator", MODEL, "--metrics", "fluency,tastiness", "--sync")
    with pytest.raises(CommandError, match="unknown perturbation kind"):
        call_command("perturb", "--dataset", "dhp-set", "--kinds", "typo:huge")
    with pytest.raises(CommandError, match="no DHP run"):
        call_command("export_dhp", "--run", "999", "--format", "json")


def test_perturb_command_is_idempotent_and_skips_what_does_not_fit():
    dataset = make_dataset(n=3)
    factories_out = StringIO()
    call_command("perturb", "--dataset", "dhp-set", "--kinds", "typo:minor,sentence-reorder:major", "--seed", "3",
                 stdout=factories_out)
    text = factories_out.getvalue()
    assert "typo:minor (k=10): 3 made" in text and "sentence-reorder:major (k=all): 3 made" in text
    again = StringIO()
    call_command("perturb", "--dataset", "dhp-set", "--kinds", "typo:minor,sentence-reorder:major", "--seed", "3",
                 stdout=again)
    assert "0 made, 3 already there" in again.getvalue()
    assert Item.objects.filter(dataset=dataset, derived_from__isnull=False).count() == 6
    short = make_dataset("short-set", n=2)
    Item.objects.filter(dataset=short).update(output="One sentence only")
    out = StringIO()
    call_command("perturb", "--dataset", "short-set", "--kinds", "sentence-reorder:minor", stdout=out)
    assert "skipped: it fits none" in out.getvalue() and "one sentence" in out.getvalue()


def test_results_page_pairs_page_and_api(sim_config, make_user):
    dataset = make_dataset(n=6)
    with OllamaSim(sim_config) as sim:
        run = _run(dataset, sim.url, kinds="typo:minor,sentence-reorder:major")
    researcher = make_user("reader", role="researcher")
    client = Client()
    client.force_login(researcher)
    page = client.get(f"/dhp/runs/{run.pk}/").content.decode()
    assert "data:image/svg+xml;base64," in page and "Every p-value" in page and "sentence-reorder:major" in page
    pairs = client.get(f"/dhp/runs/{run.pk}/pairs/?kind=typo:minor").content.decode()
    assert pairs.count('<ins class="diff">') >= 6 and pairs.count('<del class="diff">') >= 6
    assert client.get(f"/dhp/runs/{run.pk}/pairs/?kind=llm-insert:minor").status_code == 404
    assert "data:image/svg+xml" in client.get(f"/dhp/datasets/{dataset.pk}/").content.decode()
    api = Client().get(f"/api/dhp/runs/{run.pk}", HTTP_AUTHORIZATION=f"Bearer {token_create(user=researcher)}")
    body = api.json()
    assert body["status"] == "done" and len(body["perturbations"]) == 2
    assert set(body["perturbations"][0]) >= {"p_hmp", "p_hmp_asym", "tests", "D"}
    exported = Client().get(f"/api/dhp/runs/{run.pk}/export",
                            HTTP_AUTHORIZATION=f"Bearer {token_create(user=researcher)}").json()
    assert exported["run"] == run.pk and exported["summary"] == {**run.results["summary"]}


def test_pairs_page_escapes_dataset_text(make_user):
    dataset = make_dataset(n=2)
    Item.objects.filter(dataset=dataset).update(output="<script>alert(1)</script> The river rose. The town slept.")
    perturb_dataset(dataset=dataset, kinds=parse_kinds("sentence-reorder:minor"), seed=0)
    run = DhpRun.objects.create(dataset=dataset, evaluator="x", metrics=["fluency"], kinds=["sentence-reorder:minor"],
                                sizes={"sentence-reorder:minor": 2}, seed=0)
    client = Client()
    client.force_login(make_user("r2", role="researcher"))
    page = client.get(f"/dhp/runs/{run.pk}/pairs/").content.decode()
    assert "<script>alert" not in page and "&lt;script&gt;" in page


def test_run_with_survey_uses_and_records_expert_weights(sim_config, make_user):
    dataset = make_dataset(n=6)
    experts = [make_user(f"x{i}") for i in range(4)]
    survey = survey_create(task=dataset.task, title="w", metrics=["coherence", "fluency"],
                           issues=["typo", "word-delete"], experts=experts)
    for expert, metric in zip(experts, ["fluency", "fluency", "fluency", "coherence"], strict=True):
        votes_save(survey=survey, expert=expert, choices={"typo": metric})
    with OllamaSim(sim_config) as sim:
        run = _run(dataset, sim.url, kinds="typo:minor,sentence-reorder:minor", survey=survey)
    assert run.weights.version == 1 and run.weights.survey == survey
    record = json.loads(_export(run))
    assert record["weights"] == {"typo:minor": {"coherence": 0.25, "fluency": 0.75}}
    typo, reorder = record["perturbations"]
    p = {m: t["p"] for m, t in typo["tests"].items()}
    assert typo["p_hmp_ew"] == pytest.approx(1 / (0.25 / p["coherence"] + 0.75 / p["fluency"]))
    assert typo["D_ew"] == pytest.approx(math.log(typo["p_hmp_ew"]) / math.log(0.05))
    assert reorder["p_hmp_ew"] is None and reorder["D_ew"] is None  # the survey did not ask about reordering
    assert record["summary"]["D_min_ew"] == pytest.approx(typo["D_ew"])


def test_survey_without_answers_is_refused(make_user):
    dataset = make_dataset(n=2)
    survey = survey_create(task=dataset.task, title="empty", metrics=["coherence", "fluency"])
    with pytest.raises(CommandError, match="no answers yet"):
        call_command("dhp", "--dataset", dataset.name, "--evaluator", MODEL, "--metrics", "fluency",
                     "--survey", str(survey.pk), "--sync")


def _export(run: DhpRun) -> str:
    out = StringIO()
    call_command("export_dhp", "--run", str(run.pk), "--format", "json", stdout=out)
    return out.getvalue()


def test_run_without_scored_pairs_says_which_answers_were_unusable_and_shows_one():
    from tests.ollama_sim import SimConfig

    def chatty(request):
        if "Score: N" in request.prompt:
            return "This summary reads quite well overall, I would call it good."
        return None

    dataset = make_dataset("dhp-unusable", n=3)
    with OllamaSim(SimConfig(models=[MODEL], parallel=2, answer=chatty)) as sim:
        run = dhp_create(dataset=dataset, evaluator=MODEL, metrics=["coherence"],
                         kinds=parse_kinds("typo:major"), samples=1, seed=1, ollama_url=sim.url, parallel=2)
        assert job_execute(DhpRun, run.pk) == JobStatus.FAILED
    message = DhpRun.objects.get(pk=run.pk).message
    assert "no perturbation has scored pairs to test" in message
    assert "coherence: 6 of 6 answers without a usable score" in message
    assert "'Score: N'" in message and "I would call it good" in message


def test_dhp_run_on_the_default_simulator_ends_with_figures():
    """No scripted answers: the simulator's own replies to the scoring and perturbation prompts suffice."""
    from tests.ollama_sim import SimConfig

    dataset = make_dataset("dhp-default-sim", n=6)
    with OllamaSim(SimConfig(models=[MODEL], parallel=2)) as sim:
        run = _run(dataset, sim.url, kinds="typo:major,llm-insert:major,llm-grammar:minor")
    assert DhpScore.objects.filter(run=run, score__isnull=True).count() == 0
    per_kind = {p["kind"]: p for p in run.results["perturbations"]}
    assert set(per_kind) == {"typo:major", "llm-insert:major", "llm-grammar:minor"}
    assert all(p["n_pairs"] == 6 for p in per_kind.values())
    # Off-topic sentences are a visible flaw to the simulated judge: it scores them lower, and DHP sees it.
    assert per_kind["llm-insert:major"]["D"] > 0
    inserted = Item.objects.filter(dataset=dataset, perturbation__kind="llm-insert:major")
    assert inserted.count() == 6 and all(len(i.output) > len(i.derived_from.output) for i in inserted)


def test_unknown_preset_is_refused_and_a_known_one_is_recorded():
    dataset = make_dataset("dhp-preset", n=2)
    with pytest.raises(DhpError, match="unknown ensemble preset 'giant'"):
        dhp_create(dataset=dataset, evaluator=MODEL, metrics=["coherence"], kinds=parse_kinds("typo:major"),
                   preset="giant", check=False)
    run = dhp_create(dataset=dataset, evaluator="ensemble", metrics=["coherence"], kinds=parse_kinds("typo:major"),
                     preset="laptop", check=False)
    assert run.config["preset"] == "laptop"
