"""URLs of the DHP app (a run's Cancel and Resume come from its kind: dhp/jobs.py)."""

from __future__ import annotations

from django.urls import path

from dhp import views

urlpatterns = [
    path("", views.dhp_home, name="dhp_home"),
    path("runs/new/", views.run_new, name="dhp_run_new"),
    path("runs/<int:pk>/", views.run_detail, name="dhp_run"),
    path("runs/<int:pk>/pairs/", views.run_pairs, name="dhp_run_pairs"),
    path("datasets/<int:pk>/", views.dataset_results, name="dhp_dataset"),
    path("surveys/new/", views.survey_new, name="dhp_survey_new"),
    path("surveys/<int:pk>/", views.survey_answer, name="dhp_survey_answer"),
    path("surveys/<int:pk>/results/", views.survey_results_view, name="dhp_survey_results"),
    path("surveys/<int:pk>/close/", views.survey_close_view, name="dhp_survey_close"),
    path("surveys/<int:pk>/invite/", views.survey_invite_view, name="dhp_survey_invite"),
]
