"""Downloads that are whole or an error: a file is written out in full before its first byte is sent.

A streamed response has answered 200 before its rows are made, so a row that fails ends the connection mid-file
and the client keeps a silently truncated file. Writing the rows into a spooled temporary file first (in memory
up to SPOOL_MEMORY, then on disk, so memory stays constant however large the export) moves any failure before
the status line: the download answers 500 (or the refusal's 4xx) instead, and a whole one carries its
Content-Length.
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterable

from django.http import FileResponse
from django.utils.http import content_disposition_header

SPOOL_MEMORY = 8 * 1024 * 1024  # bytes kept in memory before the file moves to disk


def whole_download(chunks: Iterable[str | bytes], *, content_type: str, filename: str) -> FileResponse:
    """Return a response with every chunk of `chunks` (text is encoded as UTF-8), made before anything is sent;
    an exception while making them propagates to the caller, as from any view."""
    spool = tempfile.SpooledTemporaryFile(max_size=SPOOL_MEMORY, mode="w+b")  # noqa: SIM115 - the response closes it
    try:
        for chunk in chunks:
            spool.write(chunk.encode("utf-8") if isinstance(chunk, str) else chunk)
        spool.seek(0)
    except BaseException:
        spool.close()
        raise
    response = FileResponse(spool, content_type=content_type)
    response["Content-Disposition"] = content_disposition_header(True, filename)
    return response
