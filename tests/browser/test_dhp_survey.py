"""An invited expert answers an expert-weight survey in the browser (htmx saves it in place)."""

from __future__ import annotations

import pytest

from dhp.models import SurveyVote
from dhp.services.surveys import survey_create
from tests import factories

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_expert_answers_survey_and_answers_persist(page, live_server, login, make_user):
    expert = make_user("weigher")
    survey = survey_create(task=factories.task("summarization"), title="Which metric suffers?",
                           metrics=["coherence", "fluency"], issues=["typo", "sentence-reorder"], experts=[expert])
    login("weigher")
    page.get_by_role("link", name="Surveys").click()
    page.get_by_role("link", name="Which metric suffers?").click()
    page.locator("input[name='issue-typo'][value='fluency']").check()
    page.locator("input[name='issue-sentence-reorder'][value='coherence']").check()
    page.get_by_role("button", name="Save my answers").click()
    page.get_by_text("2 of 2 answered.").wait_for()
    assert page.url.endswith(f"/dhp/surveys/{survey.pk}/")  # swapped in place by htmx, no navigation
    assert dict(SurveyVote.objects.values_list("issue", "metric")) == {"typo": "fluency",
                                                                       "sentence-reorder": "coherence"}
    page.reload()
    assert page.locator("input[name='issue-typo'][value='fluency']").is_checked()
