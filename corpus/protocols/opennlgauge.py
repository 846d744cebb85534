"""The study protocol's vocabulary, written once: verdicts, flags, annotation kinds and match kinds.

Django-free on purpose. Model choices, import/export validation, the statistics, the item screen's chips,
its shortcut sheet and the page's key map (handed to the JavaScript as JSON) are all derived from here, so
adding a flag or a verdict is one edit. The verdicts are those of the OpeNLGauge human study (§7.2,
Table 4); the help texts are ours.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Term:
    """One value of the protocol: what is stored, what the expert reads, the key that sets it, a short help."""

    value: str
    label: str
    key: str
    help: str


SPAN_VERDICTS: tuple[Term, ...] = (
    Term("error", "Error", "1", "The marked text really contains an error of this aspect."),
    Term("not_error", "Not an error", "2", "The marked text is fine; the evaluator was wrong to flag it."),
    Term("no_span", "No span given", "3", "No location in the text is given (or only an implicit one)."),
    Term("hallucination", "Hallucination", "4", "The quoted location does not exist in the text."),
)
EXPLANATION_VERDICTS: tuple[Term, ...] = (
    Term("correct", "Correct", "q", "Says exactly what is wrong and why."),
    Term("partially_correct", "Partially correct", "w", "Right about part of the problem, wrong about another."),
    Term("incomplete", "Incomplete", "e", "Right, but leaves out an important part of the problem."),
    Term("vague", "Vague", "r", "Too general to tell what exactly is wrong."),
    Term("incorrect", "Incorrect", "t", "Describes a problem the text does not have."),
    Term("not_error", "Not an error", "y", "There is no error here to explain."),
)
FLAGS: tuple[Term, ...] = (
    Term("too_strict", "Too strict", "z", "A real but negligible issue judged too harshly."),
    Term("not_aspect_related", "Not aspect related", "x", "The error belongs to another aspect."),
    Term("repeated", "Repeated", "c", "The same error was already reported for this item."),
    Term("hard_to_parse", "Hard to parse", "v", "The error is hard to understand as written."),
    Term("implicit_span", "Implicit span", "b", "The location is implied rather than quoted."),
)
SEVERITIES: tuple[int, ...] = (1, 2, 3, 4, 5)

# Who made an annotation, and how a span's written location was found in the output: (stored value, label).
# The models' choices and the item files' validation both take them from here.
ANNOTATION_KINDS: tuple[tuple[str, str], ...] = (
    ("ensemble", "Ensemble (merged)"),
    ("annotator", "Annotator LLM"),
    ("supervisor", "Supervisor LLM"),
    ("human", "Human"),
    ("gold", "Gold reference"),
)
MATCH_KINDS: tuple[tuple[str, str], ...] = (
    ("exact", "Exact"),
    ("normalized", "Normalized"),
    ("fuzzy", "Fuzzy"),
    ("none", "Not in the text"),
)

SPAN_VERDICT_VALUES: tuple[str, ...] = tuple(t.value for t in SPAN_VERDICTS)
EXPLANATION_VERDICT_VALUES: tuple[str, ...] = tuple(t.value for t in EXPLANATION_VERDICTS)
FLAG_VALUES: tuple[str, ...] = tuple(t.value for t in FLAGS)
ANNOTATION_KIND_VALUES: tuple[str, ...] = tuple(value for value, _ in ANNOTATION_KINDS)
MATCH_KIND_VALUES: tuple[str, ...] = tuple(value for value, _ in MATCH_KINDS)

# Row and column order of the paper's Table 4 (its span columns differ from the key order above).
TABLE4_SPAN_ORDER: tuple[str, ...] = ("error", "no_span", "not_error", "hallucination")
TABLE4_EXPLANATION_ORDER: tuple[str, ...] = EXPLANATION_VERDICT_VALUES

# The verdicts that make the two headline rates of Table 4, and the ones that say "no error here".
SPAN_OK = "error"
EXPLANATION_OK = "correct"
SPAN_NOT_ERROR = "not_error"
EXPLANATION_NOT_ERROR = "not_error"
EXPLANATION_INCORRECT = "incorrect"

# The judgment fields the protocol defines, in the order a form or an API lists them.
JUDGMENT_FIELDS: tuple[str, ...] = ("span_verdict", "explanation_verdict", *FLAG_VALUES, "comment",
                                    "corrected_severity")


@dataclass(frozen=True)
class Group:
    """One row of chips on an error card. `field` is the judgment field the group sets; a flag is its own field."""

    name: str
    field: str | None
    terms: tuple[Term, ...]


# The chip groups of an error card in screen order; their names head the chips and the shortcut sheet.
GROUPS: tuple[Group, ...] = (
    Group("Span", "span_verdict", SPAN_VERDICTS),
    Group("Explanation", "explanation_verdict", EXPLANATION_VERDICTS),
    Group("Flags", None, FLAGS),
)

# Keys the item screen keeps for itself (moving, comment, undo, redo, selection, add, finish, items, guidelines,
# help, severity, done marking; see static/js/annotate/main.js and marking.js). No verdict or flag may take one,
# or its key would silently do nothing.
SCREEN_KEYS: frozenset[str] = frozenset("jkmuUsafnpg?-=+0doO")


def choices(terms: tuple[Term, ...]) -> list[tuple[str, str]]:
    """(value, label) pairs for Django model and form fields."""
    return [(t.value, t.label) for t in terms]


def key_map() -> dict[str, dict[str, str]]:
    """key -> {field, value} for every chip key: what the item page hands to its JavaScript."""
    keys: dict[str, dict[str, str]] = {}
    for group in GROUPS:
        for t in group.terms:
            # A flag chip toggles the flag's own boolean field.
            keys[t.key] = {"field": group.field or t.value, "value": t.value if group.field else "toggle"}
    return keys


def shortcut_lines() -> list[tuple[str, str]]:
    """The chip lines of the shortcut sheet: (the group's keys, "group: label · label ...")."""
    return [(" ".join(t.key for t in g.terms), f"{g.name.lower()}: " + " · ".join(t.label for t in g.terms))
            for g in GROUPS]


def _check() -> None:
    """Keys must be unique across the whole screen (screen keys included), and values unique within their group."""
    all_keys = [t.key for group in GROUPS for t in group.terms]
    if len(set(all_keys)) != len(all_keys):
        raise ValueError(f"protocol keys collide: {all_keys}")
    if taken := sorted(SCREEN_KEYS.intersection(all_keys)):
        raise ValueError(f"protocol keys {taken} are already screen keys")
    for group in (SPAN_VERDICTS, EXPLANATION_VERDICTS, FLAGS):
        values = [t.value for t in group]
        if len(set(values)) != len(values):
            raise ValueError(f"protocol values repeat: {values}")
    named = {SPAN_OK, SPAN_NOT_ERROR} - set(SPAN_VERDICT_VALUES) | (
        {EXPLANATION_OK, EXPLANATION_NOT_ERROR, EXPLANATION_INCORRECT} - set(EXPLANATION_VERDICT_VALUES))
    if named:
        raise ValueError(f"named verdicts {sorted(named)} are not verdicts of the protocol")
    if sorted(TABLE4_SPAN_ORDER) != sorted(SPAN_VERDICT_VALUES):
        raise ValueError("Table 4's span order must list every span verdict once")


_check()
