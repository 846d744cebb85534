"""Evaluation aspects per task: definitions, confusable neighbours, scale anchors and evaluation steps."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class AspectSpec:
    task: str  # TaskSpec.slug
    name: str  # lower-case; equals the human-score key of the meta-evaluation data where there is one
    definition: str
    confused_with: list[str] = field(default_factory=list)  # other aspects of the same task
    lowest: str = ""  # what "Unacceptable" means for this aspect
    highest: str = ""  # what "Excellent" means
    output_only: bool = False  # judged on the output alone: the prompt leaves the inputs out
    steps: list[str] = field(default_factory=list)


_QUOTE_STEP = (
    "For each problem you find, copy the exact words of the {out} where it occurs (one short "
    "contiguous stretch), explain why it hurts the {asp} of the {out}, and give it a severity."
)
_OMISSION_STEP = (
    "When the problem is that something is missing, use as the location the words of the {out} "
    "closest to where it belongs, or write None if there is no such place."
)


def _against_input(src: str, out: str, asp: str, look_for: str, *, omissions: bool = False) -> list[str]:
    steps = [
        f"Read the {src} carefully and note the facts, entities and figures it contains.",
        f"Read the {out} and compare it with the {src}, {look_for}.",
        _QUOTE_STEP.format(out=out, asp=asp),
    ]
    if omissions:
        steps.append(_OMISSION_STEP.format(out=out))
    return steps


def _form_only(out: str, asp: str, look_for: str) -> list[str]:
    return [
        f"Read the {out} on its own, sentence by sentence; whether its content is true, complete or "
        "relevant does not matter here.",
        f"Look for {look_for}.",
        _QUOTE_STEP.format(out=out, asp=asp),
    ]


def _in_context(src: str, out: str, asp: str, look_for: str) -> list[str]:
    return [
        f"Read the {src} and work out what it asks for or where it stands.",
        f"Read the {out} in the light of the {src}, {look_for}.",
        _QUOTE_STEP.format(out=out, asp=asp),
    ]


def _a(
    task: str,
    name: str,
    definition: str,
    confused_with: list[str],
    lowest: str,
    highest: str,
    steps: list[str],
    *,
    output_only: bool = False,
) -> AspectSpec:
    return AspectSpec(task, name, definition, confused_with, lowest, highest, output_only, steps)


_S = "summarization"
_D2T = "data-to-text"
_DLG = "dialogue"
_STORY = "story-generation"
_QA = "question-answering"
_SIMP = "simplification"
_MT = "translation"

ASPECTS: list[AspectSpec] = [
    # --- summarization -------------------------------------------------------------------------
    _a(_S, "consistency",
       "How well the facts stated in the summary agree with the source text. Every claim of the "
       "summary must be backed by the source; claims the source does not support count as errors "
       "even when they happen to be true in the world.",
       ["relevance", "coverage", "fluency", "coherence"],
       "dominated by claims that the source does not support or that contradict it",
       "entirely backed by the source text",
       _against_input("source text", "summary", "consistency",
                      "checking every claim of the summary against what the source says")),
    _a(_S, "factual consistency",
       "Whether each statement in the summary can be verified from the source text. Statements that "
       "add, distort or contradict facts of the source are errors, however plausible they sound.",
       ["relevance", "coverage", "fluency", "coherence"],
       "mostly made of statements the source does not back up",
       "free of any statement that cannot be verified in the source",
       _against_input("source text", "summary", "factual consistency",
                      "statement by statement, asking whether the source confirms each one")),
    _a(_S, "accuracy",
       "How faithfully the summary reports the factual content of the source: nothing invented, "
       "nothing contradicting the source, nothing framed so that a reader would be misled.",
       ["relevance", "coverage", "fluency", "coherence"],
       "so inaccurate or misleading that it misinforms the reader",
       "a fully accurate and non-misleading report of the source",
       _against_input("source text", "summary", "accuracy",
                      "looking for invented details, contradictions and misleading framing")),
    _a(_S, "relevance",
       "How well the summary picks its content: it should keep the points of the source that matter "
       "and leave out minor details, repetition and material that is not needed.",
       ["consistency", "accuracy", "fluency", "coherence"],
       "made of unimportant or redundant material while the key points are absent",
       "limited to the important points of the source and containing all of them",
       _against_input("source text", "summary", "relevance",
                      "deciding which of its parts are important, which are trivial or redundant, and "
                      "which key points of the source are missing", omissions=True)),
    _a(_S, "coverage",
       "How much of the important content of the source the summary conveys. Someone who reads only "
       "the summary should learn the main facts needed to understand what the source is about.",
       ["consistency", "accuracy", "relevance", "fluency"],
       "missing most of the information a reader needs from the source",
       "conveying all the main information of the source",
       _against_input("source text", "summary", "coverage",
                      "listing the key pieces of information of the source and checking which of them "
                      "the summary conveys", omissions=True)),
    _a(_S, "coherence",
       "How well the summary holds together as a text: its sentences follow a sensible order, connect "
       "to each other and build one clear account that is easy to follow.",
       ["fluency", "relevance", "consistency"],
       "a disordered set of sentences that do not make sense together",
       "well organised, with each sentence following naturally from the previous one",
       _form_only("summary", "coherence",
                  "jumps in topic, a confusing order, missing links between sentences, contradictions "
                  "inside the summary and unclear references"),
       output_only=True),
    _a(_S, "fluency",
       "The formal quality of each sentence of the summary on its own: grammatical, natural and easy "
       "to read.",
       ["coherence", "consistency", "relevance"],
       "so ungrammatical or garbled that it is very hard to read",
       "made of well-formed, natural sentences throughout",
       _form_only("summary", "fluency",
                  "grammar and spelling mistakes, broken or unfinished sentences, awkward wording and "
                  "stray tokens"),
       output_only=True),
    # --- data-to-text --------------------------------------------------------------------------
    _a(_D2T, "faithfulness",
       "Whether everything the text says is backed by the data. Details that the data does not "
       "contain count as errors, even if they might be true.",
       ["coverage", "informativeness", "fluency", "naturalness"],
       "largely made of content the data does not support",
       "stating only what the data supports",
       _against_input("data", "text", "faithfulness",
                      "checking that each statement of the text can be traced back to the data")),
    _a(_D2T, "correctness",
       "Whether the text presents the data correctly: values, relations between entities and any "
       "conclusions drawn from the data must be right.",
       ["coverage", "informativeness", "fluency"],
       "full of wrong values, relations or conclusions",
       "correct in every statement it makes about the data",
       _against_input("data", "text", "correctness",
                      "checking every value, relation and inference the text states")),
    _a(_D2T, "accuracy",
       "Whether the facts in the text (names, numbers, words describing events and their context) "
       "agree with the data. Wrong numbers, wrong names, wrong descriptive words and claims that "
       "cannot be checked against the data are errors.",
       ["coverage", "informativeness", "fluency"],
       "riddled with wrong names, numbers and claims",
       "factually exact with respect to the data",
       _against_input("data", "text", "accuracy",
                      "verifying each name, number and descriptive word against the data")),
    _a(_D2T, "coverage",
       "How completely the text verbalises the data: every attribute, value or relation it contains "
       "should be mentioned.",
       ["faithfulness", "correctness", "fluency"],
       "leaving out most of the data",
       "mentioning every item of the data",
       _against_input("data", "text", "coverage",
                      "ticking off each item of the data that the text mentions", omissions=True)),
    _a(_D2T, "informativeness",
       "How much useful information from the data the text gives to its reader; full coverage is not "
       "required, but what the data offers and the reader needs should be conveyed.",
       ["naturalness", "fluency", "faithfulness"],
       "conveying almost none of the information the data provides",
       "conveying all the useful information in the data",
       _against_input("data", "text", "informativeness",
                      "asking which pieces of information from the data the text conveys and which "
                      "useful ones it drops or blurs", omissions=True)),
    _a(_D2T, "fluency",
       "How grammatical, natural and easy to read the text is.",
       ["faithfulness", "coverage", "informativeness"],
       "so broken that it can hardly be read",
       "smooth, grammatical and natural throughout",
       _form_only("text", "fluency",
                  "grammar mistakes, unnatural or clumsy phrasing, repetitions and leftover template "
                  "tokens"),
       output_only=True),
    _a(_D2T, "grammaticality",
       "Whether the text is free of grammatical and spelling mistakes.",
       ["naturalness", "fluency", "faithfulness"],
       "full of grammar and spelling mistakes",
       "free of grammar and spelling mistakes",
       _form_only("text", "grammaticality",
                  "errors of agreement, tense, word order, missing or extra words, and misspellings"),
       output_only=True),
    _a(_D2T, "naturalness",
       "How likely it is that a native speaker would have written the text as it stands.",
       ["informativeness", "grammaticality", "faithfulness"],
       "clearly machine-made and unlike anything a native speaker would write",
       "indistinguishable from what a native speaker would write",
       _form_only("text", "naturalness",
                  "phrasing a native speaker would not use: odd word choice or order, robotic "
                  "repetition, broken sentences and placeholder artefacts"),
       output_only=True),
    # --- dialogue ------------------------------------------------------------------------------
    _a(_DLG, "coherence",
       "How well the response continues the conversation: it must make sense after what was said, "
       "follow from the last turn and not contradict what the same speaker said before.",
       ["relevance", "engagingness", "naturalness", "groundedness"],
       "a reply that makes no sense after the conversation so far",
       "a sensible, logically consistent continuation of the conversation",
       _in_context("conversation history", "response", "coherence",
                   "checking whether it follows from the last turn and agrees with earlier turns")),
    _a(_DLG, "relevance",
       "How well the response stays on the topic of the conversation.",
       ["coherence", "engagingness", "interestingness"],
       "unrelated to what the conversation is about",
       "squarely on the topic of the conversation",
       _in_context("conversation history", "response", "relevance",
                   "marking the parts that drift away from the topic")),
    _a(_DLG, "appropriateness",
       "Whether the response fits the conversation both in meaning and in manner (tone, politeness, "
       "register, social situation).",
       ["coherence", "relevance", "empathy"],
       "wholly out of place in the conversation",
       "fully fitting for the conversation in content and manner",
       _in_context("conversation history", "response", "appropriateness",
                   "checking whether what it says and how it says it suit the situation")),
    _a(_DLG, "empathy",
       "How well the response shows that it grasps and acknowledges the feelings of the person who "
       "shared their experience.",
       ["appropriateness", "coherence", "engagingness"],
       "indifferent or hurtful towards the speaker's feelings",
       "warmly acknowledging and understanding the speaker's feelings",
       _in_context("conversation history", "response", "empathy",
                   "looking for places where the speaker's feelings are ignored, misread or "
                   "dismissed")),
    _a(_DLG, "interestingness",
       "How interesting the response is given the conversation: whether it brings ideas, facts or "
       "opinions worth hearing.",
       ["engagingness", "relevance", "coherence"],
       "dull and empty, adding nothing to the conversation",
       "genuinely interesting and thought-provoking",
       _in_context("conversation history", "response", "interestingness",
                   "looking for generic, empty or trivial content")),
    _a(_DLG, "engagingness",
       "How well the response holds the other person's attention and invites them to keep talking, "
       "for example by offering opinions, preferences, thoughts or interesting facts.",
       ["interestingness", "coherence", "naturalness", "groundedness"],
       "a reply that would end the conversation or bore the other person",
       "a reply that draws the other person in and makes them want to continue",
       _in_context("conversation history", "response", "engagingness",
                   "looking for places where it is flat, generic, closes the topic or gives the "
                   "partner nothing to respond to")),
    _a(_DLG, "naturalness",
       "How much the response sounds like something a person would naturally say in this "
       "conversation. Tokenisation of the text (spaces around punctuation, lower case) is not "
       "an error.",
       ["coherence", "engagingness", "groundedness"],
       "obviously unnatural, like no person would speak",
       "just like something a person would naturally say",
       _form_only("response", "naturalness",
                  "wording no person would use when talking: stilted or robotic phrasing, odd "
                  "repetition, broken sentences"),
       output_only=True),
    _a(_DLG, "groundedness",
       "How well the response builds on the given knowledge: its factual content should come from, "
       "and agree with, the knowledge provided with the conversation.",
       ["coherence", "engagingness", "naturalness"],
       "ungrounded in the knowledge or at odds with it",
       "firmly grounded in the given knowledge",
       _against_input("knowledge and the conversation history", "response", "groundedness",
                      "marking factual content that the knowledge does not contain or contradicts")),
    _a(_DLG, "fluency",
       "How grammatical, natural and smooth the response is as language.",
       ["coherence", "understandability", "relevance"],
       "so broken it can hardly be read",
       "grammatical and smooth throughout",
       _form_only("response", "fluency",
                  "grammar mistakes, broken or unfinished sentences and clumsy wording"),
       output_only=True),
    _a(_DLG, "understandability",
       "How easy it is to grasp what the response means, given the conversation so far.",
       ["fluency", "coherence", "relevance"],
       "impossible to make sense of",
       "immediately clear in meaning",
       _in_context("conversation history", "response", "understandability",
                   "looking for vague references, confusing wording and unclear meaning")),
    # --- story generation ----------------------------------------------------------------------
    _a(_STORY, "relevance",
       "How closely the story follows the writing prompt.",
       ["coherence", "engagement", "complexity"],
       "unrelated to the writing prompt",
       "built fully around the writing prompt",
       _in_context("writing prompt", "story", "relevance",
                   "marking parts that ignore, contradict or wander away from the prompt")),
    _a(_STORY, "coherence",
       "How logically consistent the story is and how well its events and sentences fit together "
       "into a narrative that makes sense.",
       ["relevance", "engagement", "surprise"],
       "a sequence of sentences that does not make sense as a story",
       "a logically consistent story whose parts fit together",
       _form_only("story", "coherence",
                  "contradictions, events that do not follow, characters that change without reason, "
                  "and sentences that do not connect"),
       output_only=True),
    _a(_STORY, "empathy",
       "How clearly and deeply the story conveys what its characters feel.",
       ["engagement", "coherence", "complexity"],
       "giving no sense of what any character feels",
       "conveying the characters' emotions vividly and with depth",
       _in_context("writing prompt", "story", "empathy",
                   "looking for places where emotions are absent, flat or unconvincing")),
    _a(_STORY, "engagement",
       "How engaging and interesting the story is to read.",
       ["empathy", "surprise", "complexity", "coherence"],
       "tedious, with nothing to hold a reader",
       "gripping from start to end",
       _in_context("writing prompt", "story", "engagement",
                   "marking passages that are dull, repetitive or lose the reader")),
    _a(_STORY, "surprise",
       "How unexpected and original the ending of the story is.",
       ["engagement", "complexity", "coherence"],
       "ending exactly as anyone would predict, or not ending at all",
       "ending in a way that is truly unexpected yet fitting",
       [
           "Read the writing prompt and the story, paying most attention to how the story ends.",
           "Decide how predictable the ending is from the prompt and from the story so far.",
           _QUOTE_STEP.format(out="story", asp="surprise"),
       ]),
    _a(_STORY, "complexity",
       "How elaborate the story is: its plot, characters, setting and ideas. This describes the story "
       "rather than judging it good or bad.",
       ["engagement", "coherence", "relevance"],
       "bare and simple, with almost nothing developed",
       "richly elaborated in plot, characters and setting",
       _in_context("writing prompt", "story", "complexity",
                   "looking for places where the plot, the characters or the setting stay thin")),
    # --- question answering --------------------------------------------------------------------
    _a(_QA, "correctness",
       "How correct the answer to the question is with respect to the given input. A fully correct "
       "answer gets the top score; each wrong part lowers it according to its weight.",
       ["completeness", "conciseness", "fluency"],
       "wrong",
       "completely correct",
       _against_input("question and the context", "answer", "correctness",
                      "checking whether what it states answers the question correctly")),
    _a(_QA, "informativeness",
       "Whether the answer gives all the information the question explicitly asks for.",
       ["completeness", "conciseness", "correctness"],
       "missing the information the question asks for",
       "giving everything the question asks for",
       _against_input("question and the context", "answer", "informativeness",
                      "listing what the question asks for and checking which of it the answer "
                      "supplies", omissions=True)),
    _a(_QA, "completeness",
       "How thoroughly the answer covers every part of the question.",
       ["informativeness", "conciseness", "relevance"],
       "leaving most parts of the question unaddressed",
       "addressing every part of the question",
       _against_input("question and the context", "answer", "completeness",
                      "splitting the question into its parts and checking each one is dealt with",
                      omissions=True)),
    _a(_QA, "conciseness",
       "How focused the answer is: it answers directly, without needless detail or elaboration.",
       ["completeness", "informativeness", "relevance"],
       "buried in needless detail and padding",
       "direct and to the point",
       _in_context("question", "answer", "conciseness",
                   "marking everything not needed to answer the question")),
    _a(_QA, "relevance",
       "How specifically and meaningfully the answer responds to the question actually asked.",
       ["conciseness", "completeness", "correctness"],
       "not an answer to this question",
       "a specific, meaningful answer to exactly this question",
       _in_context("question", "answer", "relevance",
                   "marking parts that do not address the question or are too generic")),
    _a(_QA, "factuality",
       "Whether what the answer states is supported by the given story summary or context.",
       ["correctness", "completeness", "fluency"],
       "mostly unsupported by the context",
       "fully supported by the context",
       _against_input("context", "answer", "factuality",
                      "checking every statement of the answer against the context")),
    _a(_QA, "faithfulness",
       "Whether the information in the answer is backed by the input (for example the table).",
       ["correctness", "completeness", "fluency"],
       "mostly made of information the input does not back",
       "backed by the input in every detail",
       _against_input("input", "answer", "faithfulness",
                      "tracing each piece of information of the answer back to the input")),
    _a(_QA, "fluency",
       "How grammatical, natural and easy to read the answer is.",
       ["correctness", "conciseness", "naturalness"],
       "barely readable",
       "smooth, grammatical and natural",
       _form_only("answer", "fluency", "grammar mistakes, awkward phrasing and broken sentences"),
       output_only=True),
    _a(_QA, "naturalness",
       "How likely it is that the answer was written by a native speaker.",
       ["fluency", "grammaticality", "correctness"],
       "clearly not written by a native speaker",
       "exactly how a native speaker would write it",
       _form_only("answer", "naturalness", "phrasing that a native speaker would not use"),
       output_only=True),
    _a(_QA, "grammaticality",
       "Whether the answer is free of grammatical and spelling mistakes.",
       ["fluency", "naturalness", "correctness"],
       "full of grammar and spelling mistakes",
       "free of grammar and spelling mistakes",
       _form_only("answer", "grammaticality", "grammar mistakes and misspellings"),
       output_only=True),
    # --- simplification ------------------------------------------------------------------------
    _a(_SIMP, "fluency",
       "How well-formed the simplified text is as language: grammatical, natural and easy to read "
       "on its own.",
       ["meaning preservation", "simplicity"],
       "so garbled that it can hardly be read",
       "perfectly well-formed and natural",
       _form_only("simplified text", "fluency",
                  "grammar mistakes, broken sentences, missing words and awkward wording"),
       output_only=True),
    _a(_SIMP, "meaning preservation",
       "How well the simplified text keeps the meaning of the original: nothing essential dropped, "
       "nothing changed and nothing added.",
       ["simplicity", "fluency"],
       "saying something quite different from the original",
       "saying exactly what the original says",
       _against_input("original text", "simplified text", "meaning preservation",
                      "looking for information that was dropped, changed or added", omissions=True)),
    _a(_SIMP, "simplicity",
       "How much easier the simplified text is to read and understand than the original, through "
       "simpler words, shorter sentences and plainer structure.",
       ["meaning preservation", "fluency"],
       "as hard to read as the original or harder",
       "much easier to read and understand than the original",
       _against_input("original text", "simplified text", "simplicity",
                      "marking words, phrases and structures that are still complex or got harder")),
    _a(_SIMP, "grammaticality",
       "Whether the simplified text is free of grammatical and spelling mistakes.",
       ["fluency", "meaning preservation", "simplicity"],
       "full of grammar and spelling mistakes",
       "free of grammar and spelling mistakes",
       _form_only("simplified text", "grammaticality", "grammar mistakes and misspellings"),
       output_only=True),
    # --- translation ---------------------------------------------------------------------------
    _a(_MT, "accuracy",
       "How faithfully the translation renders the meaning of the source: mistranslations, "
       "omissions, additions and untranslated words are errors.",
       ["fluency", "terminology", "style"],
       "failing to convey the meaning of the source",
       "conveying the meaning of the source exactly",
       _against_input("source text", "translation", "accuracy",
                      "segment by segment, looking for meaning that was changed, dropped or added",
                      omissions=True)),
    _a(_MT, "fluency",
       "How well-formed and natural the translation is in the target language, judged on its own.",
       ["accuracy", "terminology", "style"],
       "so broken that a target-language reader can hardly follow it",
       "as fluent as text written directly in the target language",
       _form_only("translation", "fluency",
                  "grammar, spelling, punctuation and word-order mistakes and unnatural phrasing"),
       output_only=True),
    _a(_MT, "terminology",
       "Whether domain terms and names are translated with the correct and consistent equivalents "
       "in the target language.",
       ["accuracy", "fluency", "style"],
       "using wrong or inconsistent terms throughout",
       "using correct and consistent terms throughout",
       _against_input("source text", "translation", "terminology",
                      "checking how each technical term and name of the source was rendered")),
    _a(_MT, "style",
       "Whether the translation keeps the register, tone and style of the source and suits its "
       "audience.",
       ["accuracy", "fluency", "terminology"],
       "in a register or tone far from that of the source",
       "matching the register and tone of the source",
       _against_input("source text", "translation", "style",
                      "comparing register, tone and formality between the two")),
]
