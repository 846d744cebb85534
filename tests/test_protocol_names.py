"""No product code outside the protocol modules tests a campaign's protocol by name: it asks the declaration
(corpus.protocols) or the annotator hooks (annotator.protocols).

A protocol-name test is a comparison with a protocol's name (a string literal such as "esa", or a constant such
as `protocols.MQM`) or with an attribute called `protocol`, and a call of a function named after a protocol
test (`is_esa`, `_is_mqm`). The protocol modules, which may, are the packages PROTOCOL_MODULES lists.
"""

from __future__ import annotations

import ast
from pathlib import Path

from corpus import protocols

ROOT = Path(__file__).resolve().parent.parent
PRODUCT = ("accounts", "analytics", "annotator", "comparison", "config", "corpus", "dhp", "evaluation", "jobs",
           "quality", "stats", "studies", "tasks")
PROTOCOL_MODULES = ("corpus/protocols/", "annotator/protocols/")
NAMES = {"opennlgauge", "mqm", "esa", "da", "pairwise", "sxs-mqm", "cesa"}
CONSTANTS = {name.upper().replace("-", "_") for name in NAMES}


def _is_protocol_name(node: ast.AST) -> bool:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value in NAMES
    if isinstance(node, ast.Attribute):
        return node.attr == "protocol" or (node.attr in CONSTANTS and isinstance(node.value, ast.Name)
                                           and node.value.id == "protocols")
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return any(_is_protocol_name(e) for e in node.elts)
    return False


def _is_test_call(node: ast.Call) -> bool:
    name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
    return name.lstrip("_") in {f"is_{n}" for n in NAMES}


def protocol_name_tests(source: str) -> list[int]:
    """The lines of `source` that test a protocol by name."""
    lines = []
    for node in ast.walk(ast.parse(source)):
        compares = isinstance(node, ast.Compare) and any(map(_is_protocol_name, [node.left, *node.comparators]))
        calls = isinstance(node, ast.Call) and _is_test_call(node)
        defines = isinstance(node, ast.FunctionDef) and node.name.lstrip("_") in {f"is_{n}" for n in NAMES}
        if compares or calls or defines:
            lines.append(node.lineno)
    return sorted(lines)


def _found(skip: tuple[str, ...]) -> list[str]:
    found = []
    for package in PRODUCT:
        for path in sorted((ROOT / package).rglob("*.py")):
            relative = path.relative_to(ROOT).as_posix()
            if "/migrations/" in relative or relative.startswith(PROTOCOL_MODULES + skip):
                continue
            found += [f"{relative}:{line}" for line in protocol_name_tests(path.read_text())]
    return found


def test_protocol_name_tests_are_counted():
    source = ('if campaign.protocol == protocols.ESA: pass\nif x == "mqm": pass\nis_esa(c)\n'
              'if protocols.get(c.protocol).judges_machine_spans: pass\nif kind == "done": pass\n')
    assert protocol_name_tests(source) == [1, 2, 3]
    assert set(protocols.PROTOCOLS) == NAMES  # a new built-in protocol joins the names counted


def test_no_protocol_name_tests_outside_the_protocol_modules():
    assert _found(()) == []
