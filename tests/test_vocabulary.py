"""Each value of the study protocol is written once, in corpus/protocols/opennlgauge.py: product code names it from
there.

A value spelled out again drifts when the protocol changes (a renamed verdict keeps working in one module and
silently stops matching in another). The scan looks for the protocol's values that are no ordinary words
(`not_error`, `partially_correct`, ...) as whole string literals in product Python, templates and scripts.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

from corpus.protocols import opennlgauge as protocol

ROOT = Path(__file__).resolve().parent.parent
PRODUCT = ("accounts", "analytics", "annotator", "comparison", "config", "corpus", "dhp", "errors", "evaluation",
           "jobs", "quality", "studies", "tasks")
# The protocol itself, migrations (frozen history), and the demo's scripted sample answers (data, not logic).
EXEMPT = {"corpus/protocols/opennlgauge.py", "studies/management/commands/load_demo.py"}
WORDS = {"error", "correct", "incomplete", "vague", "repeated"}  # plain words: found as labels and messages too
VALUES = {t.value for group in protocol.GROUPS for t in group.terms} - WORDS


def _python_literals() -> list[str]:
    found = []
    for app in PRODUCT:
        for path in (ROOT / app).rglob("*.py"):
            relative = path.relative_to(ROOT).as_posix()
            if relative in EXEMPT or "/migrations/" in relative:
                continue
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.Constant) and node.value in VALUES:
                    found.append(f"{relative}:{node.lineno} {node.value!r}")
    return found


def _markup_literals() -> list[str]:
    pattern = re.compile("[\"'](" + "|".join(sorted(VALUES)) + ")[\"']")
    found = []
    for folder, suffix in (("templates", "*.html"), ("static/js", "*.js")):
        for path in (ROOT / folder).rglob(suffix):
            for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
                if match := pattern.search(line):
                    found.append(f"{path.relative_to(ROOT).as_posix()}:{number} {match.group(0)}")
    return found


def test_protocol_values_are_written_once():
    assert {"not_error", "no_span", "hallucination", "partially_correct", "incorrect", "too_strict"} <= VALUES
    assert _python_literals() == []
    assert _markup_literals() == []


def test_the_scan_finds_a_value_written_again():
    """The scan is not vacuous: a module that spells a verdict out is caught."""
    leaky = ROOT / "quality" / "_leaky_vocabulary_probe.py"
    leaky.write_text('VERDICT = "not_error"\n', encoding="utf-8")
    try:
        assert any("_leaky_vocabulary_probe.py:1 'not_error'" in hit for hit in _python_literals())
    finally:
        leaky.unlink()
