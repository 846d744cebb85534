"""Import an uploaded item file: spooled to a temporary file, then the same streaming import as the CLI."""

from __future__ import annotations

import tempfile
from pathlib import Path

from django.core.files.uploadedfile import UploadedFile

from annotator.services.importing import ImportReport, items_import


def upload_import(
    *, upload: UploadedFile, dataset_name: str, task_slug: str, source: str = "gold", aspect: str = "", user=None
) -> ImportReport:
    """Import `upload` like `manage.py import_items`; raise FormatError (naming line and field) on bad input."""
    suffix = Path(upload.name or "upload.jsonl").suffix or ".jsonl"
    with tempfile.NamedTemporaryFile(suffix=suffix) as handle:
        for chunk in upload.chunks():
            handle.write(chunk)
        handle.flush()
        return items_import(
            path=Path(handle.name), dataset_name=dataset_name, task_slug=task_slug, source=source or "gold",
            aspect=aspect, user=user,
        )
