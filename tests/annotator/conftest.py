"""Fixtures of the annotation UI tests: two annotators and a campaign both of them work on."""

from __future__ import annotations

import pytest

from tests.factories import Built, build_campaign


@pytest.fixture
def two_annotators(make_user):
    return make_user("ann1"), make_user("ann2")


@pytest.fixture
def built(two_annotators) -> Built:
    return build_campaign(list(two_annotators), per_item=2)
