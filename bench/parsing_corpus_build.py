"""Build tests/data/parsing_corpus.jsonl: LLM answers in the shapes real models write, each with its answer key.

Every answer is written here, by us: fourteen invented cases (an output's errors - location, explanation,
severity - and an overall label) are rendered in sixteen shapes modelled on what published evaluator
models write (our own format; TIGERScore-style numbered labels; values on the line after their label;
InstructScore-style "Major errors:" / "Minor errors:" groups; JSON lists, objects of errors, keyed errors,
JSON after prose, factgenie annotations; markdown bold/headers and tables; thinking traces full of decoy
fields; answers cut short; severities as words and fractions), plus explicit "no errors" answers in every
phrasing we have met. The right answer is known by construction. Deterministic (seeded).

    python bench/parsing_corpus_build.py [-o tests/data/parsing_corpus.jsonl]
"""

from __future__ import annotations

import argparse
import json
import random
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
DEFAULT_OUT = REPO / "tests" / "data" / "parsing_corpus.jsonl"
LABELS = ("Unacceptable", "Poor", "Fair", "Good", "Excellent")


@dataclass(frozen=True)
class Err:
    location: str
    explanation: str
    severity: int  # 1..5


@dataclass(frozen=True)
class Case:
    errors: tuple[Err, ...]
    label: str
    why: str


# invented outputs' errors (teams, players and towns are made up)
CASES: list[Case] = [
    Case((Err("scored 31 points", "The box score gives Orla Venn 27 points, not 31.", 4),
          Err("on Tuesday night", "The game was played on a Saturday.", 2)), "Fair",
         "Two factual slips, one about the leading scorer."),
    Case((Err("the Harbor Gulls won 102-99", "The Gulls lost; the final was 99-102.", 5),), "Poor",
         "The result itself is reversed."),
    Case((Err("Kim's 12 rebounds", "Kim grabbed 9 rebounds.", 3),
          Err("a season-high 14 assists", "14 is not his season high; he had 16 in March.", 2),
          Err("in front of 18,000 fans", "Attendance is not in the data.", 2)), "Fair",
         "Several unsupported or wrong numbers."),
    Case((Err("The café on Mill Street", "The input names the bakery on Mill Street.", 3),), "Good",
         "Mostly faithful, one swapped place."),
    Case((Err("he said the bridge was \"unsafe\"", "The source quotes him calling it 'old', not unsafe.", 3),
          Err("closed for six weeks", "The closure lasts four weeks.", 3)), "Fair", "A misquote and a wrong duration."),
    Case((Err("🏀 fans cheered", "No crowd reaction is reported; the emoji adds an unsupported claim.", 1),), "Good",
         "A small unsupported flourish."),
    Case((Err("shot 8-of-10 from three", "He went 4-of-10 from three.", 4),
          Err("shot 8-of-10 from three", "Repeated later: the same wrong figure in the recap.", 4)), "Poor",
         "The same wrong figure twice."),
    Case((Err("Lena Marsh", "The player named is Lena March.", 2),
          Err("third straight win", "It was their second straight win.", 3),
          Err("despite missing Abe Tolland", "Tolland played 31 minutes.", 4),
          Err("next host the Pine Falls Otters", "The next opponent is not given.", 2)), "Poor",
         "Four errors, two of them serious."),
    Case((Err("the recipe needs two eggs", "The recipe in the input needs three eggs.", 3),), "Good",
         "One quantity is wrong."),
    Case((Err("was elected in 1998", "The input says 1989.", 4),
          Err("served three terms", "She served two terms.", 3)), "Poor", "Dates and counts are wrong."),
    Case((Err("the river flooded the northern quarter", "The input says the southern quarter.", 3),), "Fair",
         "One wrong place."),
    Case((Err("Dr. Ames, the lead author,", "Ames is the second author; Ruiz leads.", 2),
          Err("a 40% drop", "The study reports a 14% drop.", 5)), "Poor", "A critical number error."),
    Case((Err("beat the Quarry Hawks", "They lost to the Quarry Hawks.", 5),
          Err("by 20 points", "The margin was 2 points.", 4),
          Err("Tao Ren added 18", "Tao Ren scored 8.", 3)), "Unacceptable", "The summary gets the game wrong."),
    Case((Err("costs $12 a month", "The plan costs $21 a month.", 3),), "Good", "A single swapped price."),
]

SEV_WORD = {5: "Critical", 4: "Major", 3: "Moderate", 2: "Minor", 1: "Negligible"}


