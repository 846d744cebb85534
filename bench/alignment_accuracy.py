"""Benchmark: how often span alignment puts a located error on the right words, against its targets.

Reads a corpus of located errors (bench/alignment_corpus.jsonl, built by bench/alignment_corpus_build.py
from the RotoWire and meta_eval outputs; each case names its text by file, record and field and gives the
right offsets, or null when the location is not in the text), passes every location through the parser's
`clean_location` and the aligner as a run does, and
prints the confusion table - aligned to the right place, to a wrong place, left unaligned though present,
aligned though absent - per match kind and per style, the precision of aligned spans and the recall of
present locations beside the targets (precision >= 99%, recall >= 95%). Ambiguous spans (flagged for the
expert) are counted as aligned and also shown on their own. The texts are licensed data and are not in the
repository: the script reads them from --data, $SPANJUDGE_DATA or ../shared/data beside the checkout, and
stops with exit code 2 when they are missing.

    python bench/alignment_accuracy.py [--corpus bench/alignment_corpus.jsonl] [--data DIR] [--show-misses]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from evaluation.engine.alignment import align_location  # noqa: E402
from evaluation.engine.parsing import clean_location  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
DEFAULT_CORPUS = REPO / "bench" / "alignment_corpus.jsonl"
PRECISION_TARGET = 0.99
RECALL_TARGET = 0.95
# a span is at the right place when it shares at least this share of characters (intersection over union)
# with the right answer: a fuzzy window one token wider is still the place the model meant
RIGHT_PLACE_IOU = 0.5
OUTCOMES = ("right", "wrong", "missed", "false", "absent")
OUTCOME_LABELS = {
    "right": "right place", "wrong": "wrong place", "missed": "unaligned though present",
    "false": "aligned though absent", "absent": "unaligned, absent",
}


class DataMissing(Exception):
    """The shared datasets the corpus refers to are not where the report looks."""


def data_dir(explicit: Path | None = None) -> Path:
    """Return the folder holding meta_eval/ and rotowire/; DataMissing says where it looked."""
    path = explicit or Path(os.environ.get("SPANJUDGE_DATA") or REPO.parent / "shared" / "data").expanduser()
    if not (path / "rotowire" / "train.jsonl").exists() or not (path / "meta_eval").is_dir():
        raise DataMissing(
            f"the shared datasets are not in {path} (need rotowire/train.jsonl and meta_eval/): pass --data DIR "
            "or set SPANJUDGE_DATA; they are licensed and never part of the repository"
        )
    return path


_FILES: dict[Path, Any] = {}


def load_text(data: Path, case: Mapping[str, Any]) -> str:
    """Return the output text a case refers to (file, record index, field), checking the record's id."""
    path = data / case["file"]
    if path not in _FILES:
        if not path.exists():
            raise DataMissing(f"{path} is missing (case {case['id']})")
        if path.suffix == ".jsonl":
            _FILES[path] = [json.loads(line) for line in path.open()]
        else:
            _FILES[path] = json.loads(path.read_text())
    record = _FILES[path][case["record"]]
    if str(record["id"]) != str(case["record_id"]):
        raise DataMissing(f"{path} record {case['record']} has id {record['id']!r}, not {case['record_id']!r}")
    return record["outputs"][case["field"]]


@dataclass
class Outcome:
    case: Mapping[str, Any]
    outcome: str
    match: str  # the worst match kind among the aligned parts, "none" when nothing was aligned
    ambiguous: bool
    got: tuple[int, int] | None


@dataclass
class Report:
    outcomes: list[Outcome] = field(default_factory=list)

    def counts(self, key: str) -> dict[str, Counter[str]]:
        """Outcome counts per match kind or per style; "trusted <outcome>" counts the spans not flagged."""
        table: dict[str, Counter[str]] = {}
        for o in self.outcomes:
            group = o.match if key == "match" else str(o.case["style"])
            table.setdefault(group, Counter()).update(_keys(o))
        return table

    def total(self) -> Counter[str]:
        total: Counter[str] = Counter()
        for o in self.outcomes:
            total.update(_keys(o))
        return total


def _keys(o: Outcome) -> list[str]:
    return [o.outcome, "ambiguous " + o.outcome if o.ambiguous else "trusted " + o.outcome]


def precision(counts: Mapping[str, int], *, trusted: bool = False) -> float | None:
    """Share of aligned spans at the right place; `trusted` leaves out the spans flagged ambiguous."""
    prefix = "trusted " if trusted else ""
    right = counts.get(prefix + "right", 0)
    aligned = right + counts.get(prefix + "wrong", 0) + counts.get(prefix + "false", 0)
    return right / aligned if aligned else None


def recall(counts: Mapping[str, int]) -> float | None:
    """Share of the locations present in the text that were aligned to the right place (flagged or not)."""
    present = counts.get("right", 0) + counts.get("wrong", 0) + counts.get("missed", 0)
    return counts.get("right", 0) / present if present else None


def _iou(a: tuple[int, int], b: tuple[int, int]) -> float:
    inter = max(0, min(a[1], b[1]) - max(a[0], b[0]))
    return inter / (max(a[1], b[1]) - min(a[0], b[0]))


