"""Login-required everywhere except the API (which answers 401 itself); access errors as HTTP statuses; the
upload size limit; the input rules (NUL, lone surrogates, huge numbers) applied to every request."""

from __future__ import annotations

import json

from django.conf import settings
from django.contrib.auth.middleware import LoginRequiredMiddleware
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpResponse, JsonResponse, QueryDict
from django.http.request import RawPostDataException
from django.shortcuts import render

from accounts.access import FORBIDDEN, NOT_FOUND, AccessError
from corpus import cleaning
from errors import UserError


class LoginRequiredExceptApiMiddleware(LoginRequiredMiddleware):
    def process_view(self, request, view_func, view_args, view_kwargs):
        if request.path.startswith("/api/"):
            return None
        return super().process_view(request, view_func, view_args, view_kwargs)


class AccessErrorMiddleware:
    """Turns an AccessError (403, 404 or 409) or a UserError (400, 409, 422 or 429) raised by a view or a
    service into its status with the reason, the same status the API answers (config.api).

    Django's own PermissionDenied and Http404 keep their handlers; this covers the project's two error types
    so that views need no try/except around access checks or service calls. An htmx request also gets the
    reason as an `sj:problem` event, which the pages show in their message area."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        return self.get_response(request)

    def process_exception(self, request, exception):
        if isinstance(exception, UserError):
            return user_error_response(request, exception)
        if not isinstance(exception, AccessError):
            return None
        if exception.status == NOT_FOUND:
            raise Http404(exception.message) from exception
        if exception.status == FORBIDDEN:
            raise PermissionDenied(exception.message) from exception
        if request.path.startswith("/api/") or getattr(request, "htmx", False):
            return HttpResponse(exception.message, status=exception.status, content_type="text/plain; charset=utf-8")
        return render(request, "409.html", {"exception": exception.message}, status=exception.status)


# Django's technical 404 page (DEBUG) lists every URL pattern; this marks it in its <head>.
_TECHNICAL_404_MARK = b'<meta name="robots" content="NONE,NOARCHIVE">'


class AppNotFoundMiddleware:
    """With DEBUG on, a missing page is still the app's own 404 page, not Django's technical one listing every
    URL of the site (the demo runs with DEBUG on). The API keeps its JSON answers."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        response = self.get_response(request)
        if (settings.DEBUG and response.status_code == 404 and not request.path.startswith("/api/")
                and not getattr(response, "streaming", False) and _TECHNICAL_404_MARK in response.content[:2000]):
            return render(request, "404.html", {"request_path": request.path}, status=404)
        return response


class RowIdRangeMiddleware:
    """A path id beyond a 64-bit integer names no row: 404 before any view hands it to the database (where
    PostgreSQL and SQLite would raise on it instead of finding nothing)."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        return self.get_response(request)

    def process_view(self, request, view_func, view_args, view_kwargs):
        for name, value in view_kwargs.items():
            text = str(value).removeprefix("-")
            if ((name == "pk" or name.endswith(("_pk", "_id"))) and text.isascii() and text.isdigit()
                    and (len(text) > 19 or int(text) > cleaning.INT64_MAX)):
                if request.path.startswith("/api/"):
                    return JsonResponse({"detail": f"{name}: no such id", "field": name}, status=404)
                raise Http404(f"{name}: no such id")
        return None


def user_error_response(request, exc: UserError) -> HttpResponse:
    """A UserError as a view's answer: plain text (JSON under /api/), its status, Retry-After when temporary."""
    if request.path.startswith("/api/"):
        response: HttpResponse = JsonResponse(exc.body(), status=exc.status)
    else:
        response = HttpResponse(str(exc), status=exc.status, content_type="text/plain; charset=utf-8")
        if request.headers.get("HX-Request") == "true":
            response["HX-Trigger"] = json.dumps({"sj:problem": {"message": str(exc), "field": exc.field_json()}})
    if exc.retry_after is not None:
        response["Retry-After"] = str(exc.retry_after)
    return response


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
                return JsonResponse({"detail": message, "field": None}, status=413)
            return HttpResponse(message, status=413, content_type="text/plain; charset=utf-8")
        return self.get_response(request)


FORM_TYPES = ("application/x-www-form-urlencoded", "multipart/form-data")


