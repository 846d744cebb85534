"""URLs of the analytics dashboards, their table downloads and plots."""

from __future__ import annotations

from django.urls import path

from analytics import views

urlpatterns = [
    path("campaigns/<int:pk>/", views.campaign_dashboard, name="analytics_campaign"),
    path("campaigns/<int:pk>/tables/<slug:key>.<str:fmt>", views.campaign_table, name="analytics_campaign_table"),
    path("campaigns/<int:pk>/plots/<slug:name>.<str:fmt>", views.campaign_plot, name="analytics_campaign_plot"),
    path("campaigns/<int:pk>/report-<str:fmt>.zip", views.campaign_report, name="analytics_campaign_report"),
    path("campaigns/<int:pk>/labeled.card.json", views.labeled_card_view, name="labeled_card"),
    path("campaigns/<int:pk>/labeled.<str:fmt>", views.labeled_export, name="labeled_export"),
    path("datasets/<int:pk>/", views.dataset_dashboard, name="analytics_dataset"),
    path("datasets/<int:pk>/tables/<slug:key>.<str:fmt>", views.dataset_table, name="analytics_dataset_table"),
    path("datasets/<int:pk>/plots/<slug:name>.<str:fmt>", views.dataset_plot, name="analytics_dataset_plot"),
    path("datasets/<int:pk>/exports/", views.dataset_exports, name="dataset_exports"),
    path("exports/<int:pk>/", views.export_job, name="export_job"),
    path("exports/<int:pk>/files/<str:name>", views.export_download, name="export_download"),
]
