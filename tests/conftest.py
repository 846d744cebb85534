"""Shared fixtures: fast hashing, users by role, the made-up sample data and the optional shared datasets."""

from __future__ import annotations

import os
from pathlib import Path
from urllib.parse import urlsplit

import pytest

REPO = Path(__file__).resolve().parent.parent
# Small made-up files the project writes itself (tests/data/README.md); always present.
SAMPLE_DATA = REPO / "tests" / "data"
# The licensed datasets (meta_eval/*.json, rotowire/train.jsonl) are never in the repository: they are read from
# $SPANJUDGE_DATA, or from ../shared/data beside the repository, and the tests that need them skip without them.
SHARED_DATA = Path(os.environ.get("SPANJUDGE_DATA") or REPO.parent / "shared" / "data").expanduser()


def shared_file(relative: str) -> Path:
    """A file of the shared datasets, or a skip of the calling test when it is not there."""
    path = SHARED_DATA / relative
    if not path.exists():
        pytest.skip(f"{path} not present: set SPANJUDGE_DATA to a folder with meta_eval/ and rotowire/train.jsonl "
                    "(see docs/contributing/tests.md)")
    return path


@pytest.fixture
def meta_eval_dir() -> Path:
    """The shared OpeNLGauge meta-evaluation files (skips without them)."""
    return shared_file("meta_eval")


@pytest.fixture
def rotowire_file() -> Path:
    """The shared RotoWire summaries with gold error spans (skips without them)."""
    return shared_file("rotowire/train.jsonl")


@pytest.fixture(autouse=True)
def _fast_hashing(settings):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture
def make_user(db):
    from tests.factories import user

    return user


@pytest.fixture
def researcher(make_user):
    return make_user("rita", role="researcher")


@pytest.fixture
def annotator_user(make_user):
    return make_user("anna", role="annotator")


@pytest.fixture(autouse=True)
def _empty_cache():
    """The locmem cache lives as long as the process; no test may see another's cached results."""
    from django.core.cache import cache

    cache.clear()


@pytest.fixture(autouse=True)
def _loopback_servers_allowed(request, monkeypatch):
    """Simulated LLM servers listen on random loopback ports, so a test may use any loopback server; a test
    marked `strict_allowlist` gets the allowlist exactly as production applies it (OLLAMA_URL, OLLAMA_URLS)."""
    if request.node.get_closest_marker("strict_allowlist"):
        return
    from evaluation.runs import backends

    exact = backends.server_allowed
    monkeypatch.setattr(backends, "server_allowed",
                        lambda server: exact(server) or urlsplit(server.url).hostname in ("127.0.0.1", "localhost"))


@pytest.fixture
def allow_ollama(monkeypatch):
    """Allow these servers for one test (on top of OLLAMA_URL and OLLAMA_URLS, which stay as they are)."""
    from evaluation.runs import backends

    def allow(*urls: str) -> None:
        allowed = backends.server_allowed
        names = {u.rstrip("/") for u in urls}
        monkeypatch.setattr(backends, "server_allowed", lambda server: server.name in names or allowed(server))

    return allow


_UNSET = object()
_SAFE_METHODS = ("GET", "HEAD", "OPTIONS", "TRACE")


@pytest.fixture(autouse=True)
def _csrf_checks_on(monkeypatch):
    """Every test client checks CSRF, as production does (Django's test client skips the check by default,
    which hid a 403 that scripts got instead of 401).

    A client made without `enforce_csrf_checks` acts like our pages: a request with no Authorization header
    sends the CSRF cookie's token in X-CSRFToken (the pages put it in hx-headers and forms); a request with a
    bearer token sends none, like a script. A test that passes `enforce_csrf_checks` itself gets exactly that."""
    from django.conf import settings
    from django.middleware.csrf import _get_new_csrf_string
    from django.test import Client

    original_init, original_request = Client.__init__, Client.request

    def init(self, enforce_csrf_checks=_UNSET, *args, **kwargs):
        self._acts_like_page = enforce_csrf_checks is _UNSET
        original_init(self, True if self._acts_like_page else enforce_csrf_checks, *args, **kwargs)

    def request(self, **environ):
        if (getattr(self, "_acts_like_page", False) and environ.get("REQUEST_METHOD", "GET") not in _SAFE_METHODS
                and "HTTP_AUTHORIZATION" not in {**self.defaults, **environ}):
            cookie = self.cookies.get(settings.CSRF_COOKIE_NAME)
            if cookie is None or not cookie.value:
                self.cookies[settings.CSRF_COOKIE_NAME] = _get_new_csrf_string()
                cookie = self.cookies[settings.CSRF_COOKIE_NAME]
            environ.setdefault("HTTP_X_CSRFTOKEN", cookie.value)
        return original_request(self, **environ)

    monkeypatch.setattr(Client, "__init__", init)
    monkeypatch.setattr(Client, "request", request)
