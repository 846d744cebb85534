"""URLs of a campaign's quality checks: the decoys page, its jobs' buttons and opening a draft."""

from __future__ import annotations

from django.urls import path

from quality import views

urlpatterns = [
    path("campaigns/<int:pk>/decoys/", views.campaign_decoys, name="campaign_decoys"),
    path("campaigns/<int:pk>/decoys/audit/", views.campaign_decoys_audit, name="campaign_decoys_audit"),
    path("campaigns/<int:pk>/open/", views.campaign_open_view, name="campaign_open"),
    path("campaigns/<int:pk>/decoys/explain/", views.campaign_decoys_explain, name="campaign_decoys_explain"),
    path("campaigns/<int:pk>/planted/write/", views.campaign_planted_write, name="campaign_planted_write"),
    path("campaigns/<int:pk>/decoys/import/", views.campaign_decoys_import, name="campaign_decoys_import"),
    path("campaigns/<int:pk>/decoys/<int:decoy_pk>/drop/", views.campaign_decoy_drop, name="campaign_decoy_drop"),
]
