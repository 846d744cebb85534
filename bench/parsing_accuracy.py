"""Benchmark: how much of each answer shape the parser reads right, against its targets.

Reads tests/data/parsing_corpus.jsonl (answers we wrote in the shapes real evaluator models use, built by
bench/parsing_corpus_build.py, each with the errors, score and no-error flag it holds), parses every answer
as a run does, and prints per shape: errors recovered / expected (a parsed error whose cleaned location
equals an expected one, each expected error matched once), severities right among them, explicit no-error
answers recognised (no errors, the no-error flag set, status ok), scores right, and scores taken from a
thinking trace (the decoy score a trace holds instead of the final one). Targets: >= 97% of errors,
100% of no-error answers, 0 scores from a trace. Exit code 1 when a target is missed.

    python bench/parsing_accuracy.py [--corpus tests/data/parsing_corpus.jsonl] [--show-misses]
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from evaluation.engine.parsing import ParsedAnswer, parse_annotator_answer  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
DEFAULT_CORPUS = REPO / "tests" / "data" / "parsing_corpus.jsonl"
ERRORS_TARGET = 0.97
NO_ERRORS_TARGET = 1.0
TRACE_SCORES_TARGET = 0


def norm(location: str | None) -> str:
    """A location compared ignoring case, spacing and the quotes or full stop around it."""
    return " ".join((location or "").casefold().split()).strip("\"'“”‘’`.,; ")


@dataclass
class ShapeTally:
    answers: int = 0
    expected: int = 0
    recovered: int = 0
    severity_right: int = 0
    severity_expected: int = 0
    no_error_answers: int = 0
    no_error_recognised: int = 0
    scores_expected: int = 0
    scores_right: int = 0
    scores_from_trace: int = 0
    misses: list[str] = field(default_factory=list)


def recovered_errors(record: dict[str, Any], answer: ParsedAnswer) -> tuple[int, int, list[str]]:
    """Return (errors recovered, severities right among them, locations missed)."""
    pool = Counter(norm(e.location) for e in answer.errors if e.location)
    severities: dict[str, list[int | None]] = defaultdict(list)
    for e in answer.errors:
        severities[norm(e.location)].append(e.severity)
    found = right = 0
    missed: list[str] = []
    for expected in record["errors"]:
        key = norm(expected["location"])
        if pool[key] > 0:
            pool[key] -= 1
            found += 1
            if expected["severity"] is not None and expected["severity"] in severities[key]:
                right += 1
        else:
            missed.append(expected["location"])
    return found, right, missed


def measure(records: list[dict[str, Any]]) -> dict[str, ShapeTally]:
    tallies: dict[str, ShapeTally] = defaultdict(ShapeTally)
    for record in records:
        tally = tallies[record["shape"]]
        answer = parse_annotator_answer(record["text"])
        tally.answers += 1
        found, right, missed = recovered_errors(record, answer)
        tally.expected += len(record["errors"])
        tally.recovered += found
        tally.severity_expected += sum(1 for e in record["errors"] if e["severity"] is not None)
        tally.severity_right += right
        for location in missed:
            tally.misses.append(f"{record['id']}: missed {location!r}; problems {answer.problems}")
        if record["no_errors"]:
            tally.no_error_answers += 1
            if not answer.errors and answer.no_errors_declared and answer.status == "ok":
                tally.no_error_recognised += 1
            else:
                tally.misses.append(f"{record['id']}: no-error answer read as {answer.status}, "
                                    f"{len(answer.errors)} errors; problems {answer.problems}")
        elif answer.no_errors_declared:
            tally.misses.append(f"{record['id']}: an answer with errors read as a no-error answer")
        if record["score"] is not None:
            tally.scores_expected += 1
            if answer.score == record["score"]:
                tally.scores_right += 1
            else:
                tally.misses.append(f"{record['id']}: score {answer.score} (expected {record['score']})")
        decoy = record.get("decoy_score")
        if decoy is not None and answer.score == decoy and decoy != record["score"]:
            tally.scores_from_trace += 1
    return dict(tallies)


def totals(tallies: dict[str, ShapeTally]) -> ShapeTally:
    total = ShapeTally()
    for tally in tallies.values():
        for name in ("answers", "expected", "recovered", "severity_right", "severity_expected",
                     "no_error_answers", "no_error_recognised", "scores_expected", "scores_right",
                     "scores_from_trace"):
            setattr(total, name, getattr(total, name) + getattr(tally, name))
    return total


def meets_targets(total: ShapeTally) -> bool:
    errors_ok = total.expected == 0 or total.recovered / total.expected >= ERRORS_TARGET
    no_errors_ok = total.no_error_answers == 0 or total.no_error_recognised / total.no_error_answers >= NO_ERRORS_TARGET
    return errors_ok and no_errors_ok and total.scores_from_trace <= TRACE_SCORES_TARGET


def _pct(part: int, whole: int) -> str:
    return f"{part}/{whole} ({100 * part / whole:.1f}%)" if whole else "-"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS)
    parser.add_argument("--show-misses", action="store_true")
    args = parser.parse_args()
    records = [json.loads(line) for line in args.corpus.read_text(encoding="utf-8").splitlines() if line.strip()]
    tallies = measure(records)
    print(f"{'shape':<20} {'answers':>7}  {'errors recovered':>18}  {'severity right':>16}  "
          f"{'no-error recognised':>19}  {'score right':>14}  {'trace scores':>12}")
    for shape, t in sorted(tallies.items()):
        print(f"{shape:<20} {t.answers:>7}  {_pct(t.recovered, t.expected):>18}  "
              f"{_pct(t.severity_right, t.severity_expected):>16}  "
              f"{_pct(t.no_error_recognised, t.no_error_answers):>19}  "
              f"{_pct(t.scores_right, t.scores_expected):>14}  {t.scores_from_trace:>12}")
    total = totals(tallies)
    print(f"{'all':<20} {total.answers:>7}  {_pct(total.recovered, total.expected):>18}  "
          f"{_pct(total.severity_right, total.severity_expected):>16}  "
          f"{_pct(total.no_error_recognised, total.no_error_answers):>19}  "
          f"{_pct(total.scores_right, total.scores_expected):>14}  {total.scores_from_trace:>12}")
    print(f"targets: errors >= {ERRORS_TARGET:.0%}, no-error answers {NO_ERRORS_TARGET:.0%}, "
          f"scores from a trace {TRACE_SCORES_TARGET}  ->  {'met' if meets_targets(total) else 'MISSED'}")
    if args.show_misses:
        for shape, t in sorted(tallies.items()):
            for miss in t.misses:
                print(f"  [{shape}] {miss}")
    return 0 if meets_targets(total) else 1


if __name__ == "__main__":
    sys.exit(main())