_RANK = {"exact": 0, "normalized": 1, "fuzzy": 2, "none": 3}


def judge(case: Mapping[str, Any], text: str) -> Outcome:
    """Align one case and say where it landed; '...'-joined parts are judged by the span they cover."""
    # as in a run: the parser cleans the Location value first, then the aligner places it
    location, _ = clean_location(case["location"])
    spans = align_location(location, text, explanation=case.get("explanation") or "")
    aligned = [s for s in spans if s.start is not None and s.end is not None]
    expected = tuple(case["expected"]) if case.get("expected") else None
    if not aligned:
        return Outcome(case, "missed" if expected else "absent", "none", False, None)
    got = (min(s.start for s in aligned if s.start is not None), max(s.end for s in aligned if s.end is not None))
    match = max((s.match for s in aligned), key=lambda m: _RANK[m])
    ambiguous = any(s.ambiguous for s in aligned)
    if expected is None:
        return Outcome(case, "false", match, ambiguous, got)
    right = _iou(got, expected) >= RIGHT_PLACE_IOU  # type: ignore[arg-type]
    return Outcome(case, "right" if right else "wrong", match, ambiguous, got)


def evaluate(cases: Iterable[Mapping[str, Any]], texts: Mapping[str, str]) -> Report:
    """Judge every case; `texts` maps case ids to their output texts."""
    report = Report()
    for case in cases:
        report.outcomes.append(judge(case, texts[case["id"]]))
    return report


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.1f}%"


def format_report(report: Report) -> str:
    lines: list[str] = []
    head = f"{'':18}" + "".join(f"{OUTCOME_LABELS[o]:>26}" for o in OUTCOMES)
    head += f"{'ambiguous right/wrong':>23}{'precision':>11}{'(trusted)':>11}{'recall':>9}"
    for key, title in (("match", "match kind"), ("style", "style")):
        table = report.counts(key)
        lines += [f"confusion table by {title}", head]
        for group in sorted(table, key=lambda g: _RANK.get(g, 9) if key == "match" else g):
            counts = table[group]
            flagged = f"{counts.get('ambiguous right', 0)}/{counts.get('ambiguous wrong', 0)}"
            lines.append(
                f"{group:18}" + "".join(f"{counts.get(o, 0):>26}" for o in OUTCOMES) + f"{flagged:>23}"
                + f"{_pct(precision(counts)):>11}{_pct(precision(counts, trusted=True)):>11}{_pct(recall(counts)):>9}"
            )
        lines.append("")
    total = report.total()
    p_all, p_trusted, r = precision(total), precision(total, trusted=True), recall(total)
    present = total["right"] + total["wrong"] + total["missed"]
    n_flagged = sum(1 for o in report.outcomes if o.ambiguous)

    def verdict(value: float | None, target: float) -> str:
        return "OK" if value is not None and value >= target else "BELOW TARGET"

    lines += [
        f"cases: {len(report.outcomes)} ({present} located in the text, {total['false'] + total['absent']} not)",
        f"precision of aligned spans not flagged ambiguous: {_pct(p_trusted)} (target >= {PRECISION_TARGET:.0%})"
        f" {verdict(p_trusted, PRECISION_TARGET)}",
        f"precision of all aligned spans, flagged ones included: {_pct(p_all)} (target >= {PRECISION_TARGET:.0%})"
        f" {verdict(p_all, PRECISION_TARGET)}",
        f"recall of present locations (right place): {_pct(r)} (target >= {RECALL_TARGET:.0%})"
        f" {verdict(r, RECALL_TARGET)}",
        f"spans flagged ambiguous: {n_flagged} ({total['ambiguous right']} at the right place, "
        f"{total['ambiguous wrong'] + total['ambiguous false']} elsewhere)",
    ]
    return "\n".join(lines)


def read_corpus(path: Path) -> list[dict[str, Any]]:
    cases = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    for n, case in enumerate(cases, 1):
        missing = {"id", "file", "record", "record_id", "field", "location", "style", "expected"} - set(case)
        if missing:
            raise ValueError(f"{path}: line {n}: missing field(s) {', '.join(sorted(missing))}")
    return cases


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    parser.add_argument("--data", type=Path, default=None, help="folder with meta_eval/ and rotowire/")
    parser.add_argument("--show-misses", action="store_true", help="list every case not judged right")
    args = parser.parse_args(argv)
    try:
        data = data_dir(args.data)
        cases = read_corpus(args.corpus)
        texts = {case["id"]: load_text(data, case) for case in cases}
    except (DataMissing, ValueError) as exc:
        print(f"alignment_accuracy: {exc}", file=sys.stderr)
        return 2
    report = evaluate(cases, texts)
    print(format_report(report))
    if args.show_misses:
        for o in report.outcomes:
            if o.outcome in ("wrong", "missed", "false") or o.ambiguous:
                text = texts[o.case["id"]]
                got = text[o.got[0] : o.got[1]] if o.got else None
                print(f"{o.case['id']} {o.case['style']}: {o.outcome}{' (ambiguous)' if o.ambiguous else ''} "
                      f"{o.match} location={o.case['location']!r} got={got!r} expected={o.case['expected']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
