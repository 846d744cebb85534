"""The API's one pagination: `?limit=` (1..1000) and `?offset=` (0..10**9), answered as {"items", "count"}.

django-ninja's own class leaves the offset unbounded, and PostgreSQL refuses an OFFSET past 64 bits with an
error that would surface as a 500; a bound far past any dataset turns such a value into a 422 naming it.
"""

from __future__ import annotations

from django.conf import settings
from ninja import Field, Schema
from ninja.pagination import LimitOffsetPagination

MAX_OFFSET = 10**9


class BoundedLimitOffsetPagination(LimitOffsetPagination):
    class Input(Schema):
        limit: int = Field(settings.NINJA_PAGINATION_PER_PAGE, ge=1, le=settings.NINJA_PAGINATION_MAX_LIMIT)
        offset: int = Field(0, ge=0, le=MAX_OFFSET)
