"""URLs of the evaluation app."""

from __future__ import annotations

from django.urls import path

from evaluation import views

urlpatterns = [
    path("runs/new/", views.run_new, name="run_new"),
    path("runs/<int:pk>/", views.run_detail, name="run_detail"),
    path("runs/<int:pk>/cancel/", views.run_cancel_view, name="run_cancel"),
    path("runs/<int:pk>/resume/", views.run_resume_view, name="run_resume"),
]
