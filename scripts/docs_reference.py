"""Generate the docs' reference pages from the code itself, so they cannot drift from it.

Each function returns one Markdown page: the management commands from their argparse parsers, the REST API
from the OpenAPI schema the app serves (built in-process, no server), the environment variables from
`config.env` (what the settings read, with their types and defaults), and the study protocol's verdicts and
keys from `corpus.protocols.opennlgauge` and the item screen's shortcut list. `scripts/docs_hooks.py` adds them to the
MkDocs build; `python scripts/docs_reference.py DIR` writes them to DIR for a look.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent

# Options every Django command has; listed once on the page instead of under each command.
DJANGO_COMMON = {"help", "version", "verbosity", "settings", "pythonpath", "traceback", "no_color", "force_color",
                 "skip_checks"}


def setup_django() -> None:
    """Configure Django as `manage.py` does; the build needs no database, only the code and the settings."""
    if str(REPO) not in sys.path:
        sys.path.insert(0, str(REPO))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    # Outside DEBUG the settings refuse to start without a key; the docs build signs nothing.
    os.environ.setdefault("DJANGO_SECRET_KEY", "docs-build-only-" + "k" * 50)
    import django

    django.setup()


def cell(text: object) -> str:
    """Text for a Markdown table cell: one line, pipes and angle brackets escaped."""
    value = " ".join(str(text).split())
    return value.replace("\\", "\\\\").replace("|", "\\|").replace("<", "&lt;").replace(">", "&gt;")


def table(header: Iterable[str], rows: Iterable[Iterable[object]]) -> list[str]:
    head = list(header)
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    lines += ["| " + " | ".join(cell(c) for c in row) + " |" for row in rows]
    return lines


# ---------------------------------------------------------------------------------------------------- commands
def project_commands() -> dict[str, str]:
    """name -> app of every management command whose code lives in this repository."""
    from django.core.management import get_commands

    found = {}
    for name, app in get_commands().items():
        module = importlib.import_module(f"{app}.management.commands.{name}")
        if Path(module.__file__).resolve().is_relative_to(REPO) and ".venv" not in Path(module.__file__).parts:
            found[name] = app
    return dict(sorted(found.items()))


def _flag(action: argparse.Action) -> str:
    if not action.option_strings:
        return f"`{action.metavar or action.dest.upper()}`"
    return ", ".join(f"`{o}`" for o in action.option_strings)


def _value(action: argparse.Action) -> str:
    if action.nargs == 0:
        return ""
    if action.choices:
        return " \\| ".join(f"`{c}`" for c in action.choices)
    metavar = action.metavar or (action.dest.upper() if action.option_strings else "")
    return f"`{metavar}`" if metavar else ""


def _default(action: argparse.Action) -> str:
    if action.nargs == 0 or action.default in (None, argparse.SUPPRESS, False) or action.required:
        return "required" if action.required and action.option_strings else ""
    return f"`{action.default}`" if action.default != "" else "empty"


def commands_page() -> str:
    from django.core.management import load_command_class

    lines = ["# Management commands", "",
             "Generated at build time from each command's own argument parser: what `.venv/bin/python manage.py "
             "COMMAND --help` prints. Every command also takes Django's common options (`-v`, `--settings`, "
             "`--traceback`, `--no-color`, ...). Django's own commands (`migrate`, `createsuperuser`, "
             "`changepassword`, `check --deploy`) and django-axes' `axes_reset_username` work as their projects "
             "document.", ""]
    for name, app in project_commands().items():
        command = load_command_class(app, name)
        parser = command.create_parser("manage.py", name)
        formatter = parser._get_formatter()
        usage = " ".join(parser.format_usage().removeprefix("usage: ").split())
        rows = []
        for action in parser._actions:
            if action.dest in DJANGO_COMMON:
                continue
            help_text = formatter._expand_help(action) if action.help else ""
            rows.append((_flag(action), _value(action), _default(action), help_text))
        lines += [f"## `{name}`", "", command.help.strip() or "(no description)", "", "```text", usage, "```", "",
                  f"From the `{app}` app.", ""]
        if rows:
            lines += ["| argument | value | default | meaning |", "|---|---|---|---|"]
            lines += ["| " + " | ".join([r[0], r[1], r[2].replace("|", "\\|"), cell(r[3])]) + " |" for r in rows]
            lines.append("")
    return "\n".join(lines)


# ---------------------------------------------------------------------------------------------------- REST API
def api_schema() -> dict[str, Any]:
    from config.api import api

    return api.get_openapi_schema(path_prefix="/api/")


def _schema_type(schema: dict[str, Any]) -> str:
    if "$ref" in schema:
        return schema["$ref"].rsplit("/", 1)[-1]
    if "anyOf" in schema:
        return " or ".join(_schema_type(s) for s in schema["anyOf"])
    if schema.get("type") == "array":
        return f"list of {_schema_type(schema.get('items', {}))}"
    if "enum" in schema:
        return " \\| ".join(f"`{v}`" for v in schema["enum"])
    return schema.get("type", "any")


def _properties(schema: dict[str, Any], components: dict[str, Any]) -> list[tuple[str, str, str, str]]:
    if "$ref" in schema:
        schema = components.get(schema["$ref"].rsplit("/", 1)[-1], {})
    required = set(schema.get("required", []))
    return [(f"`{name}`", cell(_schema_type(prop)), "yes" if name in required else "",
             cell(prop.get("description", "")))
            for name, prop in schema.get("properties", {}).items()]


def api_operations(schema: dict[str, Any]) -> list[tuple[str, str, dict[str, Any]]]:
    """(METHOD, path, operation) of every operation in the schema, in its order."""
    return [(method.upper(), path, op) for path, ops in schema["paths"].items() for method, op in ops.items()]


def api_page() -> str:
    from config.openapi import DESCRIPTIONS as SHARED_REFUSALS

    schema = api_schema()
    components = schema.get("components", {}).get("schemas", {})
    by_tag: dict[str, list[tuple[str, str, dict[str, Any]]]] = {}
    for method, path, op in api_operations(schema):
        by_tag.setdefault((op.get("tags") or ["other"])[0], []).append((method, path, op))
    lines = ["# REST API", "",
             "Generated at build time from the OpenAPI schema the app serves at `/api/openapi.json` (interactive "
             "at `/api/docs` for signed-in users). Scripts send `Authorization: Bearer TOKEN` (see "
             "[Scripts and the API](../guides/api.md)); every refusal has a `detail` saying why.", "",
             f"{sum(len(v) for v in by_tag.values())} operations:", ""]
    for tag in sorted(by_tag):
        lines.append(f"- **{tag}**: " + ", ".join(f"`{op.get('operationId')}`" for _, _, op in by_tag[tag]))
    lines += ["", "## Refusals", "",
              "Every refusal answers `{\"detail\": ..., \"field\": ...}` (JSON): `detail` says why, `field` "
              "names what was sent wrong as data, so a script need not read the sentence - a dotted path into the "
              "request (`\"link.cap\"`, `\"routing.min_k\"`, `\"protocol_options.tree[2]\"`, `\"file\"` for "
              "an upload's content), a list when the refusal is about several (`[\"sample\", \"routing\"]`), or "
              "`null` when it is about the request as a whole (a state that refuses it, a role). The schema "
              "check's own 422 (a wrong type, a missing field) answers `{\"detail\": [{\"loc\": [...], "
              "\"msg\": ...}]}` instead. The statuses an operation can give besides its own are listed under "
              "it; they mean:", ""]
    lines += table(["status", "meaning"], sorted(SHARED_REFUSALS.items()))
    lines.append("")
    for tag in sorted(by_tag):
        lines += [f"## {tag}", ""]
        for method, path, op in by_tag[tag]:
            lines += [f"### `{method} {path}`", "", f"Operation `{op.get('operationId')}`.", ""]
            if op.get("description"):
                lines += [op["description"].strip(), ""]
            params = op.get("parameters", [])
            if params:
                lines += table(["parameter", "in", "type", "required", "meaning"], (
                    (f"`{p['name']}`", p.get("in", ""), _schema_type(p.get("schema", {})),
                     "yes" if p.get("required") else "", p.get("description", "")) for p in params))
                lines.append("")
            for media, body in op.get("requestBody", {}).get("content", {}).items():
                body_schema = body.get("schema", {})
                lines += [f"Body (`{media}`): {_schema_type(body_schema)}", ""]
                rows = _properties(body_schema, components)
                if rows:
                    lines += ["| field | type | required | meaning |", "|---|---|---|---|"]
                    lines += ["| " + " | ".join(r) + " |" for r in rows]
                    lines.append("")
            answers, refusals = [], []
            for status, response in sorted(op.get("responses", {}).items(), key=lambda kv: int(kv[0])):
                if int(status) >= 400 and response.get("description") == SHARED_REFUSALS.get(int(status)):
                    refusals.append(f"[{status}](#refusals)")
                    continue
                content = response.get("content", {})
                kinds = ", ".join(f"`{m}`" for m in content)
                shape = ""
                if int(status) < 300 and "application/json" in content:
                    shape = _schema_type(content["application/json"].get("schema", {}))
                answers.append((str(status), response.get("description", ""), kinds, shape))
            lines += table(["status", "meaning", "content", "shape"], answers)
            if refusals:
                lines += ["", "Refusals: " + ", ".join(refusals) + "."]
            lines.append("")
    return "\n".join(lines)


# ---------------------------------------------------------------------------------------------------- settings
def _shown(default: object) -> str:
    if isinstance(default, bool):
        return f"`{str(default).lower()}`"
    if isinstance(default, list):
        return f"`{','.join(default)}`" if default else "empty"
    if default == "":
        return "empty"
    if isinstance(default, float) and default.is_integer():
        return f"`{int(default)}`"
    return f"`{default}`"


def settings_page(problems: Callable[[str], None]) -> str:
    """The variables page; `problems` is told of each variable the settings read that has no meaning written."""
    from config import env

    lines = ["# Settings and environment variables", "",
             "Generated at build time from `config/env.py`: the settings read every variable through its typed "
             "helpers (`env_str`, `env_bool`, `env_int`, `env_float`, `env_list`), which record the name, the type "
             "and the default; a bad boolean or number (`DJANGO_DEBUG=maybe`) stops start-up with a message. "
             "`scripts/run.sh` writes `var/local.env` (a generated `DJANGO_SECRET_KEY`) on its first start and the "
             "settings read it too; a variable you export wins over the file.", "",
             "## Read by the app", ""]
    rows = []
    for var in env.READ.values():
        meaning = env.MEANINGS.get(var.name)
        if not meaning:
            problems(f"config/env.py: the setting {var.name} has no entry in MEANINGS")
        default = env.SHOWN_DEFAULTS.get(var.name) or _shown(var.default)
        rows.append((f"`{var.name}`", var.kind, default, meaning or ""))
    lines += ["| variable | type | default | meaning |", "|---|---|---|---|"]
    lines += ["| " + " | ".join([r[0], r[1], r[2], r[3].replace("|", "\\|")]) + " |" for r in rows]
    lines += ["", "## Read by the scripts, gunicorn and the tests", "",
              "| variable | default | read by | meaning |", "|---|---|---|---|"]
    lines += [f"| `{v.name}` | {v.default} | {v.read_by} | {v.meaning} |" for v in env.SCRIPT_VARIABLES]
    lines.append("")
    return "\n".join(lines)


# ---------------------------------------------------------------------------------------------------- protocol
def keys_page() -> str:
    from annotator.views.work import SHORTCUTS
    from corpus.protocols import opennlgauge as protocol

    lines = ["# Verdicts, flags and keys", "",
             "Generated at build time from `corpus/protocols/opennlgauge.py` (the study protocol's vocabulary, written "
             "once) and the item screen's shortcut list, the one its `?` dialog shows. The stored value is what "
             "exports, the API and the analytics use; the label is what the expert reads.", ""]
    for group in protocol.GROUPS:
        field = f"field `{group.field}`" if group.field else "each flag is its own true/false field"
        lines += [f"## {group.name}", "", f"Stored as {field}.", ""]
        lines += table(["key", "label", "stored value", "meaning"],
                       ((f"`{t.key}`", t.label, f"`{t.value}`", t.help) for t in group.terms))
        lines.append("")
    lines += ["## Every key of the item screen", ""]
    lines += table(["keys", "action"], ((keys, what) for keys, what in SHORTCUTS))
    lines += ["", f"Table 4's headline rates: **Span OK %** counts span verdict `{protocol.SPAN_OK}`, "
              f"**Exp. correct %** counts explanation verdict `{protocol.EXPLANATION_OK}`, each over every judged "
              "span.", ""]
    return "\n".join(lines)


def pages(problems: Callable[[str], None]) -> dict[str, str]:
    """Docs path -> Markdown of every generated page."""
    setup_django()
    return {
        "reference/commands.md": commands_page(),
        "reference/api.md": api_page(),
        "reference/settings.md": settings_page(problems),
        "reference/keys.md": keys_page(),
    }


if __name__ == "__main__":
    target = Path(sys.argv[1] if len(sys.argv) > 1 else "var/docs-reference")
    for path, text in pages(lambda message: print("problem:", message, file=sys.stderr)).items():
        (target / path).parent.mkdir(parents=True, exist_ok=True)
        (target / path).write_text(text, encoding="utf-8")
        print("wrote", target / path)


# ---------------------------------------------------------------------------------------------------- snippets
def presets_table() -> str:
    from evaluation.engine.presets import PRESETS

    return "\n".join(table(["preset", "annotators", "supervisor", "note"], (
        (f"`{p.name}`", ", ".join(p.annotators), p.supervisor, p.note) for p in PRESETS.values())))


def snippets() -> dict[str, Callable[[], str]]:
    """Tables written into hand-written pages where they hold `<!-- generated:NAME -->`."""
    return {"presets": presets_table, "shortcuts": shortcuts_table}


def shortcuts_table() -> str:
    from annotator.views.work import SHORTCUTS

    return "\n".join(table(["keys", "action"], ((f"`{keys}`", what) for keys, what in SHORTCUTS)))


def form_table(dotted: str) -> str:
    """The fields of a Django form class as its page shows them: label, required or not, initial value, help."""
    from django import forms
    from django.forms.utils import pretty_name

    module, _, name = dotted.rpartition(".")
    form = getattr(importlib.import_module(module), name)
    rows = []
    for field_name, field in form.base_fields.items():
        if isinstance(field.widget, forms.HiddenInput):
            continue
        initial = field.initial
        shown = "" if callable(initial) or initial in (None, "") or len(str(initial)) > 60 else f"`{initial}`"
        choices = ""
        if isinstance(field, forms.ChoiceField) and not isinstance(field, forms.ModelChoiceField):
            values = [str(label) for value, label in field.choices if value not in ("", None)]
            if values:
                choices = " Choices: " + ", ".join(values) + "."
        rows.append((f"**{field.label or pretty_name(field_name)}**", "yes" if field.required else "",
                     shown, f"{field.help_text or ''}{choices}".strip()))
    return "\n".join(table(["field", "required", "initial", "help"], rows))


def fields_table(dotted: str) -> str:
    """The fields of a record type (a TypedDict) as the code declares them: name, type, always or only sometimes
    written, and the comment beside the field."""
    import inspect
    import re

    module, _, name = dotted.rpartition(".")
    record = getattr(importlib.import_module(module), name)
    comments = dict(re.findall(r"^\s+(\w+): [^#\n]+#\s*(.+)$", inspect.getsource(record), re.MULTILINE))
    rows = []
    for field, kind in record.__annotations__.items():
        written = getattr(kind, "__forward_arg__", str(kind))
        # The module postpones annotations, so NotRequired is still text here, not in __optional_keys__.
        optional = written.startswith("NotRequired[") or field in record.__optional_keys__
        if written.startswith("NotRequired["):
            written = written.removeprefix("NotRequired[").removesuffix("]")
        types = " or ".join(f"`{part.strip()}`" for part in written.split("|"))
        always = "sometimes" if optional else "always"
        rows.append((f"`{field}`", types, always, comments.get(field, "")))
    return "\n".join(table(["field", "type", "written", "note"], rows))
