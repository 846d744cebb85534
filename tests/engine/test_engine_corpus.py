"""Corpus tests: every hand-written answer parses and aligns as expected; match-kind shares are reported."""

from __future__ import annotations

from collections import Counter

import pytest
from engine_corpus import CASES, Case, offsets

from evaluation.engine.alignment import align_location
from evaluation.engine.parsing import ParsedAnswer, parse_annotator_answer, parse_supervisor_answer

MATCH_KINDS = ("exact", "normalized", "fuzzy", "none")


def _parse(case: Case) -> ParsedAnswer:
    if case.kind == "supervisor":
        return parse_supervisor_answer(case.answer)
    return parse_annotator_answer(case.answer)


def corpus_match_shares() -> dict[str, float]:
    """Return the share of corpus locations (one per aligned span) matched exact/normalized/fuzzy/none.

    Locations of None (omissions) are counted as "none" too: they have no span in the text.
    """
    counts: Counter[str] = Counter()
    for case in CASES:
        for error in _parse(case).errors:
            for span in align_location(error.location, case.output, explanation=error.explanation):
                counts[span.match] += 1
    total = sum(counts.values())
    return {kind: counts[kind] / total for kind in MATCH_KINDS} | {"total_spans": float(total)}


def test_corpus_size_and_coverage() -> None:
    assert len(CASES) >= 60
    assert len({c.id for c in CASES}) == len(CASES)
    covered = {tag for c in CASES for tag in c.covers}
    required = {
        "markdown-bold", "markdown-headers", "code-fence", "numbering-dot", "numbering-hash", "numbering-dash",
        "numbering-bold", "field-case", "quoted-straight", "quoted-curly", "quoted-backtick", "location-none",
        "location-na", "location-omission", "location-missing", "location-comment-paren",
        "location-comment-dash", "two-spans-ellipsis", "severity-fraction", "severity-words",
        "severity-with-word", "label-case", "label-with-number", "label-bold", "score-numeric",
        "score-fraction", "no-error", "missing-severity", "missing-location", "missing-score",
        "multiline-explanation", "trailing-chatter", "failed", "normalized-tokenization",
        "normalized-case", "normalized-quotes", "normalized-dash", "normalized-parens",
        "normalized-trailing-punct", "normalized-whitespace", "fuzzy-typo", "hallucinated",
        "occurrence-context", "occurrence-ambiguous", "supervisor",
    }
    assert required <= covered, sorted(required - covered)


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_corpus_parse(case: Case) -> None:
    answer = _parse(case)
    assert answer.status == case.status, answer.problems
    assert answer.score_label == case.label
    assert answer.score == case.score
    assert answer.no_errors_declared == case.no_errors
    assert [(err.location, err.severity) for err in answer.errors] == [
        (exp.location, exp.severity) for exp in case.errors
    ]


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_corpus_alignment(case: Case) -> None:
    answer = _parse(case)
    for error, expected in zip(answer.errors, case.errors, strict=True):
        spans = align_location(error.location, case.output, explanation=error.explanation)
        assert [s.match for s in spans] == [p.match for p in expected.parts], spans
        for span, part in zip(spans, expected.parts, strict=True):
            want = offsets(case.output, part)
            got = None if span.start is None else (span.start, span.end)
            assert got == want, (span, part)
            assert span.ambiguous == part.ambiguous, span
            if span.start is not None:
                assert case.output[span.start : span.end] == span.matched_text


def test_corpus_match_shares_reported() -> None:
    shares = corpus_match_shares()
    print("corpus match shares:", {k: round(v, 3) for k, v in shares.items()})
    assert abs(sum(shares[k] for k in MATCH_KINDS) - 1.0) < 1e-9
    # the corpus is mostly well-quoted locations; every kind occurs
    assert shares["exact"] > 0.5
    assert all(shares[k] > 0 for k in MATCH_KINDS)
