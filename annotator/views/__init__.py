"""Views of the annotation app, by area: pages (home, datasets), campaigns, and the annotation work screen."""

from __future__ import annotations

from annotator.views.adjudicate import (
    adjudicate,
    adjudication_history_view,
    adjudication_redo_view,
    adjudication_save,
    adjudication_undo_view,
)
from annotator.views.browse import dataset_detail, item_detail
from annotator.views.campaigns import campaign_control, campaign_guidelines, campaign_labeling, campaign_resume
from annotator.views.pages import annotations_import, dataset_export, dataset_import, home
from annotator.views.work import (
    action_redo_view,
    action_undo_view,
    added_span_add,
    added_span_edit,
    added_span_remove,
    assignment_finish_view,
    assignment_reveal_view,
    assignment_time,
    auto_advance_view,
    item_screen,
    judgment_save,
    occurrence_save,
)

__all__ = [
    "adjudicate", "adjudication_history_view", "adjudication_redo_view", "campaign_labeling", "adjudication_save",
    "adjudication_undo_view",
    "added_span_add", "added_span_edit", "added_span_remove", "annotations_import", "assignment_finish_view",
    "assignment_reveal_view", "assignment_time", "auto_advance_view",
    "campaign_control",
    "campaign_guidelines", "campaign_resume",
    "dataset_detail", "dataset_export", "dataset_import", "home", "item_detail", "item_screen", "judgment_save",
    "occurrence_save",
    "action_redo_view",
    "action_undo_view",
]
