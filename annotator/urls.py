"""URLs of the annotation app."""

from __future__ import annotations

from django.urls import path

from annotator import views
from annotator.views import esa
from annotator.views.mqm import mqm_error_add, mqm_error_remove
from annotator.views.scores import item_score_view
from annotator.views.simulated import simulated_run_delete_view
from annotator.views.units import unit_choice_view, unit_finish_view, unit_span_add_view, unit_span_remove_view

urlpatterns = [
    path("", views.home, name="home"),
    path("datasets/import/", views.dataset_import, name="dataset_import"),
    path("datasets/<int:pk>/", views.dataset_detail, name="dataset_detail"),
    path("datasets/<int:pk>/items/<int:item_pk>/", views.item_detail, name="item_detail"),
    path("datasets/<int:pk>/export.<str:fmt>", views.dataset_export, name="dataset_export"),
    path("datasets/<int:pk>/annotations/import/", views.annotations_import, name="annotations_import"),
    path("runs/<int:pk>/delete/", simulated_run_delete_view, name="simulated_run_delete"),
    path("campaigns/<int:pk>/resume/", views.campaign_resume, name="campaign_resume"),
    path("campaigns/<int:pk>/guidelines/", views.campaign_guidelines, name="campaign_guidelines"),
    path("campaigns/<int:pk>/control/", views.campaign_control, name="campaign_control"),
    path("campaigns/<int:pk>/labeling/", views.campaign_labeling, name="campaign_labeling"),
    path("campaigns/<int:pk>/adjudicate/", views.adjudicate, name="adjudicate"),
    path("campaigns/<int:pk>/adjudicate/<int:span_pk>/", views.adjudication_save, name="adjudication_save"),
    path("campaigns/<int:pk>/adjudicate/<int:span_pk>/history/", views.adjudication_history_view,
         name="adjudication_history"),
    path("campaigns/<int:pk>/adjudicate/undo/", views.adjudication_undo_view, name="adjudication_undo"),
    path("campaigns/<int:pk>/adjudicate/redo/", views.adjudication_redo_view, name="adjudication_redo"),
    path("work/<int:pk>/", views.item_screen, name="item_screen"),
    path("work/<int:pk>/errors/<int:span_pk>/", views.judgment_save, name="judgment_save"),
    path("work/<int:pk>/errors/<int:span_pk>/occurrence/", views.occurrence_save, name="occurrence_save"),
    path("work/<int:pk>/undo/", views.action_undo_view, name="action_undo"),
    path("work/<int:pk>/redo/", views.action_redo_view, name="action_redo"),
    path("me/auto-advance/", views.auto_advance_view, name="auto_advance"),
    path("work/<int:pk>/added/", views.added_span_add, name="added_span_add"),
    path("work/<int:pk>/finish/", views.assignment_finish_view, name="assignment_finish"),
    path("work/<int:pk>/score/", item_score_view, name="item_score"),
    path("work/<int:pk>/choice/", unit_choice_view, name="unit_choice"),
    path("work/<int:pk>/screen-finish/", unit_finish_view, name="unit_finish"),
    path("work/<int:pk>/screen-span/", unit_span_add_view, name="unit_span_add"),
    path("work/<int:pk>/screen-span-remove/", unit_span_remove_view, name="unit_span_remove"),
    path("work/<int:pk>/time/", views.assignment_time, name="assignment_time"),
    path("work/<int:pk>/reveal/", views.assignment_reveal_view, name="assignment_reveal"),
    path("added/<int:span_pk>/", views.added_span_edit, name="added_span_edit"),
    path("added/<int:span_pk>/delete/", views.added_span_remove, name="added_span_remove"),
    path("work/<int:pk>/mqm/", mqm_error_add, name="mqm_error_add"),
    path("mqm/<int:span_pk>/delete/", mqm_error_remove, name="mqm_error_remove"),
    path("work/<int:pk>/esa/spans/", esa.esa_span_add_view, name="esa_span_add"),
    path("work/<int:pk>/esa/missing/", esa.esa_missing_add_view, name="esa_missing_add"),
    path("work/<int:pk>/esa/done/", esa.esa_spans_done_view, name="esa_spans_done"),
    path("work/<int:pk>/esa/score/", esa.esa_score_view, name="esa_score"),
    path("esa/<int:span_pk>/", esa.esa_span_change_view, name="esa_span_change"),
    path("esa/<int:span_pk>/delete/", esa.esa_span_remove_view, name="esa_span_remove"),
]
