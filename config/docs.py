"""The documentation site at /docs/: the static pages `mkdocs build` wrote (scripts/run.sh builds them into var/site).

Everyone may read it, signed in or not. Its theme runs small inline scripts and styles, so these pages (static
files of this repository, holding no user data) relax the app's Content-Security-Policy for those two only.
"""

from __future__ import annotations

from pathlib import Path

from csp.decorators import csp_update
from django.conf import settings
from django.contrib.auth.decorators import login_not_required
from django.core.exceptions import SuspiciousFileOperation
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseNotFound, HttpResponseRedirect
from django.utils._os import safe_join
from django.views.static import serve

NOT_BUILT = """<!doctype html><title>Documentation not built</title>
<h1>The documentation has not been built</h1>
<p>Build it with <code>.venv/bin/mkdocs build</code> in the checkout (<code>bash scripts/run.sh</code> does it
at start), or read the same pages as Markdown in the repository's <code>docs/</code> folder.</p>
"""


def site_dir() -> Path:
    return Path(getattr(settings, "DOCS_SITE_DIR", settings.BASE_DIR / "var" / "site"))


@login_not_required
@csp_update({"script-src": ["'unsafe-inline'"], "style-src": ["'unsafe-inline'"]})
def docs_page(request: HttpRequest, path: str = "") -> HttpResponse:
    root = site_dir()
    if not (root / "index.html").is_file():
        return HttpResponseNotFound(NOT_BUILT)
    try:
        target = Path(safe_join(root, path))
    except SuspiciousFileOperation:
        raise Http404("no such page") from None
    if path and not path.endswith("/") and target.is_dir():
        return HttpResponseRedirect(f"{request.path}/")
    if path == "" or path.endswith("/"):
        path += "index.html"
    return serve(request, path, document_root=str(root))
