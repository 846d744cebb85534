"""Structured answers (`--answer-format json`): the JSON schema of our error list, for servers that constrain
decoding to it - Ollama's `format`, the OpenAI-compatible `response_format`.

A departure from the paper, whose annotators answer in free text: a schema changes what a model can say
(no hedging outside the fields, no reasoning before the answer), so scores under it are not the paper's.
The answer is still read by the same parser (a JSON object of errors is one of the shapes it reads).
"""

from __future__ import annotations

from typing import Any

ANSWER_FORMATS: tuple[str, ...] = ("text", "json")
FORMAT_OPTION = "format"  # the key of the schema among a call's options (so it is part of the cache key)

ERROR_LIST_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "errors": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "location": {"type": "string"},
                    "explanation": {"type": "string"},
                    "severity": {"type": "integer", "minimum": 1, "maximum": 5},
                },
                "required": ["location", "explanation", "severity"],
            },
        },
        "overall_score": {"type": ["string", "integer"]},
        "explanation_of_the_score": {"type": "string"},
    },
    "required": ["errors"],
}

JSON_ANSWER_NOTE = (
    "\n\nAnswer with one JSON object instead of the plain-text format: \"errors\" (a list of objects with "
    "\"location\", \"explanation\" and \"severity\"), then \"overall_score\" and \"explanation_of_the_score\" "
    "when the instructions ask for a score. An empty \"errors\" list means no errors.\n"
)


def format_options(answer_format: str) -> dict[str, Any]:
    """The call options that ask for `answer_format`; ValueError naming the accepted ones."""
    if answer_format not in ANSWER_FORMATS:
        raise ValueError(f"answer format {answer_format!r}; expected one of {', '.join(ANSWER_FORMATS)}")
    return {FORMAT_OPTION: ERROR_LIST_SCHEMA} if answer_format == "json" else {}
