"""The OpenAPI schema says every status and content type an operation answers, not only its success.

ninja documents the responses an operation declares; the refusals that every operation shares (no token,
a role or a read-only token, an object that is not there or not yours, a value refused, a body that is not
JSON, an upload over the limit) come from shared code, so they are added here from the operation's shape.
Operations whose success is not JSON (CSV tables, JSONL exports, files) say so in ALTERNATIVE_CONTENT.
"""

from __future__ import annotations

from typing import Any

ERROR_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "detail": {"description": "Why the request was refused: a sentence, or (422 from the schema check) a list "
                                  "of the fields and what is wrong with them."},
        "field": {"anyOf": [{"type": "string"}, {"type": "array", "items": {"type": "string"}}, {"type": "null"}],
                  "description": "The field the refusal is about, as a dotted path into the request (`link.cap`, "
                                 "`protocol_options.major_from`, `file` for an upload's content); a list when it "
                                 "is about several, null when about the request as a whole. Absent from the "
                                 "schema check's 422, whose `detail` list names each field in `loc`."},
    },
    "required": ["detail"],
}

_TEXT = {"type": "string"}
# operationId -> the content types of its success response (the first status it declares).
ALTERNATIVE_CONTENT: dict[str, dict[str, Any]] = {
    "retrieve_campaign_analytics_table": {"text/csv": _TEXT},
    "retrieve_dataset_analytics_table": {"text/csv": _TEXT},
    "compare_sources": {"text/csv": _TEXT},
    "export_dataset": {"application/x-ndjson": _TEXT, "text/csv": _TEXT},
    "export_dhp_run": {"application/json": {"type": "object"}},
    "download_export_file": {"application/octet-stream": {"type": "string", "format": "binary"}},
    "download_campaign_report": {"application/zip": {"type": "string", "format": "binary"}},
}

DESCRIPTIONS = {
    400: "Bad request: a query parameter holds a NUL character, or the body is not JSON or not UTF-8 text.",
    401: "No valid token or session (a revoked or expired token included).",
    403: "The account's role, or a read-only token, does not allow this.",
    404: "No such object (in the path or named in the body), or not one of yours.",
    409: "The object's state does not allow this now (a finished assignment, a closed campaign, a job that "
         "already ended, a span nobody disputes, a field another reviewer changed since).",
    413: "The upload is larger than IMPORT_MAX_UPLOAD_MB.",
    422: "A value is refused: the message names the field (and for files, the line).",
    429: "Too much queued at once for this user; the Retry-After header says when to ask again.",
}
# Operations that can queue worker tasks from a GET, bounded per user (analytics.compare.gamma).
QUEUEING_READS = {"compare_sources"}


def _statuses(method: str, operation: dict[str, Any]) -> set[int]:
    """The shared refusals an operation of this shape can answer."""
    where = {p.get("in") for p in operation.get("parameters", [])}
    body = operation.get("requestBody", {}).get("content", {})
    statuses = {401, 403}
    if "query" in where or body:
        statuses |= {400}
    if where or body:
        statuses |= {422}
    if body:
        statuses |= {404}  # a body names other objects (a dataset, runs, spans) that may not be there
    if "path" in where:
        statuses |= {404}
        if method != "get":
            statuses |= {409}
    if "multipart/form-data" in body:
        statuses |= {413}
    if operation.get("operationId") in QUEUEING_READS:
        statuses |= {429}
    return statuses


def document_responses(schema: dict[str, Any]) -> dict[str, Any]:
    """Add the shared error responses and the non-JSON success content types to every operation (in place)."""
    for path in schema.get("paths", {}).values():
        for method, operation in path.items():
            responses = operation.setdefault("responses", {})
            for status in sorted(_statuses(method, operation)):
                if status in responses or str(status) in responses:
                    continue
                responses[status] = {"description": DESCRIPTIONS[status],
                                     "content": {"application/json": {"schema": ERROR_SCHEMA}}}
            content = ALTERNATIVE_CONTENT.get(operation.get("operationId", ""))
            if content:
                success = min((s for s in responses if int(s) < 300), key=int)
                answer = responses[success].setdefault("content", {})
                for media, media_schema in content.items():
                    answer.setdefault(media, {"schema": media_schema})
    return schema