class InputCleaningMiddleware:
    """Answers 400 (query parameter) or 422 (JSON or form body) naming the field when a value breaks the input
    rules.

    The rules (corpus.cleaning): no NUL character and no lone surrogate in any text (PostgreSQL refuses both
    in any query), JSON integers within 64 bits (a 4,301-digit one makes `json.loads` raise), no NaN or
    Infinity, bounded nesting, and a body that is UTF-8 text. One check here covers every query string, every
    API body and every form body (urlencoded or multipart: a view that reads `request.POST` directly has no
    form field to refuse a NUL for it); uploaded files are left to the importers."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        status, problem, field = self._problem(request)
        if problem is None:
            return self.get_response(request)
        if request.path.startswith("/api/"):
            return JsonResponse({"detail": problem, "field": field}, status=status)
        return HttpResponse(problem, status=status, content_type="text/plain; charset=utf-8")

    def _problem(self, request) -> tuple[int, str | None, str | None]:
        """(status, reason, field): a bad query parameter or a body that is not UTF-8 text is a bad request (400), a
        bad value in a JSON body is unprocessable content (422), as the services answer for values they refuse.

        Form and multipart bodies are left to Django, which decodes them replacing what is not UTF-8; any other
        body is read by the API's JSON parser, which would decode invalid bytes as lone surrogates
        (`json.loads` on bytes uses "surrogatepass"), so it must be UTF-8 before anything parses it."""
        found, name = self._fields(request.GET, "query parameter")
        if found:
            return 400, found, name
        content_type = (request.content_type or "").lower()
        if content_type in FORM_TYPES:
            # Django decodes form values (replacing what is not UTF-8); a malformed multipart body raises here,
            # which Django answers 400 as it would in the view.
            if _fits_in_memory(request):
                request.body  # noqa: B018 - kept, so that a JSON operation sent a form can still read (and refuse) it
            form = request.POST
            if request.method != "POST" and content_type == FORM_TYPES[0]:
                form = QueryDict(request.body, encoding=request.encoding)  # Django parses POST bodies only
            found, name = self._form_fields(form)
            return 422, found, name
        try:
            body = request.body
        except RawPostDataException:
            return 422, None, None
        if not body.strip():
            return 422, None, None
        try:
            text = body.decode("utf-8")
        except UnicodeDecodeError as exc:
            return 400, (f"the body is not UTF-8 text: byte 0x{body[exc.start]:02x} at position {exc.start} "
                         f"({exc.reason}); send JSON encoded as UTF-8"), None
        try:
            cleaning.loads(text, BODY)
        except cleaning.CleaningError as exc:
            return 422, f"the JSON body is refused: {exc}", _in_body(exc.field)
        except ValueError:
            return 400, None, None  # not JSON: the API's own parser answers 400 (or 422) with its reason
        return 400, None, None

    @staticmethod
    def _form_fields(form) -> tuple[str | None, str | None]:
        """(the problem, the field) of the first form value that breaks the rules, else (None, None); a field
        sent several times (a list) names the entry, counted from 1."""
        for name, values in form.lists():
            if cleaning.text_problem(name):
                return f"the form is refused: a field name {cleaning.text_problem(name)}", None
            for number, value in enumerate(values, start=1):
                problem = cleaning.text_problem(value)
                if problem:
                    where = f"{name} entry {number}" if len(values) > 1 else name
                    return f"the form is refused: {where}: {problem}", name
        return None, None

    @staticmethod
    def _fields(data, kind: str) -> tuple[str | None, str | None]:
        """(the problem, the parameter) of the first query parameter that breaks the rules, else (None, None)."""
        for name, values in data.lists():
            shown = ascii(name)[1:-1]
            problem = cleaning.text_problem(name)
            if problem:
                return f"{kind} name {shown!r} {problem}", None  # a name that cannot be stored names no field
            for value in values:
                problem = cleaning.text_problem(value)
                if problem:
                    return f"{kind} {shown!r} {problem}", name
        return None, None


def _fits_in_memory(request) -> bool:
    """Whether the body is small enough for Django to hold (DATA_UPLOAD_MAX_MEMORY_SIZE); a larger one, an upload,
    is parsed as a stream and cannot be read again as raw bytes."""
    try:
        length = int(request.META.get("CONTENT_LENGTH") or 0)
    except ValueError:
        return False
    limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
    return limit is None or length <= limit


BODY = "body"  # the name the input rules give a JSON body's root


def _in_body(where: str | tuple[str, ...] | None) -> str | None:
    """A path the input rules found in the body ("body.link.cap") as the request's field ("link.cap"); the
    body as a whole (or a path that does not start at it) is no field."""
    if not isinstance(where, str) or not where.startswith(f"{BODY}."):
        return None
    return where[len(BODY) + 1:]
