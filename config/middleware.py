"""Login-required everywhere, except the API, which answers 401 itself (token or session auth)."""

from __future__ import annotations

from django.contrib.auth.middleware import LoginRequiredMiddleware


class LoginRequiredExceptApiMiddleware(LoginRequiredMiddleware):
    def process_view(self, request, view_func, view_args, view_kwargs):
        if request.path.startswith("/api/"):
            return None
        return super().process_view(request, view_func, view_args, view_kwargs)
