"""Survey weights from hand-made votes, versioning, closing, agreement."""

from __future__ import annotations

import pytest

from accounts.access import AccessError
from dhp.engine.surveys import nominal_alpha, vote_shares
from dhp.models import SurveyWeights
from dhp.services.surveys import survey_close, survey_create, survey_for_expert, votes_save, weights_for_run
from errors import UserError
from tests import factories

pytestmark = pytest.mark.django_db

METRICS = ["coherence", "consistency", "fluency"]


def _survey(experts):
    return survey_create(task=factories.task("summarization"), title="Summaries", metrics=METRICS,
                         issues=["typo", "sentence-reorder", "llm-entities"], experts=experts)


def test_weights_are_vote_shares_per_issue(make_user):
    experts = [make_user(f"e{i}") for i in range(10)]
    survey = _survey(experts)
    # The paper's example: 4 / 1 / 5 votes for one issue -> [0.4, 0.1, 0.5].
    picks = ["coherence"] * 4 + ["consistency"] * 1 + ["fluency"] * 5
    for expert, metric in zip(experts, picks, strict=True):
        votes_save(survey=survey, expert=expert, choices={"sentence-reorder": metric, "typo": "fluency"})
    version = weights_for_run(survey)
    assert version.version == 1 and version.n_experts == 10
    assert version.weights["sentence-reorder"] == pytest.approx({"coherence": 0.4, "consistency": 0.1, "fluency": 0.5})
    assert version.weights["typo"] == {"coherence": 0.0, "consistency": 0.0, "fluency": 1.0}
    assert version.weights["llm-entities"] == dict.fromkeys(METRICS, 0.0)  # nobody answered it
    assert weights_for_run(survey).pk == version.pk  # unchanged votes: the same version
    votes_save(survey=survey, expert=experts[0], choices={"llm-entities": "consistency"})
    assert weights_for_run(survey).version == 2


def test_closing_freezes_weights_and_refuses_new_answers(make_user):
    expert = make_user("closer")
    survey = _survey([expert])
    votes_save(survey=survey, expert=expert, choices={"typo": "fluency"})
    version = survey_close(survey=survey)
    assert version is not None and version.version == 1
    with pytest.raises(AccessError) as refused:
        survey_for_expert(expert, survey.pk, writable=True)
    assert refused.value.status == 409
    with pytest.raises(AccessError):
        survey_close(survey=survey)
    assert SurveyWeights.objects.filter(survey=survey).count() == 1


def test_only_invited_experts_reach_a_survey(make_user):
    invited, other = make_user("invited"), make_user("other")
    survey = _survey([invited])
    assert survey_for_expert(invited, survey.pk) == survey
    with pytest.raises(AccessError) as refused:
        survey_for_expert(other, survey.pk)
    assert refused.value.status == 404


def test_votes_outside_the_survey_are_refused(make_user):
    expert = make_user("picky")
    survey = _survey([expert])
    with pytest.raises(UserError, match="not a metric"):
        votes_save(survey=survey, expert=expert, choices={"typo": "tastiness"})
    with pytest.raises(UserError, match="not a question"):
        votes_save(survey=survey, expert=expert, choices={"llm-insert": "fluency"})


def test_vote_shares_and_alpha_by_hand():
    votes = [(1, "a", "x"), (2, "a", "x"), (1, "b", "y"), (2, "b", "y"), (1, "c", "x"), (2, "c", "y")]
    assert vote_shares(votes, ["a", "b", "c"], ["x", "y"])["c"] == {"x": 0.5, "y": 0.5}
    # Nominal alpha by hand: 3 units, 6 pairable values (x:3, y:3). Observed disagreement: unit c has one
    # mismatching ordered pair each way -> D_o = 2 / 6. Expected: 2*3*3 / (6*5) = 0.6. alpha = 1 - (1/3)/0.6.
    assert nominal_alpha(votes, ["a", "b", "c"], ["x", "y"]) == pytest.approx(1 - (2 / 6) / 0.6)
    assert nominal_alpha(votes[:1], ["a"], ["x", "y"]) is None


def test_a_closed_survey_refuses_new_invitations_from_service_and_page(make_user, client):
    from dhp.models import SurveyInvitation
    from dhp.services.surveys import survey_invite

    invited, late = make_user("invited"), make_user("late")
    survey = _survey([invited])
    survey_close(survey=survey)
    with pytest.raises(AccessError) as caught:
        survey_invite(survey=survey, experts=[late])
    assert caught.value.status == 409 and "closed" in caught.value.message
    admin = make_user("boss", role="admin")
    client.force_login(admin)
    response = client.post(f"/dhp/surveys/{survey.pk}/invite/", {"experts": [late.pk]})
    assert response.status_code == 409
    assert not SurveyInvitation.objects.filter(expert=late).exists()
