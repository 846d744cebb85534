"""The management commands' side of UserError: a clear message on stderr and exit status 2, never a traceback."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand as DjangoBaseCommand
from django.core.management.base import CommandError

from errors import UserError

USER_ERROR_EXIT = 2  # the status argparse gives a usage mistake: the command was asked for something it refuses


class BaseCommand(DjangoBaseCommand):
    """Every project command derives from this, so a UserError raised anywhere below it ends the same way."""

    def execute(self, *args: Any, **options: Any) -> Any:
        try:
            return super().execute(*args, **options)
        except UserError as exc:
            raise CommandError(str(exc), returncode=USER_ERROR_EXIT) from exc
