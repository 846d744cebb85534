"""Login-required everywhere except the API (which answers 401 itself); access errors as HTTP statuses; the
upload size limit; NUL characters in query strings refused."""

from __future__ import annotations

from django.conf import settings
from django.contrib.auth.middleware import LoginRequiredMiddleware
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpResponse, HttpResponseBadRequest, JsonResponse

from accounts.access import FORBIDDEN, NOT_FOUND, AccessError


class LoginRequiredExceptApiMiddleware(LoginRequiredMiddleware):
    def process_view(self, request, view_func, view_args, view_kwargs):
        if request.path.startswith("/api/"):
            return None
        return super().process_view(request, view_func, view_args, view_kwargs)


class AccessErrorMiddleware:
    """Turns an AccessError raised by a view or a service into its status (403, 404 or 409) with the reason.

    Django's own PermissionDenied and Http404 keep their handlers; this covers the project's one access
    error type so that views need no try/except around access checks."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        return self.get_response(request)

    def process_exception(self, request, exception):
        if not isinstance(exception, AccessError):
            return None
        if exception.status == NOT_FOUND:
            raise Http404(exception.message) from exception
        if exception.status == FORBIDDEN:
            raise PermissionDenied(exception.message) from exception
        return HttpResponse(exception.message, status=exception.status, content_type="text/plain; charset=utf-8")


class UploadSizeLimitMiddleware:
    """Refuse a request body larger than the upload limit with 413 before anything reads it.

    The import services check each file's size too; this stops a huge upload before Django spools it to
    disk (the CSRF check would read the body first). One megabyte of slack covers the form's other fields.
    """

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        limit = settings.IMPORT_MAX_UPLOAD_MB
        try:
            length = int(request.META.get("CONTENT_LENGTH") or 0)
        except ValueError:
            length = 0
        if length > (limit + 1) * 1024 * 1024:
            message = (f"the upload is {length / 1024 / 1024:.1f} MB; uploads are limited to {limit} MB "
                       "(IMPORT_MAX_UPLOAD_MB); import large files with manage.py on the server")
            if request.path.startswith("/api/"):
                return JsonResponse({"detail": message}, status=413)
            return HttpResponse(message, status=413, content_type="text/plain; charset=utf-8")
        return self.get_response(request)


class NulInQueryMiddleware:
    """Answers 400 naming the parameter when a query string holds a NUL character.

    No parameter of the app may contain one, and PostgreSQL refuses it in any query, so a filter such as
    `?aspect=%00` would otherwise end as a 500. (Form and JSON bodies are checked by the services, which can
    name the field in their own words.)"""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        for name, values in request.GET.lists():
            if "\x00" in name or any("\x00" in value for value in values):
                shown = name.replace("\x00", "\\x00")
                return HttpResponseBadRequest(f"query parameter {shown!r} contains a NUL character (\\x00)",
                                              content_type="text/plain; charset=utf-8")
        return self.get_response(request)
