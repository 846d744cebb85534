"""NLG task catalogue: what each task is, as told to the evaluating LLM."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class TaskSpec:
    slug: str
    name: str
    description: str  # one or two sentences that tell the evaluator what the generating model had to do
    output_noun: str  # how the prompt calls the evaluated text ("summary", "response", ...)


TASKS: dict[str, TaskSpec] = {
    spec.slug: spec
    for spec in (
        TaskSpec(
            slug="data-to-text",
            name="data-to-text generation",
            description=(
                "A system received structured data (records, attribute-value pairs, triples or table "
                "cells) and had to verbalise it as fluent natural-language text."
            ),
            output_noun="text",
        ),
        TaskSpec(
            slug="summarization",
            name="summarization",
            description=(
                "A system received a source document and had to write a shorter text that conveys "
                "its main content."
            ),
            output_noun="summary",
        ),
        TaskSpec(
            slug="dialogue",
            name="dialogue response generation",
            description=(
                "A system received a conversation so far (and possibly background knowledge or "
                "context about the speakers) and had to write the next turn of the conversation."
            ),
            output_noun="response",
        ),
        TaskSpec(
            slug="story-generation",
            name="story generation",
            description="A system received a short writing prompt and had to write a story based on it.",
            output_noun="story",
        ),
        TaskSpec(
            slug="question-answering",
            name="question answering",
            description=(
                "A system received a question together with a context (a text or a table) and had "
                "to answer the question using that context."
            ),
            output_noun="answer",
        ),
        TaskSpec(
            slug="simplification",
            name="text simplification",
            description=(
                "A system received a sentence or short passage and had to rewrite it so that it is "
                "easier to read and understand while keeping what it says."
            ),
            output_noun="simplified text",
        ),
        TaskSpec(
            slug="translation",
            name="machine translation",
            description=(
                "A system received a text in a source language and had to translate it into the "
                "target language."
            ),
            output_noun="translation",
        ),
    )
}


# Which kind of item file fits which task: what the `inputs` hold -> what the one output is, with the
# public meta-evaluation files of that kind. `manage.py list_aspects` and the docs' import table show it.
FILE_KINDS: dict[str, str] = {
    "data-to-text": "records, attribute-value pairs, dialogue acts or a table -> text verbalising them "
                    "(e.g. sfres.json, sfhot.json, RotoWire box scores -> game summaries)",
    "summarization": "a document or article -> a summary of it (e.g. qags.json, SummEval)",
    "dialogue": "a conversation so far, perhaps with knowledge -> the next turn (e.g. topical_chat.json)",
    "story-generation": "a writing prompt -> a story (e.g. hanna.json)",
    "question-answering": "a question with a context (text or table) -> an answer",
    "simplification": "a sentence or passage -> an easier rewrite of it (e.g. wiki_da.json)",
    "translation": "a text in one language -> its translation",
}
