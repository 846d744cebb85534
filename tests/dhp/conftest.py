"""A small summarization dataset and a simulated Ollama whose scores punish perturbed texts."""

from __future__ import annotations

import re

import pytest

from corpus.models import Dataset
from tests import factories
from tests.ollama_sim import SimConfig, SimRequest, judged_text

MODEL = "judge:1b"
N_ITEMS = 8
SENTENCES = [
    "The river flooded the old mill after three days of rain.",
    "Volunteers filled sandbags through the night.",
    "By morning the water had reached the main square.",
    "The town council promised new flood walls next year.",
]


def originals_text(i: int) -> str:
    rotated = SENTENCES[i % 4 :] + SENTENCES[: i % 4]
    return f"Report {i}: " + " ".join(rotated)


def make_dataset(name: str = "dhp-set", n: int = N_ITEMS) -> Dataset:
    return factories.dataset(name, task="summarization", input_headers=["Article"], output_header="Summary", items=[
        {"external_id": f"d{i}", "inputs": {"Article": f"Long article number {i} about a flood."},
         "output": originals_text(i)}
        for i in range(n)
    ])


def scoring_answer(request: SimRequest) -> str | None:
    """Originals score 4 or 5 (by sample seed), anything else 2 or 3: a discerning judge."""
    if "Score: N" not in request.prompt:
        return None
    text = judged_text(request.prompt).split("\n\nFinish your answer")[0].strip()
    seed = int(request.options.get("seed", 0))
    is_original = any(text == originals_text(i) for i in range(50))
    base = 4 if is_original else 2
    return f"The text reads as it should for this criterion.\nScore: {base + (seed + len(text)) % 2}"


def perturb_answer(request: SimRequest) -> str | None:
    """An LLM perturbation: swap a number in the text."""
    match = re.search(r"<original>\n(.*)\n</original>", request.prompt, re.DOTALL)
    if match is None:
        return None
    return f"<text>\n{match.group(1).replace('three days', 'eleven days')}\n</text>"


def sim_answer(request: SimRequest) -> str | None:
    return perturb_answer(request) or scoring_answer(request)


@pytest.fixture
def sim_config() -> SimConfig:
    return SimConfig(models=[MODEL], parallel=2, answer=sim_answer)
