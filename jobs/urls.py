"""The Cancel and Resume URLs of every registered job kind (and the page of a kind without a view of its own)."""

from __future__ import annotations

from jobs.kinds import job_kinds
from jobs.views import job_urlpatterns

urlpatterns = job_urlpatterns(job_kinds())
