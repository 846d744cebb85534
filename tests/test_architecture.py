"""The layer contracts hold on the tree, and they would catch an upward import or Django in the engine."""

from __future__ import annotations

import ast
import configparser
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
PACKAGES = (
    "config", "tasks", "analytics", "dhp", "comparison", "annotator", "evaluation", "stats", "corpus", "accounts",
    "jobs", "errors",
)
LINT_IMPORTS = Path(sys.executable).parent / "lint-imports"


def _lint(root: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(LINT_IMPORTS), "--no-cache"], cwd=root, capture_output=True, text=True, timeout=120,
        env={"PYTHONPATH": str(root), "PATH": "/usr/bin:/bin"},
    )


def _root_packages() -> list[str]:
    """Every package the contracts name (the copy must hold them all, or lint-imports stops at the first missing)."""
    config = configparser.ConfigParser()
    config.read(REPO / ".importlinter")
    return config["importlinter"]["root_packages"].split()


@pytest.fixture
def tree_copy(tmp_path: Path) -> Path:
    """The product's packages, the tests package and the contracts, copied where they can be broken."""
    for name in _root_packages():
        shutil.copytree(REPO / name, tmp_path / name, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(REPO / ".importlinter", tmp_path / ".importlinter")
    return tmp_path


def test_the_contracts_are_kept():
    result = _lint(REPO)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "3 kept, 0 broken" in result.stdout


def _append(path: Path, line: str) -> None:
    path.write_text(path.read_text() + f"\n{line}\n")


@pytest.mark.parametrize(("module", "line", "broken"), [
    # the corpus reaching up to campaigns: an upward import (and a cycle with annotator -> corpus)
    ("corpus/models.py", "from annotator import models as _up  # noqa", "Layers"),
    # a function-local import is an import all the same
    ("evaluation/selectors.py", "def _later():\n    from analytics import views  # noqa", "Layers"),
    ("evaluation/engine/parsing/answer.py", "import django.db  # noqa", "free of Django"),
    ("evaluation/runs/scheduler.py", "from evaluation.models import LLMCall  # noqa", "free of Django"),
    ("corpus/protocols/opennlgauge.py", "from corpus import models as _m  # noqa", "free of Django"),
    ("comparison/engine/checklist.py", "import django.db  # noqa", "free of Django"),
    ("stats/priming.py", "from analytics import selectors as _s  # noqa", "free of Django"),
    ("stats/sampling.py", "import django.db  # noqa", "free of Django"),
    # statistics sit below the evaluation layer
    ("stats/correlation.py", "from evaluation.engine import errors as _e  # noqa", "Layers"),
    # analytics and comparison are independent siblings of one layer
    ("analytics/tables.py", "from comparison import models as _c  # noqa", "Layers"),
    ("annotator/views/pages.py", "import tests.ollama_sim  # noqa", "never imports test code"),
])
def test_a_broken_rule_fails_the_check(tree_copy: Path, module: str, line: str, broken: str):
    _append(tree_copy / module, line)
    result = _lint(tree_copy)
    assert result.returncode != 0
    assert f"{broken}" in result.stdout and "BROKEN" in result.stdout


def _function_local_imports(path: Path) -> list[str]:
    """Imports of another of the project's packages written inside a function body."""
    own = path.relative_to(REPO).parts[0]
    found = []
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        for inner in ast.walk(node):
            names = []
            if isinstance(inner, ast.ImportFrom) and inner.module and inner.level == 0:
                names = [inner.module]
            elif isinstance(inner, ast.Import):
                names = [alias.name for alias in inner.names]
            for name in names:
                top = name.split(".")[0]
                if top in PACKAGES and top != own:
                    found.append(f"{path.relative_to(REPO)}:{inner.lineno} imports {name}")
    return found


def test_no_function_local_import_between_apps():
    offenders = [
        hit for package in PACKAGES for path in sorted((REPO / package).rglob("*.py"))
        if "migrations" not in path.parts for hit in _function_local_imports(path)
    ]
    assert offenders == []


@pytest.mark.django_db
def test_the_migrations_match_the_models():
    """Vocabulary derived from the protocol (choices, flag columns, severity bounds) must not drift from them."""
    from django.core.management import call_command

    call_command("makemigrations", "--check", "--dry-run", verbosity=0)


def test_every_command_of_the_project_ends_a_user_error_the_same_way():
    """Each management command derives from errors.commands.BaseCommand, so a UserError exits 2 with its message."""
    from django.core.management import get_commands, load_command_class

    from errors.commands import BaseCommand

    ours = {name: app for name, app in get_commands().items() if app.split(".")[0] in PACKAGES}
    assert len(ours) > 10
    strays = [name for name, app in ours.items() if not isinstance(load_command_class(app, name), BaseCommand)]
    assert strays == []
