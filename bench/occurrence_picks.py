"""Benchmark: alignment precision and recall over all spans before and after experts pick the occurrence.

Aligns every case of bench/alignment_corpus.jsonl as bench/alignment_accuracy.py does, then lets a scripted
expert settle each span flagged ambiguous through the product's engine (annotator.engine.occurrences): the
expert sees the candidate occurrences of the located text and picks the one the gold marks (the candidate
overlapping the gold span most), "none" when the gold says the location is not in the text, and leaves the
machine's offsets when no candidate touches the gold span. This measures the plumbing - every pick lands where
it was aimed and the spans it moves are judged again - not how well real experts pick. Targets: precision
>= 99%, recall >= 95% over all spans. Needs the shared data (exit code 2 without it).

    python bench/occurrence_picks.py [--corpus bench/alignment_corpus.jsonl] [--data DIR]
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from collections.abc import Mapping
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from annotator.engine.occurrences import Occurrence, effective_offsets, occurrences, pick_text  # noqa: E402
from bench.alignment_accuracy import (  # noqa: E402
    DEFAULT_CORPUS,
    PRECISION_TARGET,
    RECALL_TARGET,
    RIGHT_PLACE_IOU,
    DataMissing,
    Outcome,
    _iou,
    data_dir,
    judge,
    load_text,
    precision,
    read_corpus,
    recall,
)


def scripted_pick(case: Mapping[str, Any], text: str, got: tuple[int, int]) -> str:
    """The pick of an expert who knows the gold: its occurrence, 'none' when absent, '' when no candidate fits."""
    expected = case.get("expected")
    if not expected:
        return pick_text(None, none=True)
    candidates = occurrences(text, *got)
    best = max(candidates, key=lambda o: _iou((o.start, o.end), tuple(expected)))  # type: ignore[arg-type]
    if _iou((best.start, best.end), tuple(expected)) == 0:  # type: ignore[arg-type]
        return ""
    return pick_text(Occurrence(best.start, best.end))


def after_pick(o: Outcome, text: str) -> tuple[Outcome, str]:
    """Return the outcome once the expert's pick has moved an ambiguous span, and the pick's text form."""
    if not o.ambiguous or o.got is None:
        return o, ""
    pick = scripted_pick(o.case, text, o.got)
    start, end = effective_offsets(o.got, pick)
    expected = tuple(o.case["expected"]) if o.case.get("expected") else None
    if start is None or end is None:
        outcome = "missed" if expected else "absent"
        return Outcome(o.case, outcome, "none", False, None), pick
    if expected is None:
        return Outcome(o.case, "false", o.match, False, (start, end)), pick
    right = _iou((start, end), expected) >= RIGHT_PLACE_IOU  # type: ignore[arg-type]
    return Outcome(o.case, "right" if right else "wrong", o.match, False, (start, end)), pick


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.1f}%"


def _verdict(value: float | None, target: float) -> str:
    return "OK" if value is not None and value >= target else "BELOW TARGET"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    parser.add_argument("--data", type=Path, default=None, help="folder with meta_eval/ and rotowire/")
    args = parser.parse_args(argv)
    try:
        data = data_dir(args.data)
        cases = read_corpus(args.corpus)
        texts = {case["id"]: load_text(data, case) for case in cases}
    except (DataMissing, ValueError) as exc:
        print(f"occurrence_picks: {exc}", file=sys.stderr)
        return 2
    before = [judge(case, texts[case["id"]]) for case in cases]
    moved = [after_pick(o, texts[o.case["id"]]) for o in before]
    after = [o for o, _ in moved]
    picks: Counter[str] = Counter(
        "kept" if not pick else "none" if pick == "none" else "occurrence"
        for o, (_, pick) in zip(before, moved, strict=True) if o.ambiguous
    )
    flagged = sum(o.ambiguous for o in before)
    # the offsets the span counts with after the pick are the ones the pick names
    landed = sum(1 for o, pick in moved if pick not in ("", "none") and o.got == effective_offsets((None, None), pick))
    print(f"cases: {len(cases)}; flagged ambiguous: {flagged}; picks: {picks['occurrence']} occurrence, "
          f"{picks['none']} none, {picks['kept']} kept the machine's offsets; picks landing where aimed: "
          f"{landed}/{picks['occurrence']}")
    print(f"{'':8}{'precision':>11}{'target':>9}{'':14}{'recall':>9}{'target':>9}")
    for name, outcomes in (("before", before), ("after", after)):
        counts: Counter[str] = Counter(o.outcome for o in outcomes)
        p, r = precision(counts), recall(counts)
        print(f"{name:8}{_pct(p):>11}{'>= ' + format(PRECISION_TARGET, '.0%'):>9}{_verdict(p, PRECISION_TARGET):>14}"
              f"{_pct(r):>9}{'>= ' + format(RECALL_TARGET, '.0%'):>9} {_verdict(r, RECALL_TARGET)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
