"""DHP scoring and the perturber go through the same context budget and failure rules as evaluator runs
(issue 21): a text too long for the model is not sent, is counted, and the run completes."""

from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from dhp.models import DhpRun, DhpScore
from jobs.models import JobStatus
from tests import factories
from tests.dhp.conftest import MODEL, N_ITEMS, originals_text, sim_answer
from tests.ollama_sim import OllamaSim, SimConfig

pytestmark = pytest.mark.django_db(transaction=True)


def _dataset():
    items = [{"external_id": f"d{i}", "inputs": {"Article": f"Long article number {i} about a flood."},
              "output": originals_text(i)} for i in range(N_ITEMS)]
    items[0]["output"] = "The river rose. " * 2_000  # far beyond the model's 4096 tokens
    return factories.dataset("dhp-long", task="summarization", input_headers=["Article"], output_header="Summary",
                             items=items)


def test_dhp_run_refuses_a_too_long_text_counts_it_and_completes():
    _dataset()
    config = SimConfig(models=[MODEL], parallel=2, answer=sim_answer, profile="ollama", context_length=4_096)
    out, err = StringIO(), StringIO()
    with OllamaSim(config) as sim:
        call_command("dhp", dataset="dhp-long", evaluator=MODEL, metrics="coherence", kinds="typo:major", samples=2,
                     seed=5, ollama_url=sim.url, parallel=2, sync=True, stdout=out, stderr=err)
        assert sim.stats.truncated == 0 and sim.stats.refused_too_long == 0
        sent = {r.options["num_ctx"] for r in sim.stats.log}
    run = DhpRun.objects.get(pk=int(out.getvalue().split()[0]))
    assert run.status == JobStatus.DONE, run.message
    # the long original and its typo version: 2 texts x 2 samples are not sent
    assert run.config["problems"] == {"prompt_too_long": 4, "answer_cut": 0}
    assert "prompt_too_long: 4 pair(s); answer_cut: 0 pair(s)" in err.getvalue()
    assert DhpScore.objects.filter(run=run, score__isnull=True).count() == 4
    assert len(sent) == 1 and sent.pop() <= 4_096
    assert run.results["perturbations"][0]["n_pairs"] == N_ITEMS - 1


def test_dhp_run_on_an_out_of_memory_server_pauses_with_its_message():
    _dataset()
    config = SimConfig(models=[MODEL], parallel=2, answer=sim_answer, profile="ollama", oom_models=(MODEL,))
    out = StringIO()
    with OllamaSim(config) as sim, pytest.raises(CommandError):
        call_command("dhp", dataset="dhp-long", evaluator=MODEL, metrics="coherence", kinds="typo:major", samples=1,
                     seed=5, ollama_url=sim.url, parallel=2, sync=True, stdout=out, stderr=StringIO())
    run = DhpRun.objects.get(pk=int(out.getvalue().split()[0]))
    assert run.status == JobStatus.PAUSED and "requires more system memory" in run.message and MODEL in run.message
