"""Benchmark: what the parser and the aligner make of real answers from a tiny model (SmolLM2-135M).

Reads tests/data/smollm2_answers.jsonl (the answers the real-model tier collected: demo outputs x aspects, single
model and ensemble, through llama-cpp-python's server) and the demo outputs they judge, parses every answer as
a run does and aligns every location on its output. Prints: answers by parse status, the problems that made the
unreadable ones unreadable, errors found, and their locations by match kind (exact, normalized, fuzzy, none) with
the reasons a location was not found. Figures, no targets: a 135M model is not expected to follow the format.

    python bench/small_model_answers.py [--answers tests/data/smollm2_answers.jsonl] [--show N]
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from evaluation.engine.alignment import align_location  # noqa: E402
from evaluation.engine.parsing import ParsedAnswer, parse_annotator_answer, parse_supervisor_answer  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
DEFAULT_ANSWERS = REPO / "tests" / "data" / "smollm2_answers.jsonl"
DEMO = REPO / "demo" / "restaurants.jsonl"
_PLACEHOLDER = re.compile(r"^<[^<>]{1,60}>$")  # a slot of the answer format copied as it stands


@dataclass
class Reading:
    """One answer as the product reads it: the parse, and each error's location found (or not) in the output."""

    record: dict
    parsed: ParsedAnswer
    matches: list[str] = field(default_factory=list)
    unfound: list[str] = field(default_factory=list)  # why a location was not found, per location


def outputs() -> dict[tuple[str, str], str]:
    rows = [json.loads(line) for line in DEMO.read_text().splitlines() if line.strip()]
    return {(row["id"], row["system"]): row["outputs"]["Text"] for row in rows}


def why_unfound(location: str | None, note: str) -> str:
    if location is None or not location.strip():
        return "no location given"
    if _PLACEHOLDER.match(location.strip()):
        return "a placeholder copied from the prompt"
    return note or "not in the output"


def read(record: dict, output: str) -> Reading:
    parse = parse_supervisor_answer if record["role"] == "supervisor" else parse_annotator_answer
    reading = Reading(record, parse(record["answer"]))
    for error in reading.parsed.errors:
        for span in align_location(error.location, output, explanation=error.explanation):
            reading.matches.append(span.match)
            if span.start is None:
                reading.unfound.append(why_unfound(error.location, span.note))
    return reading


def readings(path: Path) -> list[Reading]:
    texts = outputs()
    records = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    return [read(record, texts[(record["item"], record["system"])]) for record in records]


def problem_kind(problem: str) -> str:
    """A problem without the answer's own words (quoted, or after "the answer begins"), so like counts with like."""
    problem = problem.split("; the answer begins", 1)[0]
    return re.sub(r"'[^']*'|\"[^\"]*\"", "'...'", problem).strip()


def what_it_did(answer: str, output: str) -> str:
    """What an unreadable answer holds instead of our format, by its first line."""
    first = answer.strip().splitlines()[0] if answer.strip() else ""
    if output[:40] and answer.strip().startswith(output[:40]):
        return "the judged text repeated"
    if first.startswith("#"):
        return "our prompt's sections written back (a '#' header first)"
    if "Unacceptable, Poor, Fair, Good" in answer or "<the exact words>" in answer:
        return "the answer format's slots copied, not filled"
    return "prose of its own"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--answers", type=Path, default=DEFAULT_ANSWERS)
    parser.add_argument("--show", type=int, default=0, help="print the first N unreadable answers")
    args = parser.parse_args()
    found = readings(args.answers)
    status = Counter(r.parsed.status for r in found)
    print(f"{len(found)} real answers ({Counter(r.record['role'] for r in found)}), models "
          f"{sorted({r.record['model'] for r in found})}")
    cut = sum(r.record["done_reason"] == "length" for r in found)
    print(f"  cut at the answer budget (finish_reason length): {cut}")
    print(f"  parse status: ok {status['ok']}, partial {status['partial']}, failed (unreadable) {status['failed']}")
    print(f"  with a score: {sum(r.parsed.score is not None for r in found)}; "
          f"declaring no errors: {sum(r.parsed.no_errors_declared for r in found)}")
    texts = outputs()
    did = Counter(what_it_did(r.record["answer"], texts[(r.record["item"], r.record["system"])])
                  for r in found if r.parsed.status == "failed")
    print("  what the unreadable answers hold instead:")
    for kind, n in did.most_common():
        print(f"    {n:4d}  {kind}")
    why = Counter(problem_kind(p) for r in found if r.parsed.status == "failed" for p in r.parsed.problems)
    print("  the parser's reasons for them:")
    for kind, n in why.most_common():
        print(f"    {n:4d}  {kind}")
    partial = Counter(problem_kind(p) for r in found if r.parsed.status == "partial" for p in r.parsed.problems)
    print("  problems of the partly read answers:")
    for kind, n in partial.most_common():
        print(f"    {n:4d}  {kind}")
    matches = Counter(m for r in found for m in r.matches)
    total = sum(matches.values())
    located = total - matches["none"]
    print(f"  error locations: {total}; located {located} (exact {matches['exact']}, normalized "
          f"{matches['normalized']}, fuzzy {matches['fuzzy']}); not located {matches['none']}")
    for reason, n in Counter(u for r in found for u in r.unfound).most_common():
        print(f"    {n:4d}  {reason}")
    for r in [r for r in found if r.parsed.status == "failed"][: args.show]:
        print("-" * 72)
        print(f"{r.record['item']}/{r.record['system']} {r.record['aspect']} {r.record['model']}: {r.parsed.problems}")
        print(r.record["answer"][:800])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
