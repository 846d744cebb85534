"""Every page fits a 390 px wide phone screen: no sideways scrolling of the page itself (wide tables scroll
inside their own box), and no favicon 404."""

from __future__ import annotations

import pytest

from annotator.models import Assignment
from comparison.models import ComparisonJob
from comparison.services.jobs import comparison_create
from corpus.models import Dataset
from corpus.services.importing import items_import
from dhp.engine.kinds import parse_kinds
from dhp.models import DhpRun
from dhp.services.runs import dhp_create
from dhp.services.surveys import survey_create, votes_save
from jobs.kinds import job_execute
from jobs.models import JobStatus
from tests.conftest import SAMPLE_DATA
from tests.dhp.conftest import make_dataset
from tests.factories import build_campaign
from tests.ollama_sim import OllamaSim, SimConfig

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

WIDTH = 390


def _overflow(page) -> list[str]:
    """The page's scroll width beyond the viewport, and the widest elements that stick out, for the message."""
    return page.evaluate(
        """(width) => {
          const out = [];
          if (document.documentElement.scrollWidth > width) {
            out.push('page ' + document.documentElement.scrollWidth + ' px');
            for (const el of document.querySelectorAll('body *')) {
              const r = el.getBoundingClientRect();
              if (r.right > width + 1 && getComputedStyle(el).position !== 'fixed') {
                let p = el.parentElement, clipped = false;
                while (p) {
                  const o = getComputedStyle(p).overflowX;
                  if (o === 'auto' || o === 'scroll' || o === 'hidden') { clipped = true; break; }
                  p = p.parentElement;
                }
                const name = el.tagName.toLowerCase() + (el.id ? '#' + el.id : '');
                if (!clipped) out.push(name + ' ' + Math.round(r.right));
              }
              if (out.length > 8) break;
            }
          }
          return out;
        }""",
        WIDTH,
    )


def test_every_page_fits_390_px_without_sideways_scroll(browser, live_server, make_user):
    admin = make_user("narrow-admin", role="admin")
    expert = make_user("narrow-expert")
    built = build_campaign([expert], per_item=1, name="A campaign with a rather long name for a phone screen")
    assignment = Assignment.objects.filter(annotator=expert).first()
    dataset = make_dataset("dhp-narrow", n=4)
    voters = [make_user(f"voter{i}") for i in range(2)]
    survey = survey_create(task=dataset.task, title="Which metric does each issue hurt most",
                           metrics=["coherence", "fluency"], issues=["typo", "word-delete"], experts=voters)
    for voter in voters:
        votes_save(survey=survey, expert=voter, choices={"typo": "fluency", "word-delete": "coherence"})
    with OllamaSim(SimConfig(models=["judge:1b"], parallel=2)) as sim:
        run = dhp_create(dataset=dataset, evaluator="judge:1b", metrics=["coherence", "fluency"],
                         kinds=parse_kinds("typo:major,sentence-reorder:minor"), samples=1, seed=1,
                         ollama_url=sim.url, parallel=2, survey=survey)
        job_execute(DhpRun, run.pk)
    run = DhpRun.objects.get(pk=run.pk)
    items_import(path=SAMPLE_DATA / "meta_eval" / "dialogue.json", dataset_name="dialogue for a phone",
                 task_slug="dialogue")
    job = comparison_create(dataset=Dataset.objects.get(name="dialogue for a phone"), metrics="length,wordllama@input",
                     check=False)
    assert job_execute(ComparisonJob, job.pk) == JobStatus.DONE
    item = built.items[0]
    pages = {
        admin: ["/", f"/datasets/{built.dataset.pk}/", f"/datasets/{built.dataset.pk}/items/{item.pk}/",
                "/datasets/import/", "/campaigns/new/", f"/campaigns/{built.campaign.pk}/",
                f"/campaigns/{built.campaign.pk}/control/", f"/analytics/campaigns/{built.campaign.pk}/?resamples=20",
                f"/analytics/datasets/{built.dataset.pk}/?resamples=20",
                f"/analytics/datasets/{built.dataset.pk}/exports/",
                "/dhp/", "/dhp/runs/new/", f"/dhp/runs/{run.pk}/", f"/dhp/runs/{run.pk}/pairs/",
                f"/dhp/datasets/{dataset.pk}/", "/dhp/surveys/new/", f"/dhp/surveys/{survey.pk}/results/",
                "/runs/new/", f"/runs/{built.runs[0].pk}/", "/comparisons/", "/comparisons/new/",
                f"/comparisons/{job.pk}/"],
        expert: ["/", f"/campaigns/{built.campaign.pk}/", f"/work/{assignment.pk}/"],
    }
    problems = {}
    missing = []
    for user, urls in pages.items():
        context = browser.new_context(viewport={"width": WIDTH, "height": 844})
        page = context.new_page()
        page.on("response", lambda r: missing.append(r.url) if r.status == 404 else None)
        context.add_cookies([_session_cookie(live_server, user)])
        for url in urls:
            response = page.goto(live_server.url + url)
            assert response.status == 200, (url, response.status)
            found = _overflow(page)
            if found:
                problems[url] = found
        context.close()
    assert problems == {}
    assert missing == []


def test_favicon_is_named_by_every_page_and_served(client, make_user):
    client.force_login(make_user("icon-user"))
    html = client.get("/").content.decode()
    assert '<link rel="icon" href="/static/favicon.svg"' in html
    icon = client.get("/favicon.ico", follow=True)
    assert icon.status_code == 200 and b"<svg" in b"".join(icon.streaming_content)


def _session_cookie(live_server, user) -> dict:
    from django.conf import settings
    from django.contrib.auth import BACKEND_SESSION_KEY, HASH_SESSION_KEY, SESSION_KEY
    from django.contrib.sessions.backends.db import SessionStore

    session = SessionStore()
    session[SESSION_KEY] = str(user.pk)
    session[BACKEND_SESSION_KEY] = "django.contrib.auth.backends.ModelBackend"
    session[HASH_SESSION_KEY] = user.get_session_auth_hash()
    session.save()
    return {"name": settings.SESSION_COOKIE_NAME, "value": session.session_key, "url": live_server.url}
