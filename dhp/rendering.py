"""The original and a perturbed text side by side, differences marked; built from escaped pieces."""

from __future__ import annotations

import difflib
import re

from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString

_TOKEN = re.compile(r"\s+|\w+|[^\w\s]")


def diff_html(original: str, perturbed: str) -> tuple[SafeString, SafeString]:
    """Return (original with <del> marks, perturbed with <ins> marks), by tokens (words, spaces, punctuation)."""
    a, b = _TOKEN.findall(original), _TOKEN.findall(perturbed)
    left: list[tuple[str, str]] = []
    right: list[tuple[str, str]] = []
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(a=a, b=b, autojunk=False).get_opcodes():
        old, new = "".join(a[i1:i2]), "".join(b[j1:j2])
        if op == "equal":
            left.append(("span", old))
            right.append(("span", new))
            continue
        if old:
            left.append(("del", old))
        if new:
            right.append(("ins", new))
    return _join(left), _join(right)


def _join(pieces: list[tuple[str, str]]) -> SafeString:
    return format_html_join("", "{}", ((_piece(tag, text),) for tag, text in pieces))


def _piece(tag: str, text: str) -> SafeString:
    if tag == "span":
        return format_html("{}", text)
    return format_html('<{} class="diff">{}</{}>', tag, text, tag)
