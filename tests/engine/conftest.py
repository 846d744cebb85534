"""Engine tests run without Django: shadow Django-only autouse fixtures and put the repo root on sys.path."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

_ROOT = str(Path(__file__).resolve().parents[2])
if _ROOT not in sys.path:
    sys.path.insert(0, _ROOT)


@pytest.fixture(autouse=True)
def _fast_hashing() -> None:
    """Shadow tests/conftest.py's autouse fixture, which needs pytest-django's `settings`."""
