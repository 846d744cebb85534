"""What the annotation pages show, as plain data: item inputs, highlighted output pieces, guidelines, offsets.

A package by concern; the names below are its public interface (templates and views import them from here).
"""

from __future__ import annotations

from annotator.rendering.guidelines import markdown_html
from annotator.rendering.highlighting import Segment, SpanRef, group_spans, segments
from annotator.rendering.inputs import (
    MAX_PYTHON_LITERAL_CHARS,
    MAX_STRUCTURED_CHARS,
    InputKind,
    InputView,
    Table,
    Turn,
    render_input,
    render_inputs,
)
from annotator.rendering.offsets import from_browser_offset, to_browser_offset

__all__ = [
    "MAX_PYTHON_LITERAL_CHARS", "MAX_STRUCTURED_CHARS", "InputKind", "InputView", "Segment", "SpanRef", "Table",
    "Turn", "from_browser_offset", "group_spans", "markdown_html", "render_input", "render_inputs", "segments",
    "to_browser_offset",
]
