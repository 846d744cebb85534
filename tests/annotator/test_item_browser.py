"""The researcher's item browser: item list filters and span counts per source, the item page, access."""

from __future__ import annotations

import pytest

from corpus.models import AnnotationKind
from tests.factories import added_error, annotation, build_campaign, dataset, gold, item, span_at

pytestmark = pytest.mark.django_db

EVIL = "<script>alert('x')</script>"


@pytest.fixture
def browsed(two_annotators):
    """The UI campaign's dataset plus: gold spans on item 1, an expert's added error, an annotator-level
    (non-answer) list of run alpha, and a third item with no annotation at all."""
    built = build_campaign(list(two_annotators), per_item=1, name="browse")
    item1, item2 = built.items
    gold(item1, ["cheap", "near the river"])
    alpha = built.runs[0]
    inner = annotation(item1, alpha, kind=AnnotationKind.ANNOTATOR, model="llama-secret:70b")
    span_at(inner, 1, "coffee shop", explanation="Only an input to the merge.")
    added_error(built.campaign, two_annotators[0], item1, 4, 17, explanation="Made-up name " + EVIL)
    bare = item(built.dataset, "i3", "A text " + EVIL + " with no annotation.", position=3, system="sys-b")
    return built, bare


def test_items_list_counts_spans_per_source_and_filters(client, researcher, browsed):
    built, bare = browsed
    client.force_login(researcher)
    url = f"/datasets/{built.dataset.pk}/"
    response = client.get(url)
    assert response.status_code == 200
    ctx = response.context
    labels = [c.label for c in ctx["columns"]]
    assert labels == ["gold", "secret-run-alpha", "secret-run-beta", "ann1 @ browse"]
    counts = {row[0].external_id: row[1] for row in ctx["rows"]}
    # alpha's answer on item 1 is its ensemble list (2 spans), not the annotator-level list beside it.
    assert counts == {"i1": [2, 2, 1, 1], "i2": [None, None, 1, None], "i3": [None, None, None, None]}
    html = response.content.decode()
    assert f'href="/datasets/{built.dataset.pk}/items/{bare.pk}/"' in html
    assert EVIL not in html and "&lt;script&gt;" in html
    # Each system once in the filter; the filters narrow the list.
    assert ctx["systems"] == ["sys-b", "sys-visible-only-to-staff"]
    ids = lambda **q: [r[0].external_id for r in client.get(url, q).context["rows"]]  # noqa: E731
    assert ids(system="sys-b") == ["i2", "i3"]
    assert ids(has_gold="yes") == ["i1"]
    assert ids(has_gold="no") == ["i2", "i3"]
    assert ids(has_runs="no") == ["i3"]
    assert ids(has_runs="yes", system="sys-b") == ["i2"]


def test_item_page_shows_every_source_with_explanations_escaped(client, researcher, browsed):
    built, _ = browsed
    client.force_login(researcher)
    item1 = built.items[0]
    response = client.get(f"/datasets/{built.dataset.pk}/items/{item1.pk}/")
    assert response.status_code == 200
    shown = [v.title for v in response.context["shown"]]
    # By default: gold, each run's answer and the expert's additions; the annotator-level list is offered only.
    assert shown == ["gold · Gold reference", "secret-run-alpha · Ensemble (merged) · llama-secret:70b · accuracy",
                     "secret-run-beta · Ensemble (merged) · qwen-hidden:32b · accuracy",
                     "ann1 @ browse · Human · accuracy"]
    offered = [v.title for v in response.context["views"]]
    assert "secret-run-alpha · Annotator LLM · llama-secret:70b · accuracy" in offered
    html = response.content.decode()
    assert "Family friendliness is &#x27;yes&#x27; in the data." in html  # a span's explanation
    assert EVIL not in html and "Made-up name &lt;script&gt;" in html
    # Switching: show only the annotator-level list.
    inner = next(v for v in response.context["views"] if v.annotation.kind == AnnotationKind.ANNOTATOR)
    one = client.get(f"/datasets/{built.dataset.pk}/items/{item1.pk}/", {"show": inner.annotation.pk})
    assert [v.annotation.pk for v in one.context["shown"]] == [inner.annotation.pk]
    assert "Only an input to the merge." in one.content.decode()


def test_item_browser_is_for_researchers_only(client, browsed, two_annotators):
    built, _ = browsed
    client.force_login(two_annotators[0])
    assert client.get(f"/datasets/{built.dataset.pk}/").status_code == 403
    assert client.get(f"/datasets/{built.dataset.pk}/items/{built.items[0].pk}/").status_code == 403
    client.logout()
    assert client.get(f"/datasets/{built.dataset.pk}/items/{built.items[0].pk}/").status_code in (302, 403)


def test_an_item_is_found_only_under_its_own_dataset(client, researcher, browsed):
    built, _ = browsed
    other = dataset("elsewhere")
    client.force_login(researcher)
    assert client.get(f"/datasets/{other.pk}/items/{built.items[0].pk}/").status_code == 404
