"""The block parser: an answer's lines split into error blocks and the trailing score fields."""

from __future__ import annotations

from dataclasses import dataclass, field

from evaluation.engine.parsing.fields import CORRECTION_FIELD as _CORRECTION_FIELD
from evaluation.engine.parsing.fields import EXTRA_FIELD as _EXTRA_FIELD
from evaluation.engine.parsing.fields import FIELD as _FIELD
from evaluation.engine.parsing.fields import canonical_field as _canonical_field
from evaluation.engine.parsing.lines import _NO_ERRORS, _clean_line, _header, _split_lines


@dataclass
class _Block:
    number: int | None
    fields: dict[str, list[str]] = field(default_factory=dict)
    implicit: bool = False


@dataclass
class _Issue:
    text: str
    degrades: bool  # True when the answer is incomplete because of it (status "partial")



def _parse(text: str) -> tuple[list[_Block], dict[str, list[str]], bool, list[_Issue]]:
    """Split an answer into error blocks and the trailing score fields."""
    lines = [_clean_line(line) for line in _split_lines(text)]
    blocks: list[_Block] = []
    tail: dict[str, list[str]] = {}
    issues: list[_Issue] = []
    no_errors = False
    current: _Block | None = None
    target: list[str] | None = None  # where continuation lines go
    in_tail = False  # inside the overall score / its explanation
    tail_paragraph_ended = False

    def following(i: int) -> str:
        return next((later for later in lines[i + 1 :] if later), "")

    for i, line in enumerate(lines):
        if not line:
            if in_tail and tail.get("score_explanation") and target is tail.get("score_explanation"):
                tail_paragraph_ended = True
            continue
        head = _header(line, following(i), in_tail)
        if head is not None and head[0] == "no_errors":
            no_errors = True
            continue
        if head is not None:
            if in_tail:
                issues.append(_Issue("an error block after the overall score", False))
            current = _Block(number=head[1])
            blocks.append(current)
            in_tail = tail_paragraph_ended = False
            target = None
            if not head[2]:
                continue
            line = head[2]
        field_match = _FIELD.match(line)
        if field_match:
            name = _canonical_field(field_match.group("name"))
            value = field_match.group("value").strip()
            if name == "explanation" and in_tail:
                name = "score_explanation"
            if name in ("score", "score_explanation"):
                in_tail, current, tail_paragraph_ended = True, None, False
                if name in tail:
                    # the final answer is the last one: an earlier score was a draft or an example
                    issues.append(_Issue(f"more than one {name.replace('_', ' ')}; the last is used", False))
                    if name == "score":
                        tail.pop("score_explanation", None)
                tail[name] = [value]
                target = tail[name]
                continue
            if current is None or (name == "location" and "location" in current.fields):
                if blocks:
                    issues.append(_Issue("an error without its own 'Error N:' header", False))
                current = _Block(number=None, implicit=True)
                blocks.append(current)
            current.fields.setdefault(name, []).append(value)
            target = current.fields[name]
            continue
        if not blocks and not in_tail and _NO_ERRORS.match(line):
            no_errors = True
            continue
        extra = _EXTRA_FIELD.match(line)
        if extra and current is not None and not in_tail:
            name = " ".join(extra.group("name").split())
            if _CORRECTION_FIELD.match(name):
                # a correction belongs with the explanation it completes
                current.fields.setdefault("explanation", []).append(line)
                target = current.fields["explanation"]
            else:
                issues.append(_Issue(f"field {name!r} not read", False))
                target = None
            continue
        if in_tail and tail_paragraph_ended:
            if target is not None:
                issues.append(_Issue("text after the score explanation ignored", False))
            target = None
            continue
        if target is not None:
            target.append(line)
        # otherwise: preamble or chatter outside any field, ignored
    return blocks, tail, no_errors, issues

