"""The project's WSGI application wrapped to report its server time in an `X-Server-Ms` header (load bench).

Server time runs from the moment gunicorn hands the request to Django until Django calls start_response:
all middleware, session/auth, the view, its queries and template rendering."""

from __future__ import annotations

import os
import time

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
_app = get_wsgi_application()


def application(environ, start_response):
    t0 = time.perf_counter()

    def start(status, headers, exc_info=None):
        headers.append(("X-Server-Ms", f"{(time.perf_counter() - t0) * 1000:.3f}"))
        return start_response(status, headers, exc_info)

    return _app(environ, start)
