"""DHP on long items against servers with prompt caches: whatever a release's count means, no answer is thrown
away as prompt_too_long, no score pair loses a score, and a server that cannot tell a cut is named once."""

from __future__ import annotations

import pytest

from dhp.engine.kinds import parse_kinds
from dhp.models import DhpRun, DhpScore
from dhp.services.runs import dhp_create
from jobs.kinds import job_execute
from jobs.models import JobStatus
from tests import factories
from tests.dhp.conftest import MODEL, originals_text, sim_answer
from tests.ollama_sim import OllamaSim, SimConfig

pytestmark = pytest.mark.django_db(transaction=True)

ITEMS = 3
BOX = " ".join(f"player{i} PTS {10 + i % 30} REB {i % 12} AST {i % 9} |" for i in range(150))  # ~1,350 words


def _dataset():
    return factories.dataset("dhp-cache", task="summarization", input_headers=["Article"], output_header="Summary",
                             items=[{"external_id": f"d{i}", "inputs": {"Article": f"Game {i}: {BOX}"},
                                     "output": originals_text(i)} for i in range(ITEMS)])


@pytest.mark.parametrize(("profile", "count", "version", "unchecked"), [
    ("ollama", "full", "0.33.0", False),  # whole count, cached count beside it (PR #17943)
    ("ollama", "evaluated", "0.30.3", False),  # evaluated only (before PR #16428), but truncate:false guards
    ("ollama", "zero", "0.1.30", True),  # 2024: no count for a cached prompt, no truncate: nothing can tell a cut
    ("ollama-0.6", "evaluated", "0.6.8", True),  # a release said to count whole that counts evaluated tokens
    ("ollama-0.6", "full", "0.6.8", False),  # cuts silently, but its whole count shows a cut
    ("vllm", "full", "0.12.0", False),
    ("vllm", "evaluated", "0.12.0", False),  # no prompt_tokens_details: the count is still the whole prompt
    ("llamacpp", "full", "0.12.0", False),
    ("tgi2", "full", "0.12.0", False),  # no prefix cache before TGI 3.0
])
def test_a_dhp_run_on_long_items_loses_no_score_to_a_prompt_cache(profile, count, version, unchecked):
    dataset = _dataset()
    config = SimConfig(models=[MODEL], parallel=2, cache_slots=2, profile=profile, count=count, version=version,
                       answer=sim_answer, context_length=8_192)
    with OllamaSim(config) as sim:
        url = sim.url if profile.startswith("ollama") else f"openai+{sim.url}"
        run = dhp_create(dataset=dataset, evaluator=MODEL, metrics=["coherence"],
                         kinds=parse_kinds("typo:major,sentence-reorder:minor"), samples=2, seed=3,
                         ollama_url=url, parallel=2)
        status = job_execute(DhpRun, run.pk)
        stats = sim.stats
    run = DhpRun.objects.get(pk=run.pk)
    assert status == JobStatus.DONE, run.message
    assert stats.truncated == 0 and stats.refused_too_long == 0
    if profile == "tgi2":
        assert stats.prompt_tokens_cached == 0
    else:
        assert stats.prompt_tokens_cached > stats.prompt_tokens_sent // 3  # the cache did the work
    problems = run.config.get("problems", {})
    assert problems.get("prompt_too_long", 0) == 0
    assert DhpScore.objects.filter(run=run).count() == ITEMS * 3 * 2
    assert not DhpScore.objects.filter(run=run, score__isnull=True).exists()
    assert all(s["original"] is not None and s["perturbed"] is not None for s in run.results["scores"])
    named = [key for key in problems if key.startswith("truncation_unchecked:")]
    assert named == ([f"truncation_unchecked: {sim.url}"] if unchecked else [])
