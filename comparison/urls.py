"""URLs of the comparison app (a job's Cancel and Resume come from its kind: comparison/jobs.py)."""

from __future__ import annotations

from django.urls import path

from comparison import views

urlpatterns = [
    path("comparisons/", views.comparison_list, name="comparison_list"),
    path("comparisons/new/", views.comparison_new, name="comparison_new"),
    path("comparisons/<int:pk>/", views.comparison_detail, name="comparison_detail"),
    path("comparisons/<int:pk>/export.<str:fmt>", views.comparison_export, name="comparison_export"),
    path("comparisons/<int:pk>/plots/<str:name>.<str:fmt>", views.comparison_plot, name="comparison_plot"),
]
