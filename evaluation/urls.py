"""URLs of the evaluation app."""

from __future__ import annotations

from django.urls import path

from evaluation import views

urlpatterns = [
    path("runs/<int:pk>/", views.run_detail, name="run_detail"),
]
