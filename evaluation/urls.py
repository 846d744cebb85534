"""URLs of the evaluation app (a run's Cancel and Resume come from its kind: evaluation/jobs.py)."""

from __future__ import annotations

from django.urls import path

from evaluation import views

urlpatterns = [
    path("runs/new/", views.run_new, name="run_new"),
    path("runs/<int:pk>/", views.run_detail, name="run_detail"),
]
