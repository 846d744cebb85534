"""Structured answers (`--answer-format json`): the JSON schema of our error list, for servers that constrain
decoding to it - Ollama's `format`, the OpenAI-compatible `response_format`.

A departure from the paper, whose annotators answer in free text: a schema changes what a model can say
(no hedging outside the fields, no reasoning before the answer), so scores under it are not the paper's.
The answer is still read by the same parser (a JSON object of errors is one of the shapes it reads). The
prompt's plain-text answer format gives way to a JSON one (`json_prompt`), so that the model is shown one format.
"""

from __future__ import annotations

from typing import Any

from evaluation.engine.prompts import ANSWER_FORMAT_HEADER, MAX_ERRORS

ANSWER_FORMATS: tuple[str, ...] = ("text", "json")
FORMAT_OPTION = "format"  # the key of the schema among a call's options (so it is part of the cache key)

SEVERITIES = (1, 2, 3, 4, 5)
LOCATION_CHARS = 400  # a location is one short stretch of the text; the bound ends a string a model cannot stop
EXPLANATION_CHARS = 800


def error_list_schema(max_errors: int = MAX_ERRORS, explanation_chars: int = EXPLANATION_CHARS) -> dict[str, Any]:
    """The schema of an answer: at most `max_errors` errors, each string bounded (a location at half an
    explanation's characters, at most LOCATION_CHARS), the severities an enum.

    Enums and lengths, not `minimum`/`maximum`: grammar-constrained servers (llama.cpp's and llama-cpp-python's
    JSON-schema converters, which Ollama's `format` also uses) enforce `enum`, `maxItems` and `maxLength` but not
    numeric bounds. The bounds keep a small model that loops inside the schema from running into the answer
    budget, where a cut answer costs a retry at twice the budget.
    """
    location_chars = min(LOCATION_CHARS, max(40, explanation_chars // 2))
    return {
        "type": "object",
        "properties": {
            "errors": {
                "type": "array",
                "maxItems": max_errors,
                "items": {
                    "type": "object",
                    "properties": {
                        "location": {"type": "string", "minLength": 1, "maxLength": location_chars},
                        "explanation": {"type": "string", "minLength": 1, "maxLength": explanation_chars},
                        "severity": {"enum": list(SEVERITIES)},
                    },
                    "required": ["location", "explanation", "severity"],
                },
            },
            # a label of the default templates' scale, or a distilled template's 0-100 score
            "overall_score": {"type": ["string", "integer"]},
            "explanation_of_the_score": {"type": "string", "maxLength": explanation_chars},
        },
        "required": ["errors"],
    }


ERROR_LIST_SCHEMA: dict[str, Any] = error_list_schema()

JSON_ANSWER_NOTE = (
    "\n\n### Answer format\nAnswer with one JSON object and nothing else. Its \"errors\" list holds one object per "
    "error: \"location\", a stretch copied word for word from the text; \"explanation\", why that stretch is "
    "wrong; \"severity\", a whole number from 1 to 5. When the instructions ask for a grade, \"overall_score\" "
    "holds it (its label or number) and \"explanation_of_the_score\" the reasons. An empty \"errors\" list "
    "means no errors.\n"
)


def format_options(answer_format: str, *, max_errors: int | None = None,
                   explanation_chars: int | None = None) -> dict[str, Any]:
    """The call options that ask for `answer_format` (a preset may bound its answers more tightly than the
    defaults); ValueError naming the accepted formats."""
    if answer_format not in ANSWER_FORMATS:
        raise ValueError(f"answer format {answer_format!r}; expected one of {', '.join(ANSWER_FORMATS)}")
    if answer_format != "json":
        return {}
    return {FORMAT_OPTION: error_list_schema(max_errors or MAX_ERRORS, explanation_chars or EXPLANATION_CHARS)}


def json_prompt(prompt: str) -> str:
    """A prompt that asks for the JSON answer: the plain-text answer format section (from its header to the
    end, in the default templates) gives way to JSON_ANSWER_NOTE, so that a model sees one format, not two,
    and no `<the exact words ...>` slots to copy into its fields."""
    if prompt.endswith(JSON_ANSWER_NOTE):
        return prompt
    head, header, _ = prompt.rpartition(ANSWER_FORMAT_HEADER)
    return (head.rstrip("\n") if header else prompt) + JSON_ANSWER_NOTE
