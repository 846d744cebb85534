"""Import an item file, judgments included: the corpus importer plus a writer for the experts' verdicts.

Imported judgments hang on a closed campaign named after the dataset (one per dataset), with one done
assignment per (item, annotator), so that analytics count them like any campaign's.
"""

from __future__ import annotations

from pathlib import Path

from django.contrib.auth import get_user_model
from django.db.models import Max

from accounts.models import Role
from annotator.models import Assignment, Campaign, SpanJudgment
from corpus.models import Dataset
from corpus.services.importing import ImportReport, JudgedSpan
from corpus.services.importing import items_import as corpus_items_import


class _JudgmentWriter:
    def __init__(self) -> None:
        self.campaign: Campaign | None = None
        self.users: dict[str, int] = {}
        self.assignments: dict[tuple[int, int], int] = {}
        self.orders: dict[int, int] = {}

    def __call__(self, dataset: Dataset, judged: list[JudgedSpan]) -> int:
        rows = [
            SpanJudgment(
                span=span, annotator_id=self._user(j["annotator"]),
                assignment_id=self._assignment(dataset, item_pk, self._user(j["annotator"])),
                span_verdict=j["span_verdict"] or "", explanation_verdict=j["explanation_verdict"] or "",
                comment=j["comment"], **dict.fromkeys(j["flags"], True),
            )
            for span, item_pk, judgments in judged
            for j in judgments
        ]
        SpanJudgment.objects.bulk_create(rows)
        return len(rows)

    def _user(self, username: str) -> int:
        if username not in self.users:
            user, created = get_user_model().objects.get_or_create(
                username=username, defaults={"role": Role.ANNOTATOR, "is_active": False}
            )
            if created:
                user.set_unusable_password()
                user.save(update_fields=["password"])
            self.users[username] = user.pk
        return self.users[username]

    def _assignment(self, dataset: Dataset, item_pk: int, user_pk: int) -> int:
        if self.campaign is None:
            self.campaign, _ = Campaign.objects.get_or_create(
                name=f"Imported judgments: {dataset.name}",
                defaults={"dataset": dataset, "status": Campaign.Status.CLOSED},
            )
        key = (item_pk, user_pk)
        if key not in self.assignments:
            assignment = Assignment.objects.filter(
                campaign=self.campaign, item_id=item_pk, annotator_id=user_pk
            ).first()
            if assignment is None:
                if user_pk not in self.orders:
                    top = Assignment.objects.filter(campaign=self.campaign, annotator_id=user_pk).aggregate(
                        m=Max("order")
                    )["m"]
                    self.orders[user_pk] = top or 0
                self.orders[user_pk] += 1
                assignment = Assignment.objects.create(
                    campaign=self.campaign, item_id=item_pk, annotator_id=user_pk, order=self.orders[user_pk],
                    status=Assignment.Status.DONE,
                )
            self.assignments[key] = assignment.pk
        return self.assignments[key]


def items_import(
    *, path: Path, dataset_name: str, task_slug: str, source: str = "gold", aspect: str = "", user=None,
    file_name: str = "",
) -> ImportReport:
    """Import `path` like the corpus importer, storing the judgments it carries too (one transaction)."""
    return corpus_items_import(
        path=path, dataset_name=dataset_name, task_slug=task_slug, source=source, aspect=aspect, user=user,
        on_judgments=_JudgmentWriter(), file_name=file_name,
    )
