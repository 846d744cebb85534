"""Shared fixtures: fast hashing, users by role, paths to the shared datasets."""

from __future__ import annotations

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
SHARED_DATA = REPO.parent / "shared" / "data"
META_EVAL = SHARED_DATA / "meta_eval"
ROTOWIRE = SHARED_DATA / "rotowire" / "train.jsonl"


@pytest.fixture(autouse=True)
def _fast_hashing(settings):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture
def make_user(db):
    from accounts.models import User

    def make(username: str, role: str = "annotator", password: str = "pass-1234") -> User:
        user = User.objects.create_user(username=username, password=password, role=role)
        return user

    return make


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
