"""The project's one NinjaAPI; each app adds its router. Token auth for scripts, session auth in the browser."""

from __future__ import annotations

from django.core.exceptions import PermissionDenied
from django.http import HttpRequest
from ninja import NinjaAPI
from ninja.security import HttpBearer, django_auth

from accounts.access import AccessError
from accounts.services.tokens import user_for_token
from analytics.api import router as analytics_router
from annotator.api import router as annotator_router
from comparison.api import router as comparison_router
from dhp.api import router as dhp_router
from evaluation.api import router as evaluation_router


class TokenAuth(HttpBearer):
    def authenticate(self, request: HttpRequest, token: str):
        user = user_for_token(token)
        if user is not None:
            request.user = user
        return user


api = NinjaAPI(
    title="spanjudge API",
    version="1",
    urls_namespace="api",
    auth=[TokenAuth(), django_auth],
)
api.add_router("/", annotator_router)
api.add_router("/", evaluation_router)
api.add_router("/analytics/", analytics_router)
api.add_router("/", dhp_router)
api.add_router("/", comparison_router)


@api.exception_handler(PermissionDenied)
def _forbidden(request: HttpRequest, exc: PermissionDenied):
    """Services and access helpers raise PermissionDenied; the API answers 403 with the reason."""
    return api.create_response(request, {"detail": str(exc) or "Forbidden."}, status=403)


@api.exception_handler(AccessError)
def _access_error(request: HttpRequest, exc: AccessError):
    """The project's one access error: 403, 404 or 409 with the reason."""
    return api.create_response(request, {"detail": exc.message}, status=exc.status)
