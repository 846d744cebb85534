"""Who may see and change what: other annotators' work, evaluator identities, researcher pages (HTML and API)."""

from __future__ import annotations

import json

import pytest
from django.test import Client

from accounts.services.tokens import token_create
from annotator.models import Assignment, SpanJudgment
from annotator.selectors.spans import span_handle
from annotator.services.judgments import judgment_set
from tests.annotator.study_links import join_by_link, link_study, signed_in_participant
from tests.factories import SECRET_NAMES, build_campaign

pytestmark = pytest.mark.django_db


def _api(user, method: str, path: str, body: dict | None = None):
    client = Client()
    token = token_create(user=user)
    kwargs = {"HTTP_AUTHORIZATION": f"Bearer {token}"}
    if body is not None:
        kwargs.update(data=json.dumps(body), content_type="application/json")
    return getattr(client, method)(f"/api{path}", **kwargs)


@pytest.fixture
def theirs(built, two_annotators) -> Assignment:
    _, ann2 = two_annotators
    return Assignment.objects.get(annotator=ann2, item=built.items[0])


def test_annotator_cannot_open_or_change_another_annotators_assignment_html(client, built, two_annotators, theirs):
    ann1, _ = two_annotators
    client.force_login(ann1)
    span = built.spans["a1_family"]
    assert client.get(f"/work/{theirs.pk}/").status_code == 404
    for url, data in [
        (f"/work/{theirs.pk}/errors/{span.pk}/", {"field": "span_verdict", "value": "error"}),
        (f"/work/{theirs.pk}/undo/", {}),
        (f"/work/{theirs.pk}/added/", {"start": 0, "end": 3}),
        (f"/work/{theirs.pk}/finish/", {}),
        (f"/work/{theirs.pk}/time/", {"seconds": 5}),
    ]:
        assert client.post(url, data).status_code == 404, url
    assert not SpanJudgment.objects.exists()


def test_annotator_cannot_open_or_change_another_annotators_assignment_api(built, two_annotators, theirs):
    ann1, _ = two_annotators
    span = built.spans["a1_family"]
    assert _api(ann1, "get", f"/assignments/{theirs.pk}").status_code == 404
    assert _api(ann1, "post", f"/assignments/{theirs.pk}/judgments",
                {"span_id": span.pk, "span_verdict": "error"}).status_code == 404
    assert _api(ann1, "post", f"/assignments/{theirs.pk}/undo").status_code == 404
    assert _api(ann1, "post", f"/assignments/{theirs.pk}/finish", {}).status_code == 404
    assert _api(ann1, "post", f"/assignments/{theirs.pk}/added-spans", {"start": 0, "end": 3}).status_code == 404
    listed = _api(ann1, "get", "/assignments").json()["items"]
    assert theirs.pk not in {a["id"] for a in listed}
    assert {a["id"] for a in listed} == set(Assignment.objects.filter(annotator=ann1).values_list("pk", flat=True))


def test_annotator_cannot_touch_another_annotators_added_span(built, two_annotators, theirs):
    ann1, ann2 = two_annotators
    from annotator.services.added_spans import added_span_create

    span = added_span_create(assignment=theirs, user=ann2, start=0, end=3)
    assert _api(ann1, "patch", f"/added-spans/{span.pk}", {"note": "mine now"}).status_code == 404
    assert _api(ann1, "delete", f"/added-spans/{span.pk}").status_code == 404
    client = Client()
    client.force_login(ann1)
    assert client.post(f"/added/{span.pk}/delete/").status_code == 404
    span.refresh_from_db()
    assert span.explanation == ""