def _expected(case: Case, *, errors: tuple[Err, ...] | None = None, severity: bool = True,
              score: bool = True, word_levels: bool = False) -> dict:
    chosen = case.errors if errors is None else errors
    out = []
    for e in chosen:
        sev: int | None = e.severity if severity else None
        if word_levels:
            sev = 4 if e.severity >= 4 else 2
        out.append({"location": e.location, "severity": sev})
    return {"errors": out, "score": float(LABELS.index(case.label) + 1) if score else None, "no_errors": False}


def _ours(case: Case, rng: random.Random) -> str:
    parts = []
    for n, e in enumerate(case.errors, 1):
        parts.append(f"Error {n}:\nLocation: \"{e.location}\"\nExplanation: {e.explanation}\nSeverity: {e.severity}\n")
    parts.append(f"Overall score: {case.label}\nExplanation of the score: {case.why}")
    return "\n".join(parts)


def _numbered(case: Case, rng: random.Random) -> str:
    lead = rng.choice(["The model-generated output contains {n} errors, with a total score reduction of {r}.",
                       "Your output contains {n} errors:", "I found {n} issues in the output."])
    lines = [lead.format(n=len(case.errors), r=sum(e.severity for e in case.errors))]
    grouped = rng.random() < 0.3
    if grouped:  # every location first, then every explanation, then severities
        lines += [f"Error location {n}: \"{e.location}\"" for n, e in enumerate(case.errors, 1)]
        lines += [f"Explanation for error {n}: {e.explanation}" for n, e in enumerate(case.errors, 1)]
        lines += [f"Severity {n}: {e.severity}" for n, e in enumerate(case.errors, 1)]
    else:
        for n, e in enumerate(case.errors, 1):
            lines += [f"Error location {n}: \"{e.location}\"", f"Error aspect {n}: Accuracy",
                      f"Explanation for error {n}: {e.explanation}", f"Severity {n}: {e.severity}",
                      f"Score reduction {n}: {e.severity / 2:.1f}", ""]
    lines += [f"Overall score: {case.label}", f"Explanation of the score: {case.why}"]
    return "\n".join(lines)


def _next_line(case: Case, rng: random.Random) -> str:
    lines = []
    for n, e in enumerate(case.errors, 1):
        lines += [f"Error {n}", "Location:", f"\"{e.location}\"", "Explanation:", e.explanation, "Severity:",
                  str(e.severity), ""]
    lines += ["Overall score:", case.label, "", "Explanation of the score:", case.why]
    return "\n".join(lines)


def _groups(case: Case, rng: random.Random) -> str:
    major = [e for e in case.errors if e.severity >= 4]
    minor = [e for e in case.errors if e.severity < 4]
    bullet = rng.choice(["- ", "* ", "1. "])
    lines = [rng.choice(["Here is my evaluation.", "Errors by severity:", ""])]
    for title, group in (("Major errors:", major), ("Minor errors:", minor)):
        lines.append(title)
        if not group:
            lines.append(f"{bullet}None")
        for e in group:
            sep = rng.choice([" - ", ": ", " — "])
            lines.append(f"{bullet}\"{e.location}\"{sep}{e.explanation}")
    lines += ["", f"Overall score: {case.label}", f"Explanation of the score: {case.why}"]
    return "\n".join(lines)


def _error_dicts(case: Case, keys: tuple[str, str, str] = ("location", "explanation", "severity")) -> list[dict]:
    return [{keys[0]: e.location, keys[1]: e.explanation, keys[2]: e.severity} for e in case.errors]


def _json_list(case: Case, rng: random.Random) -> str:
    keys = rng.choice([("location", "explanation", "severity"), ("error_location", "reason", "severity_level"),
                       ("span", "description", "severity")])
    body = json.dumps(_error_dicts(case, keys), indent=rng.choice([None, 2]), ensure_ascii=False)
    tail = f"\nOverall score: {case.label}\nExplanation of the score: {case.why}"
    return (f"```json\n{body}\n```" if rng.random() < 0.5 else body) + tail


def _json_object(case: Case, rng: random.Random) -> str:
    errors = {f"error_{n}": d for n, d in enumerate(_error_dicts(case), 1)}
    data = {"errors": errors, "overall_score": case.label, "score_explanation": case.why}
    return json.dumps(data, indent=2, ensure_ascii=False)


def _json_keyed(case: Case, rng: random.Random) -> str:
    data: dict = {f"error_{n}": d for n, d in enumerate(_error_dicts(case), 1)}
    data["overall_score"] = case.label
    data["explanation_of_the_score"] = case.why
    return "```json\n" + json.dumps(data, indent=2, ensure_ascii=False) + "\n```"


