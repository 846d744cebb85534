"""Where export files live: a Django storage that keeps them in the database, in chunks, so that the worker
that wrote a file and the web host that serves it need no disk in common.

The setting SPANJUDGE_EXPORT_STORAGE chooses between this (`database`, the default), object storage through
django-storages (`s3`) and a folder of this host (`folder`, SPANJUDGE_EXPORT_DIR); settings.STORAGES["exports"]
holds the choice and `export_storage()` returns it.
"""

from __future__ import annotations

import io
from typing import IO

from django.core.files import File
from django.core.files.storage import Storage, storages
from django.db import transaction
from django.utils.deconstruct import deconstructible

from analytics.models import ExportFile, ExportFileChunk

EXPORTS = "exports"  # the alias in settings.STORAGES
CHUNK_BYTES = 1024 * 1024  # one row per MiB: a read holds one chunk in memory, whatever the file's size


def export_storage() -> Storage:
    return storages[EXPORTS]


class ChunkReader(io.RawIOBase):
    """A seekable, read-only view of a stored file that fetches one chunk per read (constant memory).

    Its size is known before the first read, so a response that streams it states its Content-Length and a
    client can tell a cut transfer from a whole one."""

    def __init__(self, stored: ExportFile, chunk_bytes: int) -> None:
        self.stored = stored
        self.size = stored.size
        self.chunk_bytes = chunk_bytes
        self.position = 0

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return self.position

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        base = {io.SEEK_SET: 0, io.SEEK_CUR: self.position, io.SEEK_END: self.size}[whence]
        self.position = max(0, base + offset)
        return self.position

    def readinto(self, buffer) -> int:  # noqa: ANN001 - a writable buffer, as io asks
        if self.position >= self.size:
            return 0
        number, skip = divmod(self.position, self.chunk_bytes)
        data = ExportFileChunk.objects.filter(file=self.stored, number=number).values_list("data", flat=True).first()
        if data is None:
            raise OSError(f"export file {self.stored.name}: chunk {number} is missing")
        piece = bytes(data)[skip:skip + len(buffer)]
        buffer[:len(piece)] = piece
        self.position += len(piece)
        return len(piece)


@deconstructible
class DatabaseStorage(Storage):
    """Files as rows: a name, a size, and the bytes in numbered chunks of `chunk_bytes`. Saving a name that is
    taken replaces the file (an export written again keeps its names)."""

    def __init__(self, chunk_bytes: int = CHUNK_BYTES) -> None:
        self.chunk_bytes = chunk_bytes

    def _open(self, name: str, mode: str = "rb") -> File:
        if "w" in mode or "a" in mode or "+" in mode:
            raise ValueError("export files in the database are written with save(), not opened for writing")
        stored = ExportFile.objects.filter(name=name).first()
        if stored is None:
            raise FileNotFoundError(name)
        return File(io.BufferedReader(ChunkReader(stored, self.chunk_bytes), buffer_size=self.chunk_bytes), name=name)

    @transaction.atomic
    def _save(self, name: str, content: IO[bytes]) -> str:
        """Store the file whole or not at all: its row and chunks commit together."""
        ExportFile.objects.filter(name=name).delete()
        stored = ExportFile.objects.create(name=name, size=0)
        content.seek(0)
        size = number = 0
        while chunk := content.read(self.chunk_bytes):
            data = chunk.encode("utf-8") if isinstance(chunk, str) else chunk
            ExportFileChunk.objects.create(file=stored, number=number, data=data)
            size += len(data)
            number += 1
        ExportFile.objects.filter(pk=stored.pk).update(size=size)
        return name

    def get_available_name(self, name: str, max_length: int | None = None) -> str:
        return name  # a name is replaced, never numbered: the job row records the names it wrote

    def delete(self, name: str) -> None:
        ExportFile.objects.filter(name=name).delete()

    def exists(self, name: str) -> bool:
        return ExportFile.objects.filter(name=name).exists()

    def size(self, name: str) -> int:
        stored = ExportFile.objects.filter(name=name).only("size").first()
        if stored is None:
            raise FileNotFoundError(name)
        return stored.size

    def listdir(self, path: str) -> tuple[list[str], list[str]]:
        prefix = path.rstrip("/") + "/" if path else ""
        names = ExportFile.objects.filter(name__startswith=prefix).values_list("name", flat=True)
        rests = [name[len(prefix):] for name in names]
        return sorted({r.split("/", 1)[0] for r in rests if "/" in r}), sorted(r for r in rests if "/" not in r)

    def url(self, name: str) -> str:
        raise NotImplementedError("export files are served by the export download views")
