"""The API's gamma is computed by a worker: 202 with Retry-After until the cached result is there, one task per
question, and a change to the data asks afresh (issue 26: gamma once took ~2 minutes inside a request)."""

from __future__ import annotations

import pytest
from django.test import Client

from accounts.services.tokens import token_create
from analytics.compare.gamma import GAMMA_TASK, gamma_compute
from corpus.models import ErrorSpan

URL = "/api/datasets/{}/compare?reference=gold:gold&sources=run:ens-run&gamma=true"


@pytest.fixture
def sent(monkeypatch, settings):
    """Tasks sent by name, recorded instead of queued; the results cache is a fresh in-process one."""
    from celery import current_app

    settings.CACHES = {**settings.CACHES, "gamma-test": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache",
                                                         "LOCATION": "gamma-test"}}
    settings.RESULTS_CACHE = "gamma-test"
    calls: list[tuple[str, list]] = []
    monkeypatch.setattr(current_app, "send_task", lambda name, args=(), **kw: calls.append((name, list(args))))
    return calls


def test_gamma_is_queued_once_served_from_the_cache_and_recomputed_after_a_change(
        study, make_user, sent, django_capture_on_commit_callbacks):
    client = Client(HTTP_AUTHORIZATION=f"Bearer {token_create(user=make_user('rita', role='researcher'))}")
    url = URL.format(study.dataset.pk)
    with django_capture_on_commit_callbacks(execute=True):
        first = client.get(url)
        second = client.get(url)
    assert first.status_code == 202 and second.status_code == 202
    assert first["Retry-After"] == "5" and first.json()["state"] == "pending"
    assert [name for name, _ in sent] == [GAMMA_TASK]  # the second request queued nothing

    assert gamma_compute(*sent[0][1]) == "done"  # what the worker does
    ready = client.get(url)
    assert ready.status_code == 200
    [row] = ready.json()
    assert row["source"] == "run:ens-run" and isinstance(row["gamma"], float)
    csv = client.get(url + "&format=csv")
    assert csv.status_code == 200 and csv["Content-Type"].startswith("text/csv")
    assert f"{row['gamma']}" in csv.content.decode()

    span = ErrorSpan.objects.filter(annotation__item__dataset=study.dataset).first()
    ErrorSpan.objects.create(annotation=span.annotation, position=99, text="x", start=0, end=1, match="exact")
    with django_capture_on_commit_callbacks(execute=True):
        assert client.get(url).status_code == 202  # new data: never the stale figure
    assert len(sent) == 2


def test_unknown_sources_are_refused_before_anything_is_queued(study, make_user, sent):
    client = Client(HTTP_AUTHORIZATION=f"Bearer {token_create(user=make_user('rita', role='researcher'))}")
    response = client.get(f"/api/datasets/{study.dataset.pk}/compare?reference=gold:gold&sources=nope&gamma=true")
    assert response.status_code == 422 and sent == []


def test_a_read_token_cannot_flood_the_workers_with_gamma(study, make_user, sent, settings,
                                                          django_capture_on_commit_callbacks):
    """A read-only token's GETs: an unknown aspect is a 422 (was: one task per made-up aspect), the sources
    in another order are the same question, and a user holds at most GAMMA_MAX_PENDING_PER_USER tasks."""
    settings.GAMMA_MAX_PENDING_PER_USER = 2
    base = f"/api/datasets/{study.dataset.pk}/compare?reference=gold:gold&gamma=true"

    def reader(name: str):
        client = Client(enforce_csrf_checks=True, HTTP_AUTHORIZATION="Bearer " + token_create(
            user=make_user(name, role="researcher"), scope="read"))

        def ask(query: str):
            with django_capture_on_commit_callbacks(execute=True):  # the task is sent once the request commits
                return client.get(base + query)
        return ask

    rita = reader("rita")
    for n in range(10):
        refused = rita(f"&sources=run:ens-run&aspect=no-such-aspect-{n}")
        assert refused.status_code == 422 and "aspect" in refused.json()["detail"]
    assert sent == []
    assert rita("&sources=run:ens-run,run:single-run").status_code == 202
    assert rita("&sources=run:single-run,run:ens-run").status_code == 202  # the same question
    assert rita("&sources=run:single-run,run:ens-run,run:ens-run").status_code == 202
    assert len(sent) == 1
    assert rita("&sources=run:ens-run&aspect=accuracy").status_code == 202  # a second question
    assert len(sent) == 2
    busy = rita("&sources=run:single-run")  # a third one while two are queued: refused
    assert busy.status_code == 429 and busy["Retry-After"] == "60"
    assert "GAMMA_MAX_PENDING_PER_USER" in busy.json()["detail"]
    assert len(sent) == 2
    assert reader("olga")("&sources=run:single-run").status_code == 202  # the cap is per user
    assert len(sent) == 3
    assert gamma_compute(*sent[0][1]) == "done"  # a worker finishes rita's first question: her slot is free
    done = rita("&sources=run:single-run,run:ens-run")
    assert done.status_code == 200
    assert [r["source"] for r in done.json()] == ["run:single-run", "run:ens-run"]  # in the order asked
    assert rita("&sources=run:silent-run").status_code == 202
    assert len(sent) == 4
