"""A campaign of three judges with agreements, disagreements and added errors (adjudication tests)."""

from __future__ import annotations

from annotator.models import Assignment
from tests.factories import OUTPUT_1, OUTPUT_2, Built, added_error, build_campaign, judgment, offsets_of


def three_judge_study(judges) -> tuple[Built, dict]:
    """Three judges on both items, with agreements, disagreements and added errors (see each line)."""
    built = build_campaign(list(judges), per_item=3, name="Three judges")
    item1, item2 = built.items
    work = {(a.annotator.username, a.item_id): a for a in Assignment.objects.filter(campaign=built.campaign)
            .select_related("annotator")}
    s = built.spans

    def say(name, item, span, verdict, explanation, **kw):
        judgment(s[span], work[(name, item.pk)], verdict, explanation, **kw)

    for name in ("ann1", "ann2", "ann3"):  # unanimous: not a disagreement
        say(name, item1, "a1_family", "error", "correct")
    say("ann1", item1, "a1_missing", "no_span", "correct", comment="no <b>location</b> given")
    say("ann2", item1, "a1_missing", "no_span", "correct")
    say("ann3", item1, "a1_missing", "hallucination", "correct", comment="made up by ann3's reading")
    say("ann1", item1, "b1_family", "error", "correct")  # same span verdict, three explanation verdicts
    say("ann2", item1, "b1_family", "error", "vague")
    say("ann3", item1, "b1_family", "error", "incorrect")
    say("ann1", item2, "b2_rating", "error", "correct")  # a single judge: nothing to disagree with
    ann1, ann2, ann3 = judges
    italian = offsets_of(OUTPUT_2, "Italian food")
    found = {
        "italian1": added_error(built.campaign, ann1, item2, *italian, category="Incorrect", text="Italian food",
                                explanation="data: Italian?"),
        "italian2": added_error(built.campaign, ann2, item2, italian[0], italian[1] - 5, category="Incorrect",
                                text="Italian"),
        "cheap": added_error(built.campaign, ann3, item1, *offsets_of(OUTPUT_1, "cheap"), category="Incorrect",
                             text="cheap"),
    }
    for who in judges:  # every judge found it: agreed
        found[f"centre-{who.username}"] = added_error(built.campaign, who, item2,
                                                      *offsets_of(OUTPUT_2, "city centre"), text="city centre")
    return built, found