def test_evaluator_identities_are_hidden_from_annotators(client, built, two_annotators):
    ann1, _ = two_annotators
    client.force_login(ann1)
    alpha = built.runs[0]
    # Pages and endpoints that name runs and evaluators refuse annotators.
    assert client.get(f"/runs/{alpha.pk}/").status_code == 403
    assert client.get(f"/campaigns/{built.campaign.pk}/control/").status_code == 403
    assert client.get("/campaigns/new/").status_code == 403
    assert _api(ann1, "get", "/runs").status_code == 403
    assert _api(ann1, "get", f"/runs/{alpha.pk}").status_code == 403
    assert _api(ann1, "get", f"/campaigns/{built.campaign.pk}/control-accuracy").status_code == 403
    # Everything an annotator can open shows neutral labels only: no run label, evaluator, model, source, system.
    mine = Assignment.objects.filter(annotator=ann1).order_by("order")
    texts = [client.get(f"/work/{a.pk}/").content.decode() for a in mine]
    texts += [client.get(url).content.decode() for url in (
        "/", f"/campaigns/{built.campaign.pk}/", f"/campaigns/{built.campaign.pk}/guidelines/")]
    texts += [_api(ann1, "get", f"/assignments/{a.pk}").content.decode() for a in mine]
    texts.append(_api(ann1, "get", "/assignments").content.decode())
    joined = "\n".join(texts)
    assert "Evaluator A" in joined and "Evaluator B" in joined
    for secret in (*SECRET_NAMES, "sys-visible-only-to-staff", "is_control", "thinks this is poor"):
        assert secret not in joined, secret


def test_researchers_see_the_identities_behind_the_labels(client, built, researcher):
    client.force_login(researcher)
    page = client.get(f"/campaigns/{built.campaign.pk}/").content.decode()
    assert "secret-run-alpha" in page and "HiddenEval Judge" in page


def test_annotator_never_sees_another_annotators_verdicts(client, built, two_annotators):
    ann1, ann2 = two_annotators
    theirs = Assignment.objects.select_related("campaign", "item").get(annotator=ann2, item=built.items[0])
    judgment_set(assignment=theirs, span=built.spans["a1_family"], user=ann2,
                 changes={"span_verdict": "hallucination", "comment": "ann2-private-note"})
    mine = Assignment.objects.get(annotator=ann1, item=built.items[0])
    client.force_login(ann1)
    page = client.get(f"/work/{mine.pk}/").content.decode()
    assert "ann2-private-note" not in page
    assert 'aria-pressed="true"' not in page
    detail = _api(ann1, "get", f"/assignments/{mine.pk}").json()
    assert all(e["judgment"] is None for e in detail["errors"])


def test_annotator_outside_a_campaign_gets_404_for_it(client, built, make_user):
    outsider = make_user("outsider")
    client.force_login(outsider)
    assert client.get(f"/campaigns/{built.campaign.pk}/").status_code == 404
    assert client.get(f"/campaigns/{built.campaign.pk}/guidelines/").status_code == 404


def test_saving_needs_the_csrf_token_the_page_puts_in_hx_headers(built, two_annotators):
    ann1, _ = two_annotators
    client = Client(enforce_csrf_checks=True)
    client.force_login(ann1)
    mine = Assignment.objects.get(annotator=ann1, item=built.items[0])
    page = client.get(f"/work/{mine.pk}/").content.decode()
    marker = 'hx-headers=\'{"X-CSRFToken": "'
    token = page[page.index(marker) + len(marker):].split('"', 1)[0]
    url = f"/work/{mine.pk}/errors/{span_handle(mine.pk, built.spans['a1_family'].pk)}/"
    data = {"field": "span_verdict", "value": "error", "number": "2"}
    assert client.post(url, data).status_code == 403
    response = client.post(url, data, HTTP_X_CSRFTOKEN=token, HTTP_HX_REQUEST="true")
    assert response.status_code == 200
    html = response.content.decode()
    assert html.lstrip().startswith(f'<article id="error-{span_handle(mine.pk, built.spans["a1_family"].pk)}"')
    assert "saved ✓" in html and "#2" in html
    assert SpanJudgment.objects.get(annotator=ann1).span_verdict == "error"


def test_added_span_from_page_offsets_is_exact_in_crlf_text(two_annotators):
    """The page counts CR LF as one character; the stored span must still slice the stored text exactly."""
    from corpus.models import ErrorSpan
    from tests.factories import build_campaign

    ann1, ann2 = two_annotators
    output = "The Copper Kettle is cheap.\r\nIt is not family-friendly.\r\nIt is near the river."
    built = build_campaign([ann1, ann2], per_item=2, output_1=output, name="crlf campaign")
    work = Assignment.objects.get(annotator=ann1, item=built.items[0])
    shown = output.replace("\r\n", "\n")
    start = shown.index("near the river")
    client = Client()
    client.force_login(ann1)
    page = client.get(f"/work/{work.pk}/").content.decode()
    assert f'data-length="{len(shown)}"' in page
    response = client.post(f"/work/{work.pk}/added/", {"start": start, "end": start + len("near the river")})
    assert response.status_code == 200
    span = ErrorSpan.objects.get(annotation__kind="human", annotation__item=built.items[0])
    assert span.text == "near the river" and output[span.start : span.end] == "near the river"


