"""Import an uploaded file: spooled to a temporary file, then the same streaming import as the CLI.

Messages name the upload by its own name, never by the temporary path it was spooled to; files larger than
IMPORT_MAX_UPLOAD_MB are refused before anything is read.
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from django.conf import settings
from django.core.files.uploadedfile import UploadedFile

from annotator.services.importing import ImportReport, items_import
from corpus.formats import FormatError
from corpus.services.annotation_import import AnnotationImportReport, annotations_import


class UploadTooLarge(FormatError):
    """An upload over the configured limit (413, as the upload size middleware answers)."""

    status = 413


def check_upload_size(upload: UploadedFile) -> None:
    limit = settings.IMPORT_MAX_UPLOAD_MB
    if upload.size is not None and upload.size > limit * 1024 * 1024:
        raise UploadTooLarge(
            "upload size", f"{upload.size / 1024 / 1024:.1f} MB is over the limit of {limit} MB "
            "(IMPORT_MAX_UPLOAD_MB); import large files with manage.py on the server"
        )


@contextmanager
def _spooled(upload: UploadedFile) -> Iterator[Path]:
    check_upload_size(upload)
    suffix = Path(upload.name or "upload.jsonl").suffix or ".jsonl"
    with tempfile.NamedTemporaryFile(suffix=suffix) as handle:
        for chunk in upload.chunks():
            handle.write(chunk)
        handle.flush()
        yield Path(handle.name)


def upload_import(
    *, upload: UploadedFile, dataset_name: str, task_slug: str, source: str = "gold", aspect: str = "", user=None
) -> ImportReport:
    """Import `upload` like `manage.py import_items`; raise FormatError (naming line and field) on bad input."""
    with _spooled(upload) as path:
        return items_import(
            path=path, dataset_name=dataset_name, task_slug=task_slug, source=source or "gold",
            aspect=aspect, user=user, file_name=upload.name or "the upload",
        )


def upload_annotations_import(
    *, upload: UploadedFile, dataset_name: str, source: str, fmt: str, skip_bad_spans: bool = False,
    split: str = "", annotators: dict[str, str] | None = None,
) -> AnnotationImportReport:
    """Import `upload` like `manage.py import_annotations` (`split`, `annotators` as its --split and
    --map-annotator, read by corpus.services.annotation_import.annotator_map); raise FormatError listing
    every problem."""
    with _spooled(upload) as path:
        return annotations_import(
            path=path, dataset_name=dataset_name, source=source, fmt=fmt, skip_bad_spans=skip_bad_spans,
            file_name=upload.name or "the upload", split=split, annotators=annotators,
        )
