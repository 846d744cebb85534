"""Real answers of a tiny model (SmolLM2-135M, collected by the real-model tier into tests/data/smollm2_answers.jsonl):
every one is read or refused with its reason, and every location either cuts its output or says why it is absent."""

from __future__ import annotations

import pytest

from bench.small_model_answers import DEFAULT_ANSWERS, readings

ANSWERS = readings(DEFAULT_ANSWERS)


def test_the_fixture_holds_real_answers_of_both_names_over_both_aspects():
    records = [r.record for r in ANSWERS]
    assert len(records) >= 20
    assert {r["model"] for r in records} == {"smollm2-135m", "smollm2-135m-b"}
    assert {r["aspect"] for r in records} == {"accuracy", "fluency"}
    assert all(r["answer"].strip() and r["prompt_tokens"] > 0 for r in records)


@pytest.mark.parametrize("reading", ANSWERS, ids=lambda r: f"{r.record['item']}-{r.record['system']}-"
                         f"{r.record['aspect']}-{r.record['role']}-{r.record['model']}-{r.record['attempt']}")
def test_every_real_answer_is_read_or_refused_with_a_reason(reading):
    parsed = reading.parsed
    assert parsed.status in ("ok", "partial", "failed")
    if parsed.status == "failed":
        assert parsed.problems and not parsed.errors and parsed.score is None
    else:
        assert parsed.score is not None or parsed.errors or parsed.no_errors_declared
    assert len(reading.unfound) == reading.matches.count("none")
    assert all(reason for reason in reading.unfound)