def test_a_closed_campaign_refuses_every_change_with_409_and_keeps_the_judgments(client, built, two_annotators):
    """Access is decided in one place: the same refusal (409, with the reason) from the page and the API."""
    from annotator.models import Campaign

    ann1, _ = two_annotators
    mine = Assignment.objects.get(annotator=ann1, item=built.items[0])
    span = built.spans["a1_family"]
    judgment_set(assignment=mine, span=span, user=ann1, changes={"span_verdict": "error"})
    Campaign.objects.filter(pk=built.campaign.pk).update(status=Campaign.Status.CLOSED)

    client.force_login(ann1)
    for url, data in [
        (f"/work/{mine.pk}/errors/{span_handle(mine.pk, span.pk)}/", {"field": "span_verdict", "value": "not_error"}),
        (f"/work/{mine.pk}/undo/", {}),
        (f"/work/{mine.pk}/added/", {"start": 0, "end": 3}),
        (f"/work/{mine.pk}/finish/", {}),
    ]:
        response = client.post(url, data)
        assert response.status_code == 409, url
        assert "closed" in response.content.decode()
    for method, path, body in [
        ("patch", f"/assignments/{mine.pk}/judgments/{span_handle(mine.pk, span.pk)}", {"span_verdict": "not_error"}),
        ("post", f"/assignments/{mine.pk}/undo", None),
        ("post", f"/assignments/{mine.pk}/added-spans", {"start": 0, "end": 3}),
        ("post", f"/assignments/{mine.pk}/finish", {}),
    ]:
        response = _api(ann1, method, path, body)
        assert response.status_code == 409, path
        assert "closed" in response.json()["detail"]
    assert SpanJudgment.objects.get(assignment=mine, span=span).span_verdict == "error"
    assert not SpanJudgment.objects.filter(assignment=mine).exclude(span=span).exists()


def test_a_participant_reaches_only_their_queue_items_guidelines_and_end_screen(settings, make_user):
    """Someone who joined by a study link: their study's pages answer, nothing else of the site does."""
    settings.RATELIMIT_USE_CACHE = "default"
    study = link_study(n_items=4, per_item=1, items_per_participant=2)
    other_study = link_study(name="Other study")
    client = Client()
    join_by_link(client, study)
    p = signed_in_participant(client)
    neighbour = Client()
    join_by_link(neighbour, study, "?PROLIFIC_PID=neighbour")
    theirs = Assignment.objects.filter(annotator=signed_in_participant(neighbour).user).first()
    mine = Assignment.objects.filter(annotator=p.user).first()
    pk = study.campaign.pk
    allowed = {
        f"/campaigns/{pk}/": 200, f"/campaigns/{pk}/guidelines/": 200, f"/work/{mine.pk}/": 200,
        f"/campaigns/{pk}/resume/": 302, f"/campaigns/{pk}/end/": 302,  # not done: back to the queue
    }
    for url, status in allowed.items():
        assert client.get(url).status_code == status, url
    registered = make_user("registered-annotator")
    registered_campaign = build_campaign([registered], name="Registered campaign").campaign
    refused = [
        "/", "/datasets/import/", "/campaigns/new/", f"/campaigns/{other_study.campaign.pk}/",
        f"/campaigns/{registered_campaign.pk}/", f"/campaigns/{pk}/participants/", f"/campaigns/{pk}/control/",
        f"/work/{theirs.pk}/", "/accounts/tokens/", "/analytics/", "/dhp/", "/admin/", "/runs/",
        "/api/assignments", f"/api/campaigns/{pk}", f"/api/assignments/{mine.pk}", "/api/docs", "/no/such/page/",
    ]
    for url in refused:
        assert client.get(url).status_code == 404, url
    assert client.post(f"/work/{theirs.pk}/finish/").status_code == 404
    assert client.post("/accounts/tokens/", {"name": "x"}).status_code == 404
    # Nothing of the other participant leaks into the pages the participant may open.
    neighbour_name = signed_in_participant(neighbour).user.username
    for url in allowed:
        assert neighbour_name not in client.get(url, follow=True).content.decode()
