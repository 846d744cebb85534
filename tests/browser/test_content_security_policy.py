"""Every page is served with a strict Content-Security-Policy and works under it: no violation in the console."""

from __future__ import annotations

import pytest

from accounts.models import User
from annotator.models import Assignment, SpanJudgment
from annotator.selectors.spans import span_handle
from tests.factories import build_campaign

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

_WATCH = """
window.__cspViolations = [];
document.addEventListener('securitypolicyviolation',
  e => window.__cspViolations.push(e.violatedDirective + ' ' + (e.blockedURI || 'inline')));
"""


def test_pages_work_under_the_csp_without_violations(page, live_server, login, make_user):
    console: list[str] = []
    page.on("console", lambda msg: console.append(msg.text))
    page.add_init_script(_WATCH)
    ann = make_user("cspann")
    User.objects.create_superuser("cspadmin", password="pass-1234", role="admin")
    built = build_campaign([ann], per_item=1)
    assignment = Assignment.objects.get(annotator=ann, item=built.items[0])

    response = page.request.get(f"{live_server.url}/accounts/login/")
    policy = response.headers.get("content-security-policy", "")
    assert "script-src 'self'" in policy and "default-src 'self'" in policy
    assert "unsafe-inline" not in policy and "unsafe-eval" not in policy

    # The annotator's screens: htmx saves a verdict (the card re-renders) under the policy.
    login("cspann")
    page.goto(f"{live_server.url}/campaigns/{built.campaign.pk}/")
    page.goto(f"{live_server.url}/work/{assignment.pk}/")
    span = built.spans["b1_family"]
    page.keyboard.press("1")
    card = span_handle(assignment.pk, span.pk)
    page.locator(f"#error-{card} button.chip[aria-pressed='true']", has_text="Error").wait_for()
    assert SpanJudgment.objects.filter(assignment=assignment, span=span, span_verdict="error").exists()
    violations = page.evaluate("window.__cspViolations")
    assert violations == [], violations

    # Staff pages, the analytics dashboard with its data: charts, the API docs and the admin.
    page.context.clear_cookies()
    login("cspadmin")
    for path in ("/", f"/datasets/{built.dataset.pk}/", "/campaigns/new/", "/runs/new/", "/datasets/import/",
                 f"/analytics/campaigns/{built.campaign.pk}/", "/api/docs", "/admin/",
                 "/admin/accounts/user/", f"/admin/accounts/user/{ann.pk}/change/", "/admin/accounts/user/add/"):
        page.goto(f"{live_server.url}{path}")
        page.wait_for_load_state("networkidle")
        violations = page.evaluate("window.__cspViolations")
        assert violations == [], (path, violations)
    page.goto(f"{live_server.url}/api/docs")
    page.locator(".swagger-ui .opblock").first.wait_for()  # the docs page rendered (its scripts ran)
    assert not [line for line in console if "Content Security Policy" in line], console
