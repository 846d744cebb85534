"""The project's one NinjaAPI; each app adds its router. Token auth for scripts, session auth in the browser."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest
from django.http.request import RawPostDataException
from ninja import NinjaAPI
from ninja.errors import AuthenticationError
from ninja.security import HttpBearer, SessionAuth

from accounts.access import AccessError
from accounts.api import router as tokens_router
from accounts.models import TokenScope
from accounts.services.tokens import token_lookup
from analytics.api.confidence import router as confidence_router
from analytics.api.dashboards import router as dashboards_router
from analytics.api.esa import router as esa_router
from analytics.api.exports import router as exports_router
from analytics.api.figures import router as figures_router
from analytics.api.labeled import router as labeled_router
from analytics.api.mqm import router as mqm_router
from analytics.api.pairwise import router as pairwise_router
from analytics.api.priming import router as priming_router
from analytics.api.report import router as report_router
from analytics.api.sources import router as sources_router
from annotator.api.adjudication import router as adjudication_router
from annotator.api.assignments import router as assignments_router
from annotator.api.datasets import router as datasets_router
from annotator.api.esa import router as esa_steps_router
from annotator.api.judgments import router as judgments_router
from annotator.api.labeling import router as labeling_router
from annotator.api.mqm import router as mqm_steps_router
from annotator.api.scores import router as item_score_router
from comparison.api import router as comparison_router
from config.openapi import document_responses
from dhp.api import router as dhp_router
from errors import UserError
from evaluation.api import router as evaluation_router
from jobs.api import job_actions_router
from jobs.kinds import job_kinds
from quality.api import router as checks_router
from studies.api.campaigns import router as campaigns_router
from studies.api.participants import router as participants_router

SAFE_METHODS = ("GET", "HEAD", "OPTIONS")


class TokenAuth(HttpBearer):
    """Bearer tokens; a read-scoped token is refused (403) on anything that could change data.

    A bearer token that is unknown, revoked or expired is a 401 at once: the request named its credentials,
    so falling through to the session (and its CSRF check, a 403) would answer the wrong question."""

    def authenticate(self, request: HttpRequest, token: str):
        row = token_lookup(token)
        if row is None:
            raise AuthenticationError(message="the bearer token is unknown, revoked or expired")
        if row.scope == TokenScope.READ and request.method not in SAFE_METHODS:
            raise AccessError(403, "this token is read-only (scope 'read'); use a token made with --scope write")
        request.user = row.user
        return row.user


class SignedInSession(SessionAuth):
    """The browser's session, CSRF-checked only when there is a signed-in session to protect.

    ninja's SessionAuth checks CSRF before it looks for a user, so a script with no credentials got 403 "CSRF
    check Failed" on a write; without a signed-in user there is nothing to forge, and the answer is 401."""

    def __call__(self, request: HttpRequest):
        user = getattr(request, "user", None)
        if user is None or not user.is_authenticated:
            return None
        return super().__call__(request)


class SpanjudgeAPI(NinjaAPI):
    """The NinjaAPI whose schema also documents the shared refusals and non-JSON answers (config.openapi)."""

    def get_openapi_schema(self, *args, **kwargs):
        return document_responses(super().get_openapi_schema(*args, **kwargs))


api = SpanjudgeAPI(
    title="spanjudge API",
    version="1",
    urls_namespace="api",
    auth=[TokenAuth(), SignedInSession()],
    # The docs and schema are for people who may use the API: signed in, and served from our own static files
    # ("ninja" in INSTALLED_APPS makes ninja render Swagger UI from its bundled copy instead of a CDN).
    docs_decorator=login_required,
)
api.add_router("/", tokens_router)
api.add_router("/", datasets_router)
api.add_router("/", assignments_router)
api.add_router("/", judgments_router)
api.add_router("/", mqm_steps_router)
api.add_router("/", esa_steps_router)
api.add_router("/", item_score_router)
api.add_router("/", campaigns_router)
api.add_router("/", adjudication_router)
api.add_router("/", labeling_router)
api.add_router("/", participants_router)
api.add_router("/", checks_router)
api.add_router("/", evaluation_router)
api.add_router("/analytics/", dashboards_router)
api.add_router("/analytics/", labeled_router)
api.add_router("/analytics/", report_router)
api.add_router("/analytics/", priming_router)
api.add_router("/analytics/", confidence_router)
api.add_router("/analytics/", mqm_router)
api.add_router("/analytics/", pairwise_router)
api.add_router("/analytics/", esa_router)
api.add_router("/analytics/", figures_router)
api.add_router("/", dhp_router)
api.add_router("/", comparison_router)
api.add_router("/", sources_router)
api.add_router("/", exports_router)
# Cancel and Resume of every job kind, at the paths, operation ids and tags its jobs.py declares.
api.add_router("/", job_actions_router(job_kinds()))


@api.exception_handler(PermissionDenied)
def _forbidden(request: HttpRequest, exc: PermissionDenied):
    """Services and access helpers raise PermissionDenied; the API answers 403 with the reason."""
    return api.create_response(request, {"detail": str(exc) or "Forbidden."}, status=403)


@api.exception_handler(RawPostDataException)
def _form_sent_to_json(request: HttpRequest, exc: RawPostDataException):
    """A large form upload sent to an operation that reads JSON: its stream was parsed as a form already."""
    return api.create_response(request, {"detail": "this operation takes a JSON body, not a form upload",
                                         "field": None}, status=400)


@api.exception_handler(AccessError)
def _access_error(request: HttpRequest, exc: AccessError):
    """The project's one access error: 403, 404 or 409 with the reason."""
    return api.create_response(request, {"detail": exc.message}, status=exc.status)


@api.exception_handler(UserError)
def _user_error(request: HttpRequest, exc: UserError):
    """The project's one user-error type: its status (400, 409, 422 or 429) with the reason and the field it is
    about (a string, a list, or null), and Retry-After when the refusal is temporary. Views answer the same
    status (config.middleware.AccessErrorMiddleware)."""
    response = api.create_response(request, exc.body(), status=exc.status)
    if exc.retry_after is not None:
        response["Retry-After"] = str(exc.retry_after)
    return response
