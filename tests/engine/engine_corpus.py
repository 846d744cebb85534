"""Hand-written corpus of realistic annotator and supervisor answers with their expected parse and alignment."""

from __future__ import annotations

from dataclasses import dataclass, field

# ---------------------------------------------------------------------------------------------
# NLG outputs the answers talk about

SUM_FED = (
    "The Federal Reserve kept interest rates unchanged on Wednesday, but signalled that two cuts could come "
    "before the end of the year. Chair Jerome Powell said inflation had eased to 2.4 percent in May. Markets "
    "rose sharply after the announcement, with the Dow closing up 1.2 percent."
)
SUM_XSUM = (
    "Manchester United have signed Dutch striker Wout Weghorst on a loan deal from Burnley until the end of "
    "the season."
)
SUM_BROKEN = (
    "By A new study that college students are more likely to engage in energy - binge drinking when "
    "alcohol than non - ."
)
SUM_QAGS = (
    "Nutritionist sarah flower says cooking with fresh ingredients gives you all the goodness you need . "
    "she told mailonline that the typical western diet is heavily processed . she recommends taking "
    "vitamin pills every morning ."
)
D2T_PHOENIX = (
    "the phoenix is a cheap restaurant near the river that serves indian food and is not kid friendly ."
)
D2T_AIRPORT = (
    "Adolfo Suárez Madrid–Barajas Airport is a major international airport located near the heart of the "
    "city, offering a wide range of air services."
)
D2T_HOTEL = "the hotel stanford court is a nice hotel that allows dogs and has internet . it is in the nob hill area ."
D2T_ROTO = (
    "The Boston Celtics defeated the Los Angeles Lakers 113 - 107 on Friday at TD Garden. Isaiah Thomas led "
    "the Celtics with 29 points and six assists, while Al Horford added 16 points and 11 rebounds. Jordan "
    "Clarkson scored 20 points for the Lakers, who have now lost 36 games this season. The Lakers shot 39 "
    "percent from the field, while the Celtics shot 48 percent. The Celtics will host the Pistons on "
    "Sunday, while the Lakers will visit the Nuggets on Sunday."
)
DLG_GHIBLI = (
    "B: i do n't know much about studio ghibli , but i 've heard that disney ( which owns the american "
    "rights ) does n't promote their films . have you seen spirited away ?\n"
)
DLG_PUMP = "that 's great! i'm glad you're able to deal with it now!"
DLG_NFL = (
    "B: yeah , i like football . the nfl has 32 teams and the super bowl is watched by over 100 million "
    "people every year .\n"
)
DLG_SHORT = "B: i do n't know . what do you think ?\n"
STORY_LIGHT = (
    "The old lighthouse keeper climbed the stairs every night for forty years. “Someone has to keep the "
    "light on,” he told his daughter, who didn’t understand why. One winter, the lamp went dark. The keeper "
    "was gone, and nobody ever saw him again. The next morning the light was shining brighter than ever."
)
STORY_LOOP = (
    'I woke up in a room. The room was white. I looked around and saw a man. The man was white. He said, '
    '"You are dead." I said, "No, I am not." He said, "Yes, you are." Then I woke up.'
)
STORY_ARENA = (
    "3,000 years have I been fighting. Every morning, the raccoons scratch at my eyes. Every evening, the "
    "skunks spray me while the opossums chew at my feet. I have never had any tools. I have only my hands. "
    "I don’t remember the place I came from before this."
)
QA_EIFFEL = (
    "The Eiffel Tower is located in Paris and was completed in 1889. It was designed by Gustave Eiffel's "
    "company for the World's Fair, and it is 330 metres tall, making it the tallest structure in France. "
    "Many tourists visit it every year, and there is a restaurant on the second floor."
)
SIMP_PRUNK = (
    "Prunk is a member of Institute of European History in Mainz. He was also a member of the Center for "
    "European Integration Studies in Bonn."
)
SIMP_RIVER = "The river , which is 30 km long , flows into the sea near the town of Ostend ."
SIMP_CELL = (
    "Cells are the basic building blocks of all living things. The human body is made of trillions of "
    "cells. They provide structure for the body and turn food into energy."
)
MT_BUDGET = (
    "The committee has approved the budget for next year, although several members voted against the "
    "proposal."
)


# ---------------------------------------------------------------------------------------------
# case structure


@dataclass(frozen=True)
class Part:
    match: str  # exact | normalized | fuzzy | none
    substring: str | None = None  # the expected output slice; offsets are computed with str.index
    nth: int = 0  # which occurrence of `substring` (0 = first)
    ambiguous: bool = False


@dataclass(frozen=True)
class Err:
    location: str | None
    severity: int | None
    parts: tuple[Part, ...]


@dataclass(frozen=True)
class Case:
    id: str
    output: str
    answer: str
    label: str | None
    score: float | None
    errors: tuple[Err, ...] = ()
    kind: str = "annotator"  # annotator | supervisor
    status: str = "ok"
    no_errors: bool = False
    covers: tuple[str, ...] = field(default_factory=tuple)  # which deviations the case exercises


def e(location: str | None, severity: int | None, match: str = "exact", substring: str | None = None,
      *, nth: int = 0, ambiguous: bool = False) -> Err:
    """One expected error with a single aligned span; substring defaults to the location itself."""
    if match == "none":
        return Err(location, severity, (Part("none"),))
    return Err(location, severity, (Part(match, substring if substring is not None else location, nth, ambiguous),))


def em(location: str | None, severity: int | None, *parts: Part) -> Err:
    """One expected error whose location aligns to several parts."""
    return Err(location, severity, tuple(parts))


def offsets(output: str, part: Part) -> tuple[int, int] | None:
    """Return the expected [start, end) of a part: the nth occurrence of its substring in the output."""
    if part.substring is None:
        return None
    start = -1
    for _ in range(part.nth + 1):
        start = output.index(part.substring, start + 1)
    return start, start + len(part.substring)