def _json_after_prose(case: Case, rng: random.Random) -> str:
    prose = rng.choice([
        "Let me go through the output sentence by sentence and compare it with the input.\n\n"
        "The first sentence names the result. The second gives numbers; some do not match.\n\n"
        "Here is my answer in JSON:",
        "Sure! Below is the evaluation.\nI checked each claim against the data.\n\nFinal answer:",
    ])
    data = {"errors": _error_dicts(case), "overall_score": case.label, "explanation": case.why}
    return f"{prose}\n```json\n{json.dumps(data, indent=2, ensure_ascii=False)}\n```\nI hope this helps."


def _factgenie(case: Case, rng: random.Random) -> str:
    kinds = ["Incorrect", "Not checkable", "Misleading", "Other"]
    data = {"annotations": [{"reason": e.explanation, "text": e.location, "type": rng.randrange(len(kinds))}
                            for e in case.errors]}
    body = json.dumps(data, ensure_ascii=False)
    return f"{body}\nOverall score: {case.label}\nExplanation of the score: {case.why}"


def _markdown(case: Case, rng: random.Random) -> str:
    lines = ["## Evaluation", ""]
    for n, e in enumerate(case.errors, 1):
        lines += [f"### Error {n}", f"- **Location:** \"{e.location}\"", f"- **Explanation:** {e.explanation}",
                  f"- **Severity:** {e.severity}", ""]
    lines += [f"**Overall score:** {case.label}", "", f"**Explanation of the score:** {case.why}"]
    return "\n".join(lines)


def _table(case: Case, rng: random.Random) -> str:
    head = rng.choice(["| # | Location | Explanation | Severity |", "| Error | Explanation | Severity |"])
    numbered = head.startswith("| #")
    lines = ["Errors found:", "", head, "|" + "|".join(["---"] * (head.count("|") - 1)) + "|"]
    for n, e in enumerate(case.errors, 1):
        row = [str(n)] if numbered else []
        row += [f"\"{e.location}\"", e.explanation, str(e.severity)]
        lines.append("| " + " | ".join(row) + " |")
    lines += ["", f"Overall score: **{case.label}**", f"Explanation of the score: {case.why}"]
    return "\n".join(lines)


def _severity_words(case: Case, rng: random.Random) -> str:
    parts = []
    for n, e in enumerate(case.errors, 1):
        sev = rng.choice([SEV_WORD[e.severity], f"{e.severity}/5", SEV_WORD[e.severity].lower()])
        parts.append(f"Error {n}:\nLocation: \"{e.location}\"\nExplanation: {e.explanation}\nSeverity: {sev}\n")
    parts.append(f"Overall score: {case.label}\nExplanation of the score: {case.why}")
    return "\n".join(parts)


def _decoy_label(case: Case) -> str:
    return LABELS[(LABELS.index(case.label) + 2) % 5]


def _trace(case: Case, rng: random.Random) -> str:
    decoy = _decoy_label(case)
    tag_open, tag_close = rng.choice([("<think>", "</think>"), ("<thinking>", "</thinking>"), ("", "</think>")])
    trace = (
        f"{tag_open}\nOkay, the user wants errors in the usual format. Let me draft.\n"
        f"Error 1:\nLocation: \"the opening sentence\"\nExplanation: maybe wrong? Let me check.\nSeverity: 5\n"
        f"Hmm, no, the opening is fine. Draft verdict:\nOverall score: {decoy}\n"
        f"Wait, I should look again at the numbers. Score: {LABELS.index(decoy) + 1}\n{tag_close}\n\n"
    )
    body = rng.choice([_ours, _numbered, _json_object])(case, rng)
    return trace + body


def render(case: Case, shape: str, rng: random.Random) -> tuple[str, dict]:
    simple: dict[str, Callable[[Case, random.Random], str]] = {
        "ours": _ours, "numbered_labels": _numbered, "value_next_line": _next_line, "json_list": _json_list,
        "json_errors_object": _json_object, "json_keyed_errors": _json_keyed, "json_after_prose": _json_after_prose,
        "markdown": _markdown, "markdown_table": _table, "severity_words": _severity_words,
    }
    if shape in simple:
        return simple[shape](case, rng), _expected(case)
    if shape == "severity_groups":
        return _groups(case, rng), _expected(case, word_levels=True)
    if shape == "factgenie":
        return _factgenie(case, rng), _expected(case, severity=False)
    if shape == "thinking_trace":
        expected = _expected(case)
        expected["decoy_score"] = float(LABELS.index(_decoy_label(case)) + 1)
        return _trace(case, rng), expected
    if shape == "truncated":
        # cut inside error k+1 (after its Location line or midway through its explanation): errors 1..k
        # are whole, error k+1's location was written, so it counts too; there is no score
        k = rng.randrange(len(case.errors))
        text = _ours(case, rng)
        marker = f"Error {k + 1}:\nLocation: \"{case.errors[k].location}\"\nExplanation: "
        cut = text.index(marker) + len(marker) + rng.randrange(0, 12)
        expected = _expected(case, errors=case.errors[: k + 1], score=False)
        expected["errors"][-1]["severity"] = None  # cut before its Severity line
        return text[:cut], expected
    raise ValueError(shape)


