"""A DHP run names its server by address like every job: an OpenAI-compatible one is spoken to as one.

Regression (issue 24, defect 5): DHP and the perturber opened an Ollama client by hand, so a run on
`openai+http://...` was accepted, then paused with "Cannot reach Ollama at openai+http://...".
"""

from __future__ import annotations

import pytest

from corpus.models import Item
from dhp.engine.kinds import parse_kinds
from dhp.models import DhpRun, DhpScore
from dhp.services.runs import dhp_create
from jobs.kinds import job_execute
from jobs.models import JobStatus
from tests.dhp.conftest import MODEL, N_ITEMS, make_dataset
from tests.ollama_sim import OllamaSim

pytestmark = pytest.mark.django_db(transaction=True)


def test_dhp_run_on_an_openai_compatible_server_completes(sim_config):
    dataset = make_dataset()
    with OllamaSim(sim_config) as sim:
        run = dhp_create(dataset=dataset, evaluator=MODEL, metrics=["coherence"],
                         kinds=parse_kinds("typo:major,llm-entities:minor"), samples=1, seed=3,
                         ollama_url=f"openai+{sim.url}", parallel=2)
        status = job_execute(DhpRun, run.pk)
        run = DhpRun.objects.get(pk=run.pk)
        assert status == JobStatus.DONE, run.message
        endpoints = {record.endpoint for record in sim.stats.log}
    assert "Ollama" not in run.message
    llm_items = Item.objects.filter(dataset=dataset, perturbation__kind="llm-entities:minor")
    assert llm_items.count() == N_ITEMS and all("eleven days" in i.output for i in llm_items)
    assert DhpScore.objects.filter(run=run, score__isnull=False).count() == N_ITEMS * 3  # originals + 2 kinds
    assert endpoints == {"openai-chat"}  # every request spoke the OpenAI-compatible dialect


@pytest.mark.strict_allowlist
def test_dhp_run_refuses_a_server_outside_the_allowlist(sim_config):
    dataset = make_dataset()
    with OllamaSim(sim_config) as sim:
        run = dhp_create(dataset=dataset, evaluator=MODEL, metrics=["coherence"], kinds=parse_kinds("typo:major"),
                         samples=1, seed=3, ollama_url=f"openai+{sim.url}", parallel=2, check=False)
        status = job_execute(DhpRun, run.pk)
        assert sim.stats.requests == 0
    run = DhpRun.objects.get(pk=run.pk)
    assert status == JobStatus.FAILED and "not an allowed LLM server" in run.message