CASES: list[Case] = [
    # --- plain, well-formed answers ------------------------------------------------------------
    Case(
        "sum-fed-consistency-plain", SUM_FED,
        "Error 1:\n"
        "Location: two cuts could come before the end of the year\n"
        "Explanation: The article only says that officials expect one cut this year; two cuts are not "
        "mentioned anywhere.\n"
        "Severity: 4\n"
        "Error 2:\n"
        "Location: Markets rose sharply\n"
        "Explanation: The article says markets were flat after the announcement.\n"
        "Severity: 3\n"
        "Overall score: Poor\n"
        "Explanation of the score: Two claims contradict the article.",
        "Poor", 2.0,
        (e("two cuts could come before the end of the year", 4), e("Markets rose sharply", 3)),
        covers=("plain",),
    ),
    Case(
        "sum-xsum-consistency-excellent-no-error", SUM_XSUM,
        "No Error\n\nOverall score: Excellent\nExplanation of the score: Every fact is in the article.",
        "Excellent", 5.0, (), no_errors=True, covers=("no-error",),
    ),
    Case(
        "sum-xsum-no-errors-found", SUM_XSUM,
        "No errors found.\nOverall score: excellent\nExplanation of the score: The summary is faithful.",
        "Excellent", 5.0, (), no_errors=True, covers=("no-error", "label-case"),
    ),
    Case(
        "sum-xsum-there-are-no-errors", SUM_XSUM,
        "There are no errors related to factual consistency in this summary.\n\n"
        "Overall Score: **Excellent**\n"
        "Explanation of the Score: Nothing is added or distorted.",
        "Excellent", 5.0, (), no_errors=True, covers=("no-error", "label-bold"),
    ),
    # --- markdown ------------------------------------------------------------------------------
    Case(
        "sum-fed-markdown-bold", SUM_FED,
        "**Error 1:**\n"
        "**Location:** \"inflation had eased to 2.4 percent in May\"\n"
        "**Explanation:** The article gives 2.7 percent, not 2.4 percent.\n"
        "**Severity:** 4\n\n"
        "**Overall score:** Fair\n"
        "**Explanation of the score:** One wrong figure.",
        "Fair", 3.0, (e("inflation had eased to 2.4 percent in May", 4),),
        covers=("markdown-bold", "quoted-straight"),
    ),
    Case(
        "sum-fed-markdown-headers", SUM_FED,
        "### Error 1\n"
        "* Location: \"Chair Jerome Powell\"\n"
        "* Explanation: The article quotes the vice chair, not Powell.\n"
        "* Severity: 3\n\n"
        "### Error 2\n"
        "* Location: \"the Dow closing up 1.2 percent\"\n"
        "* Explanation: The Dow figure is not in the article.\n"
        "* Severity: 2\n\n"
        "### Overall score: Fair\n"
        "### Explanation of the score: Two details are unsupported.",
        "Fair", 3.0, (e("Chair Jerome Powell", 3), e("the Dow closing up 1.2 percent", 2)),
        covers=("markdown-headers", "bullets"),
    ),
    Case(
        "sum-broken-code-fence", SUM_BROKEN,
        "```\n"
        "Error 1:\n"
        "Location: By A new study that college students are more likely to engage in energy - binge drinking\n"
        "Explanation: The sentence is fragmented; it starts with a stray preposition and words are missing.\n"
        "Severity: 5\n"
        "Overall score: Unacceptable\n"
        "Explanation of the score: The summary is very hard to read.\n"
        "```",
        "Unacceptable", 1.0,
        (e("By A new study that college students are more likely to engage in energy - binge drinking", 5),),
        covers=("code-fence",),
    ),
    Case(
        "sum-broken-code-fence-lang", SUM_BROKEN,
        "Here is my evaluation:\n\n"
        "```text\n"
        "Error 1:\n"
        "Location: \"when alcohol than non - .\"\n"
        "Explanation: The sentence ends without its object; \"non -\" is cut off.\n"
        "Severity: 4\n"
        "Error 2:\n"
        "Location: \"By A new study\"\n"
        "Explanation: Capital A in the middle of a sentence and a dangling By.\n"
        "Severity: 3\n"
        "Overall score: Poor\n"
        "Explanation of the score: Two serious fluency errors.\n"
        "```",
        "Poor", 2.0,
        (e("when alcohol than non - .", 4), e("By A new study", 3)),
        covers=("code-fence", "preamble"),
    ),
    # --- numbering variants --------------------------------------------------------------------
    Case(
        "d2t-phoenix-numbered-list", D2T_PHOENIX,
        "1.\n"
        "Location: cheap\n"
        "Explanation: The data gives priceRange[high].\n"
        "Severity: 4\n"
        "2.\n"
        "Location: near the river\n"
        "Explanation: The data says the venue is in the city centre.\n"
        "Severity: 3\n"
        "Overall score: Poor\n"
        "Explanation of the score: Two attributes are wrong.",
        "Poor", 2.0, (e("cheap", 4), e("near the river", 3)),
        covers=("numbering-dot",),
    ),
    Case(
        "d2t-phoenix-numbered-inline", D2T_PHOENIX,
        "1. Location: \"indian food\"\n"
        "   Explanation: The data says the food is Italian.\n"
        "   Severity: 5\n"
        "2. Location: \"is not kid friendly\"\n"
        "   Explanation: familyFriendly is yes in the data.\n"
        "   Severity: 4\n"
        "Overall score: Unacceptable\n"
        "Explanation of the score: Core attributes are misrepresented.",
        "Unacceptable", 1.0, (e("indian food", 5), e("is not kid friendly", 4)),
        covers=("numbering-dot-inline",),
    ),
    Case(
        "d2t-phoenix-error-hash", D2T_PHOENIX,
        "Error #1\n"
        "Location: 'a cheap restaurant'\n"
        "Explanation: priceRange is 'more than £30', which is not cheap.\n"
        "Severity: 4\n"
        "Overall score: Poor\n"
        "Explanation of the score: The price is misrepresented.",
        "Poor", 2.0, (e("a cheap restaurant", 4),),
        covers=("numbering-hash", "quoted-single"),
    ),
    Case(
        "d2t-phoenix-error-dash", D2T_PHOENIX,
        "Error 1 - Location: \"the phoenix\"\n"
        "Explanation: The name should be capitalised as The Phoenix.\n"
        "Severity: 1\n"
        "Error 2 - Location: \"kid friendly .\"\n"
        "Explanation: A space before the full stop.\n"
        "Severity: 1\n"
        "Overall score: Good\n"
        "Explanation of the score: Only small formal slips.",
        "Good", 4.0, (e("the phoenix", 1), e("kid friendly .", 1)),
        covers=("numbering-dash",),
    ),
    Case(
        "d2t-phoenix-bold-error-no-colon", D2T_PHOENIX,
        "**Error 1**\n"
        "Location: serves indian food\n"
        "Explanation: The eatType is a pub, and the text does not mention it.\n"
        "Severity: 2\n\n"
        "**Overall score: Good**\n"
        "**Explanation of the score:** Mostly faithful.",
        "Good", 4.0, (e("serves indian food", 2),),
        covers=("numbering-bold",),
    ),
    # --- field names in other case ------------------------------------------------------------
    Case(
        "d2t-hotel-upper-fields", D2T_HOTEL,
        "ERROR 1:\n"
        "LOCATION: is a nice hotel\n"
        "EXPLANATION: The data does not say anything about the hotel being nice.\n"
        "SEVERITY: 2\n"
        "OVERALL SCORE: GOOD\n"
        "EXPLANATION OF THE SCORE: One small unsupported judgement.",
        "Good", 4.0, (e("is a nice hotel", 2),),
        covers=("field-case", "label-case"),
    ),
    Case(
        "d2t-hotel-lower-fields-italic", D2T_HOTEL,
        "error 1:\n"
        "*location*: has internet\n"
        "*explanation*: The dialogue act says hasinternet=no.\n"
        "*severity*: 5\n"
        "*overall score*: poor\n"
        "*explanation of the score*: Contradicts the data.",
        "Poor", 2.0, (e("has internet", 5),),
        covers=("field-case", "markdown-italic"),
    ),
    # --- quotes --------------------------------------------------------------------------------
    Case(
        "story-light-curly-quotes", STORY_LIGHT,
        "Error 1:\n"
        "Location: “The keeper was gone, and nobody ever saw him again.”\n"
        "Explanation: The disappearance is never explained or connected to the dark lamp.\n"
        "Severity: 3\n"
        "Error 2:\n"
        "Location: “the light was shining brighter than ever”\n"
        "Explanation: Nobody is there to light the lamp, which contradicts the previous sentence.\n"
        "Severity: 4\n"
        "Overall score: Fair\n"
        "Explanation of the score: The ending breaks the story's logic.",
        "Fair", 3.0,
        (e("The keeper was gone, and nobody ever saw him again.", 3),
         e("the light was shining brighter than ever", 4)),
        covers=("quoted-curly",),
    ),
    Case(
        "story-light-backticks", STORY_LIGHT,
        "Error 1:\n"
        "Location: `who didn't understand why`\n"
        "Explanation: The daughter's confusion is stated but never shown.\n"
        "Severity: 2\n"
        "Overall score: Good\n"
        "Explanation of the score: Emotions are mostly conveyed.",
        "Good", 4.0, (e("who didn't understand why", 2, "normalized", "who didn’t understand why"),),
        covers=("quoted-backtick", "normalized-apostrophe"),
    ),
    Case(
        "story-light-straight-vs-curly", STORY_LIGHT,
        "Error 1:\n"
        "Location: \"Someone has to keep the light on,\" he told his daughter\n"
        "Explanation: The line is flat; we learn nothing about what he feels.\n"
        "Severity: 2\n"
        "Overall score: Good\n"
        "Explanation of the score: Only one weak moment.",
        "Good", 4.0,
        (e("\"Someone has to keep the light on,\" he told his daughter", 2, "normalized",
           "Someone has to keep the light on,” he told his daughter"),),
        covers=("normalized-quotes", "quotes-in-text"),
    ),
    # --- location without a span ----------------------------------------------------------------
    Case(
        "sum-fed-coverage-none", SUM_FED,
        "Error 1:\n"
        "Location: None\n"
        "Explanation: The summary leaves out the unemployment figure, which the article stresses.\n"
        "Severity: 3\n"
        "Overall score: Fair\n"
        "Explanation of the score: One key point is missing.",
        "Fair", 3.0, (e(None, 3, "none"),),
        covers=("location-none",),
    ),
    Case(
        "d2t-hotel-coverage-na", D2T_HOTEL,
        "Error 1:\n"
        "Location: N/A\n"
        "Explanation: The price range from the data is not mentioned.\n"
        "Severity: 2\n"
        "Error 2:\n"
        "Location: (omission)\n"
        "Explanation: The phone number is left out.\n"
        "Severity: 1\n"
        "Overall score: Good\n"
        "Explanation of the score: Minor omissions only.",
        "Good", 4.0, (e(None, 2, "none"), e(None, 1, "none")),
        covers=("location-na", "location-omission"),
    ),
    Case(
        "qa-eiffel-missing-information", QA_EIFFEL,
        "Error 1:\n"
        "Location: Missing information\n"
        "Explanation: The question asks who built the tower; the answer never names the engineers.\n"
        "Severity: 3\n"
        "Overall score: Fair\n"
        "Explanation of the score: Part of the question is not answered.",
        "Fair", 3.0, (e(None, 3, "none"),),
        covers=("location-missing",),
    ),
    # --- comments in location lines ------------------------------------------------------------
    Case(
        "d2t-airport-comment-paren", D2T_AIRPORT,
        "Error 1:\n"
        "Location: \"a major international airport\" (this is not stated in the data)\n"
        "Explanation: The data does not mention the airport's size or international status.\n"
        "Severity: 4\n"
        "Error 2:\n"
        "Location: \"offering a wide range of air services\" - unsupported\n"
        "Explanation: No information about services in the data.\n"
        "Severity: 3\n"
        "Overall Score: Poor (2/5)\n"
        "Explanation of the Score: The text introduces unsupported information.",
        "Poor", 2.0,
        (e("a major international airport", 4), e("offering a wide range of air services", 3)),
        covers=("location-comment-paren", "location-comment-dash", "label-with-number"),
    ),
    Case(
        "d2t-airport-comment-unquoted", D2T_AIRPORT,
        "Error 1:\n"
        "Location: located near the heart of the city (the data gives no location)\n"
        "Explanation: The location relative to the city is invented.\n"
        "Severity: 4\n"
        "Overall score: Poor\n"
        "Explanation of the score: Invented location.",
        "Poor", 2.0, (e("located near the heart of the city", 4),),
        covers=("location-comment-unquoted",),
    ),
    Case(
        "roto-comment-number", D2T_ROTO,
        "Error 1:\n"
        "Location: \"29 points\" - the number\n"
        "Explanation: Isaiah Thomas scored 27 points according to the box score.\n"
        "Severity: 4\n"
        "Error 2:\n"
        "Location: \"on Friday\" (wrong day)\n"
        "Explanation: The game was played on Wednesday.\n"
        "Severity: 3\n"
        "Overall score: Poor\n"
        "Explanation of the score: Several factual errors.",
        "Poor", 2.0, (e("29 points", 4), e("on Friday", 3)),
        covers=("location-comment-dash", "location-comment-paren"),
    ),
    Case(
        "roto-prefix-description", D2T_ROTO,
        "Error 1:\n"
        "Location: The phrase \"six assists\"\n"
        "Explanation: Thomas had eight assists.\n"
        "Severity: 3\n"
        "Overall score: Fair\n"
        "Explanation of the score: One wrong number.",
        "Fair", 3.0, (e("six assists", 3),),
        covers=("location-prefix",),
    ),
    # --- two spans under one location ---------------------------------------------------------
    Case(
        "roto-two-spans-ellipsis", D2T_ROTO,
        "Error 1:\n"
        "Location: Al Horford added 16 points ... 11 rebounds\n"
        "Explanation: Horford had 15 points and 9 rebounds.\n"
        "Severity: 4\n"
        "Overall score: Poor\n"
        "Explanation of the score: The statistics are wrong.",
        "Poor", 2.0,
        (em("Al Horford added 16 points ... 11 rebounds", 4,
            Part("exact", "Al Horford added 16 points"), Part("exact", "11 rebounds")),),
        covers=("two-spans-ellipsis",),
    ),
    Case(
        "roto-two-quoted-spans", D2T_ROTO,
        "Error 1:\n"
        "Location: \"The Lakers shot 39 percent\" … \"the Celtics shot 48 percent\"\n"
        "Explanation: Both shooting percentages are swapped with the three-point figures.\n"
        "Severity: 3\n"
        "Overall score: Fair\n"
        "Explanation of the score: Percentages are wrong.",
        "Fair", 3.0,
        (em("The Lakers shot 39 percent ... the Celtics shot 48 percent", 3,
            Part("exact", "The Lakers shot 39 percent"), Part("exact", "the Celtics shot 48 percent")),),
        covers=("two-spans-quoted", "ellipsis-char"),
    ),
    Case(
        "story-arena-ellipsis-unicode", STORY_ARENA,
        "Error 1:\n"
        "Location: \"the raccoons scratch at my eyes…the opossums chew at my feet\"\n"
        "Explanation: The list of animals repeats the same kind of sentence; it reads like a catalogue.\n"
        "Severity: 2\n"
        "Overall score: Good\n"
        "Explanation of the score: Engaging despite repetition.",
        "Good", 4.0,
        (em("the raccoons scratch at my eyes…the opossums chew at my feet", 2,
            Part("exact", "the raccoons scratch at my eyes"), Part("exact", "the opossums chew at my feet")),),
        covers=("two-spans-ellipsis-char",),
    ),
    Case(
        "story-arena-leading-ellipsis", STORY_ARENA,
        "Error 1:\n"
        "Location: \"...I have only my hands.\"\n"
        "Explanation: Very short sentences make the passage choppy.\n"
        "Severity: 1\n"
        "Overall score: Good\n"
        "Explanation of the score: Fine overall.",
        "Good", 4.0, (e("...I have only my hands.", 1, "exact", "I have only my hands."),),
        covers=("truncation-ellipsis",),
    ),
    # --- severities ----------------------------------------------------------------------------
    Case(
        "qa-eiffel-severity-fraction", QA_EIFFEL,
        "Error 1:\n"
        "Location: it is 330 metres tall, making it the tallest structure in France\n"
        "Explanation: The question only asks where the tower is; the height is unnecessary.\n"
        "Severity: 4/5\n"
        "Error 2:\n"
        "Location: there is a restaurant on the second floor\n"
        "Explanation: Irrelevant detail for the question.\n"
        "Severity: 3 (moderate)\n"
        "Overall score: Fair\n"
        "Explanation of the score: The answer is padded with unneeded details.",
        "Fair", 3.0,
        (e("it is 330 metres tall, making it the tallest structure in France", 4),
         e("there is a restaurant on the second floor", 3)),
        covers=("severity-fraction", "severity-with-word"),
    ),
    Case(
        "qa-eiffel-severity-words", QA_EIFFEL,
        "Error 1:\n"
        "Location: was completed in 1889\n"
        "Explanation: Not asked for.\n"
        "Severity: Low\n"
        "Error 2:\n"
        "Location: for the World's Fair\n"
        "Explanation: Not asked for.\n"
        "Severity: Minor\n"
        "Error 3:\n"
        "Location: Many tourists visit it every year\n"
        "Explanation: Padding that has nothing to do with the question.\n"
        "Severity: Medium\n"
        "Error 4:\n"
        "Location: making it the tallest structure in France\n"
        "Explanation: An extra claim the question does not need.\n"
        "Severity: High\n"
        "Overall score: Poor\n"
        "Explanation of the score: Lots of padding.",
        "Poor", 2.0,
        (e("was completed in 1889", 2), e("for the World's Fair", 2), e("Many tourists visit it every year", 3),
         e("making it the tallest structure in France", 4)),
        covers=("severity-words",),
    ),
    Case(
        "qa-eiffel-severity-words-extreme", QA_EIFFEL,
        "Error 1:\n"
        "Location: The Eiffel Tower is located in Paris\n"
        "Explanation: The context places the tower in Lyon, so the answer is wrong.\n"
        "Severity: Critical\n"
        "Error 2:\n"
        "Location: designed by Gustave Eiffel's company\n"
        "Explanation: The context names a different designer.\n"
        "Severity: Very high\n"
        "Error 3:\n"
        "Location: 330 metres\n"
        "Explanation: The context says 324 metres.\n"
        "Severity: Major\n"
        "Error 4:\n"
        "Location: on the second floor\n"
        "Explanation: The context says the restaurant is on the first floor, a small detail.\n"
        "Severity: Very low\n"
        "Error 5:\n"
        "Location: every year\n"
        "Explanation: Slight overstatement.\n"
        "Severity: negligible\n"
        "Error 6:\n"
        "Location: Many tourists\n"
        "Explanation: Vague wording.\n"
        "Severity: trivial\n"
        "Overall score: Unacceptable\n"
        "Explanation of the score: The central fact is wrong.",
        "Unacceptable", 1.0,
        (e("The Eiffel Tower is located in Paris", 5), e("designed by Gustave Eiffel's company", 5),
         e("330 metres", 4), e("on the second floor", 1), e("every year", 1), e("Many tourists", 1)),
        covers=("severity-words",),
    ),
    Case(
        "simp-prunk-severity-moderate-word", SIMP_PRUNK,
        "Error 1:\n"
        "Location: He was also a member of the Center\n"
        "Explanation: The original says he is a senior fellow, not a member.\n"
        "Severity: moderate\n"
        "Overall score: Good\n"
        "Explanation of the score: One change of meaning.",
        "Good", 4.0, (e("He was also a member of the Center", 3),),
        covers=("severity-words",),
    ),
    # --- overall score variants ----------------------------------------------------------------
    Case(
        "simp-prunk-numeric-score", SIMP_PRUNK,
        "Error 1:\n"
        "Location: member of Institute\n"
        "Explanation: The article 'the' is missing.\n"
        "Severity: 2\n"
        "Overall score: 4\n"
        "Explanation of the score: Fluent apart from one missing article.",
        "Good", 4.0, (e("member of Institute", 2),),
        covers=("score-numeric",),
    ),
    Case(
        "simp-prunk-numeric-fraction-score", SIMP_PRUNK,
        "Error 1:\n"
        "Location: He was also a member\n"
        "Explanation: 'also' changes the meaning slightly.\n"
        "Severity: 2\n"
        "Overall score: 3/5\n"
        "Explanation of the score: Mostly preserved.",
        "Fair", 3.0, (e("He was also a member", 2),),
        covers=("score-fraction",),
    ),
    Case(
        "simp-river-label-parenthesis", SIMP_RIVER,
        "Error 1:\n"
        "Location: which is 30 km long\n"
        "Explanation: The relative clause is kept; splitting the sentence would be simpler.\n"
        "Severity: 2\n"
        "Overall score: Good (4/5)\n"
        "Explanation of the score: Simple enough.",
        "Good", 4.0, (e("which is 30 km long", 2),),
        covers=("label-with-number",),
    ),
    Case(
        "simp-river-score-on-next-line", SIMP_RIVER,
        "Error 1:\n"
        "Location: flows into the sea near the town of Ostend\n"
        "Explanation: 'near the town of Ostend' replaces 'at Ostend', adding words.\n"
        "Severity: 1\n\n"
        "Overall score:\n"
        "**Good**\n\n"
        "Explanation of the score:\n"
        "The text is a bit simpler than the original.",
        "Good", 4.0, (e("flows into the sea near the town of Ostend", 1),),
        covers=("score-next-line",),
    ),
    # --- missing fields ------------------------------------------------------------------------
    Case(
        "dlg-nfl-missing-severity", DLG_NFL,
        "Error 1:\n"
        "Location: the super bowl is watched by over 100 million people every year\n"
        "Explanation: The knowledge does not mention viewing figures.\n"
        "Overall score: Fair\n"
        "Explanation of the score: Part of the response is not grounded.",
        "Fair", 3.0,
        (e("the super bowl is watched by over 100 million people every year", None),),
        status="partial", covers=("missing-severity",),
    ),
    Case(
        "dlg-nfl-missing-location", DLG_NFL,
        "Error 1:\n"
        "Explanation: The response ignores the question about the partner's favourite team.\n"
        "Severity: 3\n"
        "Overall score: Fair\n"
        "Explanation of the score: Only partly coherent.",
        "Fair", 3.0, (e(None, 3, "none"),),
        status="partial", covers=("missing-location",),
    ),
    Case(
        "dlg-nfl-missing-score", DLG_NFL,
        "Error 1:\n"
        "Location: the nfl has 32 teams\n"
        "Explanation: A dry fact that does not invite the partner to reply.\n"
        "Severity: 2",
        None, None, (e("the nfl has 32 teams", 2),),
        status="partial", covers=("missing-score",),
    ),
    Case(
        "dlg-short-failed-chatter", DLG_SHORT,
        "I'm sorry, but I cannot evaluate this response without more context about the conversation.",
        None, None, (), status="failed", covers=("failed",),
    ),
    Case(
        "dlg-short-failed-empty", DLG_SHORT, "   \n\n", None, None, (), status="failed", covers=("failed",),
    ),
    # --- multi-line explanations and trailing chatter -----------------------------------------
    Case(
        "dlg-ghibli-multiline", DLG_GHIBLI,
        "Error 1:\n"
        "Location: disney ( which owns the american rights ) does n't promote their films\n"
        "Explanation: The knowledge says Disney owns the rights.\n"
        "However, it says nothing about promotion, so this part is not grounded.\n"
        "It may come from the dialogue history rather than the knowledge.\n"
        "Severity: 2\n"
        "Overall score: Good\n"
        "Explanation of the score: Mostly grounded.\n"
        "One claim goes beyond the knowledge.\n\n"
        "I hope this helps! Let me know if you want me to look at other aspects.",
        "Good", 4.0,
        (e("disney ( which owns the american rights ) does n't promote their films", 2),),
        covers=("multiline-explanation", "trailing-chatter"),
    ),
    Case(
        "dlg-ghibli-trailing-note", DLG_GHIBLI,
        "Error 1:\n"
        "Location: have you seen spirited away ?\n"
        "Explanation: The question is fine but comes abruptly after the claim about Disney.\n"
        "Severity: 1\n"
        "Overall score: Excellent\n"
        "Explanation of the score: Natural reply.\n\n"
        "Note: the tokenisation of the response was ignored, as instructed.",
        "Excellent", 5.0, (e("have you seen spirited away ?", 1),),
        covers=("trailing-chatter",),
    ),
    # --- normalized matches ---------------------------------------------------------------------
    Case(
        "dlg-ghibli-detokenized", DLG_GHIBLI,
        "Error 1:\n"
        "Location: \"I don't know much about Studio Ghibli\"\n"
        "Explanation: An unnatural way to open after the partner just recommended the films.\n"
        "Severity: 2\n"
        "Error 2:\n"
        "Location: \"Disney (which owns the American rights)\"\n"
        "Explanation: The aside interrupts the sentence.\n"
        "Severity: 1\n"
        "Overall score: Good\n"
        "Explanation of the score: Mostly natural.",
        "Good", 4.0,
        (e("I don't know much about Studio Ghibli", 2, "normalized", "i do n't know much about studio ghibli"),
         e("Disney (which owns the American rights)", 1, "normalized",
           "disney ( which owns the american rights )")),
        covers=("normalized-tokenization", "normalized-case", "normalized-parens"),
    ),
    Case(
        "dlg-pump-normalized-spacing", DLG_PUMP,
        "Error 1:\n"
        "Location: \"that's great!\"\n"
        "Explanation: The cheerful phrase ignores how frightened A was.\n"
        "Severity: 3\n"
        "Error 2:\n"
        "Location: \"i'm glad you're able to deal with it now\"\n"
        "Explanation: Focuses on the outcome, not on A's feelings.\n"
        "Severity: 2\n"
        "Overall Score: Fair (3/5)\n"
        "Explanation of the Score: Some consideration, but no acknowledgement of the fear.",
        "Fair", 3.0,
        (e("that's great!", 3, "normalized", "that 's great!"),
         e("i'm glad you're able to deal with it now", 2)),
        covers=("normalized-tokenization",),
    ),
    Case(
        "sum-broken-normalized-dash", SUM_BROKEN,
        "Error 1:\n"
        "Location: energy–binge drinking\n"
        "Explanation: 'energy - binge' is not a phrase; a word is missing.\n"
        "Severity: 4\n"
        "Overall score: Poor\n"
        "Explanation of the score: Hard to understand.",
        "Poor", 2.0, (e("energy–binge drinking", 4, "normalized", "energy - binge drinking"),),
        covers=("normalized-dash",),
    ),
    Case(
        "sum-qags-trailing-punct", SUM_QAGS,
        "Error 1:\n"
        "Location: she recommends taking vitamin pills every morning.\n"
        "Explanation: The article says the opposite: ditch vitamin pills.\n"
        "Severity: 5\n"
        "Overall score: Poor\n"
        "Explanation of the score: The final claim contradicts the article.",
        "Poor", 2.0,
        (e("she recommends taking vitamin pills every morning.", 5, "normalized",
           "she recommends taking vitamin pills every morning ."),),
        covers=("normalized-tokenization",),
    ),
    Case(
        "sum-fed-trailing-punct", SUM_FED,
        "Error 1:\n"
        "Location: Chair Jerome Powell said inflation had eased to 2.4 percent.\n"
        "Explanation: The article does not give the inflation figure.\n"
        "Severity: 4\n"
        "Overall score: Fair\n"
        "Explanation of the score: One unsupported figure.",
        "Fair", 3.0,
        (e("Chair Jerome Powell said inflation had eased to 2.4 percent.", 4, "normalized",
           "Chair Jerome Powell said inflation had eased to 2.4 percent"),),
        covers=("normalized-trailing-punct",),
    ),
    Case(
        "sum-qags-case", SUM_QAGS,
        "Error 1:\n"
        "Location: Sarah Flower\n"
        "Explanation: Fine name, but the quote is attributed wrongly elsewhere.\n"
        "Severity: 1\n"
        "Error 2:\n"
        "Location: She told MailOnline that the typical Western diet is heavily processed\n"
        "Explanation: Supported; listed by mistake? The article does say this.\n"
        "Severity: 1\n"
        "Overall score: Good\n"
        "Explanation of the score: Minor issues.",
        "Good", 4.0,
        (e("Sarah Flower", 1, "normalized", "sarah flower"),
         e("She told MailOnline that the typical Western diet is heavily processed", 1, "normalized",
           "she told mailonline that the typical western diet is heavily processed")),
        covers=("normalized-case",),
    ),
    Case(
        "simp-river-detokenized", SIMP_RIVER,
        "Error 1:\n"
        "Location: The river, which is 30 km long, flows into the sea\n"
        "Explanation: The sentence keeps the embedded clause of the original.\n"
        "Severity: 2\n"
        "Overall score: Fair\n"
        "Explanation of the score: Barely simpler than the source.",
        "Fair", 3.0,
        (e("The river, which is 30 km long, flows into the sea", 2, "normalized",
           "The river , which is 30 km long , flows into the sea"),),
        covers=("normalized-tokenization",),
    ),
    Case(
        "dlg-ghibli-extra-whitespace", DLG_GHIBLI,
        "Error 1:\n"
        "Location: have  you   seen\n"
        "spirited away\n"
        "Explanation: Abrupt topic change.\n"
        "Severity: 1\n"
        "Overall score: Good\n"
        "Explanation of the score: Fine.",
        "Good", 4.0, (e("have  you   seen spirited away", 1, "normalized", "have you seen spirited away"),),
        covers=("normalized-whitespace", "location-continued-line"),
    ),
    # --- fuzzy matches --------------------------------------------------------------------------
    Case(
        "roto-fuzzy-typo", D2T_ROTO,
        "Error 1:\n"
        "Location: Jordan Clarkson scored 20 pionts for the Lakers\n"
        "Explanation: Clarkson scored 18 points.\n"
        "Severity: 3\n"
        "Overall score: Fair\n"
        "Explanation of the score: One wrong number.",
        "Fair", 3.0,
        (e("Jordan Clarkson scored 20 pionts for the Lakers", 3, "fuzzy",
           "Jordan Clarkson scored 20 points for the Lakers"),),
        covers=("fuzzy-typo",),
    ),
    Case(
        "story-loop-fuzzy-paraphrase", STORY_LOOP,
        "Error 1:\n"
        "Location: I looked around and I saw a man\n"
        "Explanation: Flat description; nothing is felt.\n"
        "Severity: 2\n"
        "Error 2:\n"
        "Location: Then I woke up again.\n"
        "Explanation: The it-was-a-dream ending is the most predictable ending possible.\n"
        "Severity: 4\n"
        "Overall score: Poor\n"
        "Explanation of the score: Predictable ending.",
        "Poor", 2.0,
        (e("I looked around and I saw a man", 2, "fuzzy", "I looked around and saw a man"),
         # "again" is not in the story: ratio 82 against "Then I woke up", below the default 85
         e("Then I woke up again.", 4, "none")),
        covers=("fuzzy-insertion",),
    ),
    Case(
        "sum-fed-fuzzy-dropped-word", SUM_FED,
        "Error 1:\n"
        "Location: The Federal Reserve kept rates unchanged on Wednesday\n"
        "Explanation: The meeting ended on Tuesday according to the article.\n"
        "Severity: 3\n"
        "Overall score: Fair\n"
        "Explanation of the score: One wrong date.",
        "Fair", 3.0,
        (e("The Federal Reserve kept rates unchanged on Wednesday", 3, "fuzzy",
           "The Federal Reserve kept interest rates unchanged on Wednesday"),),
        covers=("fuzzy-deletion",),
    ),
    # --- hallucinated locations ----------------------------------------------------------------
    Case(
        "roto-hallucinated-player", D2T_ROTO,
        "Error 1:\n"
        "Location: Kevin Durant scored 31 points\n"
        "Explanation: Durant did not play in this game.\n"
        "Severity: 5\n"
        "Error 2:\n"
        "Location: \"Isaiah Thomas led the Celtics\"\n"
        "Explanation: Correct, but his assists are wrong.\n"
        "Severity: 2\n"
        "Overall score: Poor\n"
        "Explanation of the score: Invented player.",
        "Poor", 2.0,
        (e("Kevin Durant scored 31 points", 5, "none"), e("Isaiah Thomas led the Celtics", 2)),
        covers=("hallucinated",),
    ),
    Case(
        "story-light-hallucinated-sentence", STORY_LIGHT,
        "Error 1:\n"
        "Location: \"The daughter cried for days after the storm destroyed the village.\"\n"
        "Explanation: This event is not connected to the rest of the story.\n"
        "Severity: 4\n"
        "Overall score: Poor\n"
        "Explanation of the score: The story loses its thread.",
        "Poor", 2.0,
        (e("The daughter cried for days after the storm destroyed the village.", 4, "none"),),
        covers=("hallucinated",),
    ),
    Case(
        "mt-budget-hallucinated-source-quote", MT_BUDGET,
        "Error 1:\n"
        "Location: \"Der Ausschuss hat den Haushalt\"\n"
        "Explanation: The annotator quoted the source instead of the translation.\n"
        "Severity: 2\n"
        "Error 2:\n"
        "Location: although several members voted against the proposal\n"
        "Explanation: The source says 'a few' members, not several.\n"
        "Severity: 2\n"
        "Overall score: Good\n"
        "Explanation of the score: Small shift in meaning.",
        "Good", 4.0,
        (e("Der Ausschuss hat den Haushalt", 2, "none"),
         e("although several members voted against the proposal", 2)),
        covers=("hallucinated",),
    ),
    # --- several occurrences ---------------------------------------------------------------------
    Case(
        "roto-occurrence-by-context", D2T_ROTO,
        "Error 1:\n"
        "Location: on Sunday\n"
        "Explanation: The Lakers visit the Nuggets on Saturday, not Sunday.\n"
        "Severity: 2\n"
        "Overall score: Good\n"
        "Explanation of the score: One wrong day.",
        "Good", 4.0, (e("on Sunday", 2, "exact", "on Sunday", nth=1),),
        covers=("occurrence-context",),
    ),
    Case(
        "roto-occurrence-ambiguous", D2T_ROTO,
        "Error 1:\n"
        "Location: points\n"
        "Explanation: Repetitive wording.\n"
        "Severity: 1\n"
        "Overall score: Good\n"
        "Explanation of the score: Minor repetition.",
        "Good", 4.0, (e("points", 1, "exact", "points", ambiguous=True),),
        covers=("occurrence-ambiguous",),
    ),
    Case(
        "story-loop-occurrence-quoted-cue", STORY_LOOP,
        "Error 1:\n"
        "Location: He said,\n"
        "Explanation: The second \"He said\" before \"Yes, you are\" repeats the pattern.\n"
        "Severity: 1\n"
        "Overall score: Fair\n"
        "Explanation of the score: Repetitive.",
        "Fair", 3.0, (e("He said,", 1, "exact", "He said,", nth=1),),
        covers=("occurrence-context",),
    ),
    # --- supervisor answers -----------------------------------------------------------------------
    Case(
        "sup-airport-merged", D2T_AIRPORT,
        "Error 1:\n"
        "Location: a major international airport located near the heart of the city\n"
        "Explanation: Neither the size, the international status nor the location is in the data.\n"
        "Severity: 4\n"
        "Error 2:\n"
        "Location: offering a wide range of air services\n"
        "Explanation: The data says nothing about services.\n"
        "Severity: 3",
        None, None,
        (e("a major international airport located near the heart of the city", 4),
         e("offering a wide range of air services", 3)),
        kind="supervisor", covers=("supervisor",),
    ),
    Case(
        "sup-roto-markdown-left", D2T_ROTO,
        "**Error 1:**\n"
        "**Location:** \"113 - 107\"\n"
        "**Explanation:** The final score was 113-105.\n"
        "**Severity:** 4\n\n"
        "**Error 2:**\n"
        "**Location:** \"lost 36 games\"\n"
        "**Explanation:** Correct; 36 losses. Kept by one annotator.\n"
        "**Severity:** 1",
        None, None, (e("113 - 107", 4), e("lost 36 games", 1)),
        kind="supervisor", covers=("supervisor", "markdown-bold"),
    ),
    Case(
        "sup-no-error", SUM_XSUM, "No Error", None, None, (), kind="supervisor", no_errors=True,
        covers=("supervisor", "no-error"),
    ),
    Case(
        "sup-with-stray-score", SIMP_CELL,
        "Error 1:\n"
        "Location: trillions of cells\n"
        "Explanation: 'trillions' is fine; the original says 37 trillion, a loss of detail.\n"
        "Severity: 2\n"
        "Overall score: Good",
        "Good", 4.0, (e("trillions of cells", 2),),
        kind="supervisor", covers=("supervisor", "stray-score"),
    ),
    Case(
        "sup-missing-severity", SIMP_CELL,
        "Error 1:\n"
        "Location: turn food into energy\n"
        "Explanation: Simplified well, but 'turn' hides the chemistry.",
        None, None, (e("turn food into energy", None),),
        kind="supervisor", status="partial", covers=("supervisor", "missing-severity"),
    ),
    Case(
        "sup-unusable", SIMP_CELL,
        "I have merged the annotations as requested and removed duplicates.",
        None, None, (), kind="supervisor", status="failed", covers=("supervisor", "failed"),
    ),
    # --- more realistic mixtures -------------------------------------------------------------
    Case(
        "simp-cell-mixed-deviations", SIMP_CELL,
        "Here is the evaluation of the simplified text with respect to simplicity.\n\n"
        "**Error 1:** \n"
        "- **Location:** \"basic building blocks\" (a metaphor that may confuse children)\n"
        "- **Explanation:** The metaphor is harder than saying 'the smallest parts'.\n"
        "- **Severity:** 2/5\n\n"
        "**Error 2:** \n"
        "- **Location:** “They provide structure for the body”\n"
        "- **Explanation:** 'provide structure' is abstract.\n"
        "- **Severity:** Moderate (3)\n\n"
        "**Overall Score:** Good\n\n"
        "**Explanation of the Score:** The text is mostly simple, with two harder phrases.",
        "Good", 4.0, (e("basic building blocks", 2), e("They provide structure for the body", 3)),
        covers=("markdown-bold", "bullets", "location-comment-paren", "severity-fraction", "preamble"),
    ),
    Case(
        "mt-budget-terminology", MT_BUDGET,
        "Error 1:\n"
        "Location: the budget for next year\n"
        "Explanation: The source term means 'annual budget'; the standard term is 'the annual budget'.\n"
        "Severity: 2\n"
        "Overall score: Good\n"
        "Explanation of the score: Mostly correct terms.",
        "Good", 4.0, (e("the budget for next year", 2),),
        covers=("plain",),
    ),
    Case(
        "mt-budget-style-fair-lower", MT_BUDGET,
        "Error 1:\n"
        "Location: The committee has approved\n"
        "Explanation: The source uses a formal passive construction.\n"
        "Severity: 2\n"
        "Error 2:\n"
        "Location: voted against the proposal\n"
        "Explanation: 'opposed the motion' would match the parliamentary register.\n"
        "Severity: 2\n"
        "Overall score: fair\n"
        "Explanation of the score: Register is flattened.",
        "Fair", 3.0, (e("The committee has approved", 2), e("voted against the proposal", 2)),
        covers=("label-case",),
    ),
    Case(
        "dlg-nfl-unnumbered-blocks", DLG_NFL,
        "Location: yeah , i like football\n"
        "Explanation: A generic opener.\n"
        "Severity: 1\n\n"
        "Location: every year\n"
        "Explanation: Unnecessary.\n"
        "Severity: 1\n\n"
        "Overall score: Good\n"
        "Explanation of the score: Engaging facts.",
        "Good", 4.0, (e("yeah , i like football", 1), e("every year", 1)),
        covers=("no-headers",),
    ),
    Case(
        "story-arena-numbered-titles", STORY_ARENA,
        "1. Repetitive structure\n"
        "Location: Every morning, the raccoons scratch at my eyes. Every evening, the skunks spray me\n"
        "Explanation: Parallel sentences slow the story.\n"
        "Severity: 2\n\n"
        "2. Unclear past\n"
        "Location: I don't remember the place I came from before this.\n"
        "Explanation: Hints at a backstory that is never given.\n"
        "Severity: 2\n\n"
        "Overall score: Good\n"
        "Explanation of the score: An engaging start.",
        "Good", 4.0,
        (e("Every morning, the raccoons scratch at my eyes. Every evening, the skunks spray me", 2),
         e("I don't remember the place I came from before this.", 2, "normalized",
           "I don’t remember the place I came from before this.")),
        covers=("numbering-titles", "normalized-apostrophe"),
    ),
    Case(
        "story-loop-score-first", STORY_LOOP,
        "Overall score: Poor\n"
        "Explanation of the score: The story loops and ends on a cliché.\n\n"
        "Error 1:\n"
        "Location: The man was white.\n"
        "Explanation: Repeats the structure of 'The room was white.'\n"
        "Severity: 2",
        "Poor", 2.0, (e("The man was white.", 2),),
        covers=("score-first",),
    ),
]
