"""URL configuration."""

from __future__ import annotations

from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.templatetags.static import static
from django.urls import include, path
from django.views.generic import RedirectView

from config.api import api
from config.docs import docs_page
from config.health import healthz

urlpatterns = [
    path("admin/", admin.site.urls),
    path("healthz", healthz, name="healthz"),  # no login: probes of a proxy or an orchestrator
    # Pages name their icon; this answers browsers and tools that ask for /favicon.ico all the same.
    path("favicon.ico", RedirectView.as_view(url=static("favicon.svg"), permanent=True)),
    path("accounts/login/", auth_views.LoginView.as_view(), name="login"),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
    # Every role changes its own password here (annotators have no other account page).
    path("accounts/password/", auth_views.PasswordChangeView.as_view(), name="password_change"),
    path("accounts/password/done/", auth_views.PasswordChangeDoneView.as_view(), name="password_change_done"),
    path("accounts/", include("accounts.urls")),
    path("api/", api.urls),
    path("docs/", docs_page, name="docs"),
    path("docs/<path:path>", docs_page, name="docs_page"),
    path("analytics/", include("analytics.urls")),
    path("dhp/", include("dhp.urls")),
    path("", include("comparison.urls")),
    path("", include("annotator.urls")),
    path("", include("quality.urls")),
    path("", include("studies.urls")),
    path("", include("evaluation.urls")),
    # Cancel and Resume of every job kind, at the paths and names its jobs.py declares.
    path("", include("jobs.urls")),
]
