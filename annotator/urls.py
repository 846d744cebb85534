"""URLs of the annotation app."""

from __future__ import annotations

from django.urls import path

from annotator import views

urlpatterns = [
    path("", views.home, name="home"),
    path("datasets/<int:pk>/", views.dataset_detail, name="dataset_detail"),
    path("campaigns/<int:pk>/", views.campaign_entry, name="campaign_entry"),
    path("datasets/<int:pk>/export.<str:fmt>", views.dataset_export, name="dataset_export"),
]