SHAPES = (
    "ours", "numbered_labels", "value_next_line", "severity_groups", "json_list", "json_errors_object",
    "json_keyed_errors", "json_after_prose", "factgenie", "markdown", "markdown_table", "severity_words",
    "thinking_trace", "truncated",
)

NO_ERROR_ANSWERS = [
    "The output contains 0 errors.\nOverall score: Excellent\nExplanation of the score: Faithful and fluent.",
    "No errors found.\n\nOverall score: Excellent\nExplanation of the score: Every claim is supported.",
    "The output is error-free.\nOverall score: Excellent\nExplanation of the score: Nothing to fault.",
    "I did not find any errors in the summary.\nOverall score: Excellent\nExplanation of the score: Accurate.",
    "There are no errors.\nOverall score: Excellent\nExplanation of the score: Complete and correct.",
    "Errors: None\nOverall score: Excellent\nExplanation of the score: All facts check out.",
    "Your translation contains no errors.\nOverall score: Excellent\nExplanation of the score: Correct.",
    "The text is free of errors with respect to this aspect.\nOverall score: Excellent\n"
    "Explanation of the score: It stays on topic throughout.",
    "No factual errors were identified.\n**Overall score:** Excellent\n**Explanation of the score:** Grounded.",
    "I couldn't find any hallucinations or inaccuracies.\nOverall score: Excellent\n"
    "Explanation of the score: Each number matches the table.",
    '{"errors": [], "overall_score": "Excellent", "score_explanation": "No problems."}',
    '```json\n{"annotations": []}\n```\nOverall score: Excellent\nExplanation of the score: Clean.',
    "```json\n[]\n```\nOverall score: Excellent\nExplanation of the score: Nothing wrong.",
    "Major errors:\n- None\nMinor errors:\n- None\n\nOverall score: Excellent\nExplanation of the score: Fine.",
    "<think>\nError 1:\nLocation: \"maybe this\"\nSeverity: 3\nOverall score: Fair\nNo, that is fine.\n</think>\n"
    "The output has no errors.\nOverall score: Excellent\nExplanation of the score: Accurate throughout.",
    "Error 1:\nLocation: None\nExplanation: No errors were found.\nSeverity: None\n\nOverall score: Excellent\n"
    "Explanation of the score: The story is coherent.",
    "## Errors\nNone.\n\n## Overall score\nExcellent\n\n## Explanation of the score\nThe dialogue response fits.",
    "The summary has zero errors.\nOverall score: Excellent\nExplanation of the score: Concise and correct.",
    "After checking every sentence, no issues were detected.\nOverall score: Excellent\n"
    "Explanation of the score: Faithful.",
    "I found 0 errors in the output.\nOverall score: 5\nExplanation of the score: Nothing to fix.",
    "This response is error free.\nOverall score: Excellent\nExplanation of the score: Meets the aspect.",
    '{"error_list": [], "overall_score": 5}',
]


def build(seed: int = 22) -> list[dict]:
    rng = random.Random(seed)
    records: list[dict] = []
    for shape in SHAPES:
        for i, case in enumerate(CASES):
            if shape == "truncated" and len(case.errors) < 1:
                continue
            text, expected = render(case, shape, rng)
            records.append({"id": f"{shape}-{i:02d}", "shape": shape, "text": text, **expected})
    for i, text in enumerate(NO_ERROR_ANSWERS):
        records.append({"id": f"no_errors-{i:02d}", "shape": "no_errors", "text": text, "errors": [],
                        "score": 5.0, "no_errors": True})
    return records


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-o", "--out", type=Path, default=DEFAULT_OUT)
    args = parser.parse_args()
    records = build()
    with args.out.open("w", encoding="utf-8") as fh:
        for record in records:
            fh.write(json.dumps(record, ensure_ascii=False) + "\n")
    print(f"{len(records)} answers in {len({r['shape'] for r in records})} shapes -> {args.out}")


if __name__ == "__main__":
    main()
