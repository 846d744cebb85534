"""The fixture protocol's declaration (Django-free): the annotator marks spans in the output as one severity of
two and gives nothing else; no verdicts on machine spans, no pre-fill, no phase of its own."""

from __future__ import annotations

from corpus import protocols

NAME = "tick"
SEVERITIES = {"slip": 2, "blunder": 4}

PROTOCOL = protocols.register(protocols.Protocol(
    name=NAME, label="Tick (error spans as a slip or a blunder)", per_span=("span", "severity"),
    keys=lambda options: {"w": "severity: slip", "e": "severity: blunder"},
    template="protocolkind/item_tick.html", figures=(), exports=("jsonl",),
    clean_options=lambda value: {}, judges_machine_spans=False, severities=tuple(SEVERITIES.values()),
    severity_required=True, phases=("judging", "done"),
))
