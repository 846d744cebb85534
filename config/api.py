"""The project's one NinjaAPI; each app adds its router. Token auth for scripts, session auth in the browser."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest
from ninja import NinjaAPI
from ninja.security import HttpBearer, django_auth

from accounts.access import AccessError
from accounts.api import router as tokens_router
from accounts.models import TokenScope
from accounts.services.tokens import token_lookup
from analytics.api import datasets_router as analytics_datasets_router
from analytics.api import router as analytics_router
from analytics.api_labeled import router as labeled_router
from annotator.api import router as annotator_router
from annotator.api_checks import router as checks_router
from annotator.api_review import router as review_router
from comparison.api import router as comparison_router
from config.openapi import document_responses
from dhp.api import router as dhp_router
from evaluation.api import router as evaluation_router

SAFE_METHODS = ("GET", "HEAD", "OPTIONS")


class TokenAuth(HttpBearer):
    """Bearer tokens; a read-scoped token is refused (403) on anything that could change data."""

    def authenticate(self, request: HttpRequest, token: str):
        row = token_lookup(token)
        if row is None:
            return None
        if row.scope == TokenScope.READ and request.method not in SAFE_METHODS:
            raise AccessError(403, "this token is read-only (scope 'read'); use a token made with --scope write")
        request.user = row.user
        return row.user


class SpanjudgeAPI(NinjaAPI):
    """The NinjaAPI whose schema also documents the shared refusals and non-JSON answers (config.openapi)."""

    def get_openapi_schema(self, *args, **kwargs):
        return document_responses(super().get_openapi_schema(*args, **kwargs))


api = SpanjudgeAPI(
    title="spanjudge API",
    version="1",
    urls_namespace="api",
    auth=[TokenAuth(), django_auth],
    # The docs and schema are for people who may use the API: signed in, and served from our own static files
    # ("ninja" in INSTALLED_APPS makes ninja render Swagger UI from its bundled copy instead of a CDN).
    docs_decorator=login_required,
)
api.add_router("/", tokens_router)
api.add_router("/", annotator_router)
api.add_router("/", review_router)
api.add_router("/", checks_router)
api.add_router("/", evaluation_router)
api.add_router("/analytics/", analytics_router)
api.add_router("/analytics/", labeled_router)
api.add_router("/", dhp_router)
api.add_router("/", comparison_router)
api.add_router("/", analytics_datasets_router)


@api.exception_handler(PermissionDenied)
def _forbidden(request: HttpRequest, exc: PermissionDenied):
    """Services and access helpers raise PermissionDenied; the API answers 403 with the reason."""
    return api.create_response(request, {"detail": str(exc) or "Forbidden."}, status=403)


@api.exception_handler(AccessError)
def _access_error(request: HttpRequest, exc: AccessError):
    """The project's one access error: 403, 404 or 409 with the reason."""
    return api.create_response(request, {"detail": exc.message}, status=exc.status)
