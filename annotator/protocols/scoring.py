"""Hooks shared by the protocols whose item gets one score and nothing else (a declared `score_range`): the screen's
score part, what finishing needs, and the shortcuts. A protocol subclasses `ScoreHooks` and says its name, its
question and its anchors; this module registers nothing itself."""

from __future__ import annotations

from annotator.models import Campaign
from annotator.protocols import Hooks
from annotator.rendering import render_inputs
from annotator.selectors.campaigns import neighbour_assignments
from annotator.selectors.scores import item_score_of, item_score_unfinished

STEP, PAGE = 1, 10  # arrows move the slider by one point, PageUp/PageDown by ten


class ScoreHooks(Hooks):
    parts = ("item-score", "item-status")
    question = "How good is the output?"
    anchors: tuple[tuple[int, str], ...] = ()

    def shortcuts(self) -> tuple[tuple[str, str], ...]:
        low, high = self.declared.score_range or (0, 0)
        return (
            ("← → / ↑ ↓", f"score -{STEP} / +{STEP}"), ("PageDown / PageUp", f"score -{PAGE} / +{PAGE}"),
            ("Home / End", f"score {low} / {high}"), ("0-9", "type the score (e.g. 7 then 5 for 75)"),
            ("u / Ctrl+Z", "undo my last score change; Shift+U / Ctrl+Y redo"),
            ("f", "finish this item and open the next one (after the score)"),
            ("n / p", "next / previous item"), ("g", "guidelines"), ("?", "this list"),
        )

    def context(self, request, assignment):
        campaign = assignment.campaign
        assignment.refresh_from_db(fields=["phase", "status", "finished_at"])
        low, high = self.declared.score_range or (0, 0)
        can_edit = assignment.annotator_id == request.user.pk and campaign.status == Campaign.Status.OPEN
        return {
            "assignment": assignment, "campaign": campaign, "item": assignment.item, "can_edit": can_edit,
            "score": item_score_of(assignment), "score_open": can_edit and not assignment.is_done(),
            "score_min": low, "score_max": high, "score_mid": (low + high) // 2, "score_step": STEP,
            "score_page": PAGE, "score_labels": self.anchors, "score_question": self.question,
            "output_header": assignment.item.dataset.output_header,
        }

    def page_context(self, request, assignment, context):
        prev_pk, next_pk, n_assignments = neighbour_assignments(assignment)
        low, high = self.declared.score_range or (0, 0)
        return {"inputs": render_inputs(assignment.item.inputs), "prev_pk": prev_pk, "next_pk": next_pk,
                "n_assignments": n_assignments, "shortcuts": self.shortcuts(), "sync_parts": self.parts,
                "keys": {"step": STEP, "page": PAGE, "min": low, "max": high}}

    def unfinished(self, assignment):
        return item_score_unfinished(assignment)
