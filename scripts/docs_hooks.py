"""MkDocs hooks: add the reference pages generated from the code (scripts/docs_reference.py) to every build.

A setting without a written meaning is logged as a warning, so `mkdocs build --strict` (CI) fails on it.
"""

from __future__ import annotations

import logging
import re
import sys
from pathlib import Path

from mkdocs.structure.files import File, Files

sys.path.insert(0, str(Path(__file__).resolve().parent))
import docs_reference  # noqa: E402  (a sibling script, not a package)

log = logging.getLogger("mkdocs.plugins.spanjudge")
# A marker counts only alone on its line, so that a page can quote one in running text.
MARKER = re.compile(r"^<!-- generated:(?:(form|fields) )?([\w.-]+) -->$", re.MULTILINE)


def on_files(files: Files, config) -> Files:
    for path, text in docs_reference.pages(log.warning).items():
        files.append(File.generated(config, path, content=text))
    return files


def on_page_markdown(markdown: str, page, config, files) -> str:
    """Fill the `<!-- generated:NAME -->` lines of hand-written pages (`<!-- generated:form DOTTED.PATH -->`: the
    fields of that form class; `<!-- generated:fields DOTTED.PATH -->`: those of a record type); an unknown NAME
    is a warning, so the strict build fails on it."""
    snippets = docs_reference.snippets()

    def fill(match: re.Match) -> str:
        kind, name = match.groups()
        if kind == "form":
            return docs_reference.form_table(name)
        if kind == "fields":
            return docs_reference.fields_table(name)
        if name not in snippets:
            log.warning(f"{page.file.src_uri}: no generated table named {name!r} (known: {', '.join(snippets)})")
            return match.group(0)
        return snippets[name]()

    return MARKER.sub(fill, markdown)
