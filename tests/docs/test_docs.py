"""The documentation: a strict build, a reference that lists everything the code has, a short README whose
links resolve and whose two commands are the ones CI and the worked-path test use, and the app's links into it."""

from __future__ import annotations

import importlib.util
import os
import re
import resource
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.management import get_commands, load_command_class

from tests.conftest import REPO

README = REPO / "README.md"
README_BUDGET = 200  # lines
BUILD_SECONDS = 25
BUILD: dict[str, float] = {}  # CPU seconds the module's one build took
COMMON_FLAGS = {"-h", "--help", "--version", "-v", "--verbosity", "--settings", "--pythonpath", "--traceback",
                "--no-color", "--force-color", "--skip-checks"}


def _reference_module():
    spec = importlib.util.spec_from_file_location("docs_reference", REPO / "scripts" / "docs_reference.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    """The site as CI builds it: `mkdocs build --strict`, a warning (broken link or anchor, a page missing from
    the nav, a setting without a meaning) fails it."""
    target = tmp_path_factory.mktemp("site")
    env = dict(os.environ, NO_MKDOCS_2_WARNING="1")
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    result = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-d", str(target)], cwd=REPO,
                            env=env, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-4000:]
    assert "WARNING" not in result.stderr, result.stderr[-4000:]
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    BUILD["cpu"] = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return target


def _page(site: Path, path: str) -> str:
    return (site / path / "index.html").read_text(encoding="utf-8")


def test_docs_build_strict_within_its_time(site):
    assert (site / "index.html").is_file() and (site / "search" / "search_index.json").is_file()
    # CPU seconds, not wall time: on a machine shared with other work the wall clock measures the neighbours.
    assert BUILD["cpu"] < BUILD_SECONDS, f"the strict build took {BUILD['cpu']:.1f} s of CPU"


def _command_files() -> set[str]:
    return {p.stem for p in REPO.glob("*/management/commands/*.py") if not p.name.startswith("_")}


def test_reference_lists_every_management_command_and_its_flags(site):
    page = _page(site, "reference/commands")
    commands = _command_files()
    assert {"preannotate", "import_items", "export_items", "create_token", "dhp"} <= commands
    for name in commands:
        assert f'id="{name}"' in page, f"manage.py {name} is missing from the reference"
        command = load_command_class(get_commands()[name], name)
        flags = {o for a in command.create_parser("manage.py", name)._actions for o in a.option_strings}
        for flag in flags - COMMON_FLAGS:
            assert f"<code>{flag}</code>" in page, f"manage.py {name} {flag} is missing from the reference"


def test_reference_lists_every_api_operation(site):
    from config.api import api

    page = _page(site, "reference/api")
    schema = api.get_openapi_schema(path_prefix="/api/")
    operations = [(method.upper(), path, op["operationId"]) for path, ops in schema["paths"].items()
                  for method, op in ops.items()]
    assert len(operations) > 50
    for method, path, operation_id in operations:
        assert f"<code>{method} {path}</code>" in page, f"{method} {path} is missing from the reference"
        assert f"<code>{operation_id}</code>" in page


def _variables_in_code() -> set[str]:
    """Every environment variable the product reads, found in its source (not through the generator)."""
    names = set()
    for path in REPO.glob("*/**/*.py"):
        if ".venv" in path.parts or path.parts[len(REPO.parts)] in {"tests", "bench", "scripts"}:
            continue
        text = path.read_text(encoding="utf-8")
        names |= set(re.findall(r'env_(?:str|bool|int|float|list)\(\s*"([A-Z][A-Z0-9_]+)"', text))
        names |= set(re.findall(r'os\.environ\.get\(\s*[\'"]([A-Z][A-Z0-9_]+)[\'"]', text))
    for path in (REPO / "scripts").glob("*.sh"):
        names |= set(re.findall(r"\$\{([A-Z][A-Z0-9_]+):[-?]", path.read_text(encoding="utf-8")))
    return names


def test_reference_lists_every_setting_with_a_meaning(site):
    page = _page(site, "reference/settings")
    names = _variables_in_code()
    assert {"DATABASE_URL", "OLLAMA_URLS", "WEB_CONCURRENCY", "HOST", "PORT", "PYTHON", "DJANGO_DEBUG"} <= names
    for name in names:
        assert f"<code>{name}</code>" in page, f"{name} is missing from the settings reference"
    # One row per variable: a variable listed twice (once per reader, with two defaults) would contradict itself.
    rows = re.findall(r"<tr>\s*<td><code>([A-Z][A-Z0-9_]+)</code></td>", page)
    assert len(rows) == len(set(rows)), sorted(n for n in rows if rows.count(n) > 1)


def test_settings_page_reports_a_variable_without_a_meaning(settings):
    from config import env

    reference = _reference_module()
    env.READ["SPANJUDGE_NEW_KNOB"] = env.Variable("SPANJUDGE_NEW_KNOB", "integer", 3)
    problems: list[str] = []
    try:
        page = reference.settings_page(problems.append)
    finally:
        del env.READ["SPANJUDGE_NEW_KNOB"]
    assert problems == ["config/env.py: the setting SPANJUDGE_NEW_KNOB has no entry in MEANINGS"]
    assert "| `SPANJUDGE_NEW_KNOB` | integer | `3` |  |" in page
    assert "| `OLLAMA_URLS` | list | the value of `OLLAMA_URL` |" in page


def test_keys_reference_is_the_protocol(site):
    from corpus.protocols import opennlgauge as protocol

    page = _page(site, "reference/keys")
    for group in protocol.GROUPS:
        for term in group.terms:
            row = f"<td><code>{term.key}</code></td>\n<td>{term.label}</td>\n<td><code>{term.value}</code></td>"
            assert row in page, f"{group.name}: {term.value} is missing from the keys reference"


def _markdown_links(text: str) -> list[str]:
    return re.findall(r"\]\(([^)\s]+)\)", text)


def test_readme_links_resolve():
    links = _markdown_links(README.read_text(encoding="utf-8"))
    local = [link for link in links if not link.startswith(("http://", "https://"))]
    assert len(local) > 20
    for link in local:
        target, _, anchor = link.partition("#")
        path = REPO / target
        assert path.is_file(), f"README links to {link}, which does not exist"
        if anchor:
            headings = re.findall(r"^#+ (.+)$", path.read_text(encoding="utf-8"), re.MULTILINE)
            slugs = {re.sub(r"[^\w\- ]", "", h.lower()).strip().replace(" ", "-") for h in headings}
            assert anchor in slugs, f"README links to {link}: no such heading"
    assert {"docs/index.md", "docs/getting-started/install.md", "docs/screenshot.png"} <= set(local)


def test_readme_stays_short():
    lines = README.read_text(encoding="utf-8").splitlines()
    assert len(lines) <= README_BUDGET, f"README.md has {len(lines)} lines; the budget is {README_BUDGET}"


def test_readme_two_commands_are_the_ones_ci_and_the_worked_path_use():
    from tests.integration import test_readme_worked_path as worked_path

    text = README.read_text(encoding="utf-8")
    section = text[text.index("## Two commands"): text.index("\n## ", text.index("## Two commands") + 1)]
    run, test = (block.strip() for block in re.findall(r"^```bash\n(.*?)^```$", section, re.MULTILINE | re.DOTALL))
    assert (run, test) == ("bash scripts/run.sh", "bash scripts/test.sh")
    assert f"exec {test} " in (REPO / ".ci" / "run").read_text()
    assert run == worked_path.RUN_COMMAND
    assert f"Keep `{run}` running" in (REPO / "docs" / "getting-started" / "first-real-run.md").read_text()
    assert f"Keep `{run}` running" in text


def _app_doc_links() -> set[str]:
    links = set()
    for path in [*REPO.glob("templates/**/*.html"), *REPO.glob("*/views*.py"), *REPO.glob("*/views/*.py")]:
        links |= set(re.findall(r'"(/docs/[^"]*)"', path.read_text(encoding="utf-8")))
    return links


def test_app_links_into_the_docs_point_to_existing_sections(site):
    links = _app_doc_links()
    assert len(links) >= 10, links
    # Each analytics table links to its own section: expand the template's key into every table the code has.
    keys = re.findall(r'Table\(\s*"(\w+)"', (REPO / "analytics" / "tables.py").read_text())
    assert {"accuracy", "agreement", "overlap", "estimates"} <= set(keys)
    templated = {link for link in links if "{{ t.key }}" in link}
    assert templated == {"/docs/guides/analytics/#table-{{ t.key }}"}
    links = (links - templated) | {f"/docs/guides/analytics/#table-{key}" for key in keys}
    for link in links:
        page, _, anchor = link.removeprefix("/docs/").partition("#")
        html = site / page / "index.html"
        assert html.is_file(), f"{link}: no such page"
        if anchor:
            assert f'id="{anchor}"' in html.read_text(encoding="utf-8"), f"{link}: no such section"


@pytest.mark.django_db
def test_app_serves_the_built_site_at_docs_to_everyone(client, settings, site):
    settings.DOCS_SITE_DIR = site
    home = client.get("/docs/")
    assert home.status_code == 200 and b"Find your task" in b"".join(home.streaming_content)
    policy = home.headers["Content-Security-Policy"]
    assert "script-src 'self' 'unsafe-inline'" in policy and "frame-ancestors 'none'" in policy
    assert client.get("/docs/guides/study").url == "/docs/guides/study/"
    page = client.get("/docs/guides/study/")
    assert page.status_code == 200 and b"Create campaign" in b"".join(page.streaming_content)
    assert client.get("/docs/../../config/settings.py").status_code == 404
    assert client.get("/docs/no-such-page/").status_code == 404
    # Outside /docs/ the strict policy is unchanged.
    assert "unsafe-inline" not in client.get("/accounts/login/").headers["Content-Security-Policy"]


@pytest.mark.django_db
def test_app_says_how_to_build_the_docs_when_they_are_missing(client, settings, tmp_path):
    settings.DOCS_SITE_DIR = tmp_path
    answer = client.get("/docs/")
    assert answer.status_code == 404 and b"mkdocs build" in answer.content
