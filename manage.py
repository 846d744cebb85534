#!/usr/bin/env python
"""Django's command-line utility."""

from __future__ import annotations

import os
import sys


def main() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    from django.conf import settings
    from django.core.exceptions import ImproperlyConfigured
    from django.core.management import execute_from_command_line

    try:
        settings.INSTALLED_APPS  # noqa: B018 - load the settings now, so that a refusal is shown as such
    except ImproperlyConfigured as exc:
        # Django would defer this and fail later with an unrelated "Models aren't loaded yet".
        sys.exit(f"spanjudge cannot start: {exc}")
    execute_from_command_line(sys.argv)


if __name__ == "__main__":
    main()
