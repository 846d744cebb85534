"""Load the demo: users of every role, the hand-written restaurant dataset with sample annotations, a campaign."""

from __future__ import annotations

from pathlib import Path

from django.conf import settings
from django.db import transaction

from accounts.models import Role, User
from annotator.models import Assignment, Campaign
from annotator.services.assignments import assignment_finish
from annotator.services.importing import items_import
from annotator.services.judgments import judgment_set
from corpus.models import Annotation, Dataset, ErrorSpan, Source, SourceKind
from errors.commands import BaseCommand
from evaluation.models import Aspect, Evaluator, EvaluatorRun
from jobs.models import JobStatus
from studies.setup import CampaignSpec, campaign_create

DEMO_FILE = Path(settings.BASE_DIR) / "demo" / "restaurants.jsonl"
DEMO_DATASET = "Demo: restaurants (data-to-text)"
DEMO_CAMPAIGN = "Demo campaign: restaurant accuracy"
DEMO_PASSWORD = "demo-pass-2026"
USERS = [("admin", Role.ADMIN), ("researcher", Role.RESEARCHER), ("expert1", Role.ANNOTATOR),
         ("expert2", Role.ANNOTATOR)]
SAMPLE_COMMENT = "Hand-written sample judgment loaded by the demo, not a real expert's."
# Sample judgments of four outputs by both experts, so analytics, agreement, adjudication and the labeled set
# have figures at first open. Per (item, system): span text -> (expert1's, expert2's) (span, explanation)
# verdicts; they disagree on three spans.
SAMPLE_JUDGMENTS: dict[tuple[str, str], dict[str, tuple[tuple[str, str], tuple[str, str]]]] = {
    ("r01", "llm-small"): {
        "5 out of 5": (("error", "correct"), ("error", "correct")),
        "breakfasts": (("error", "correct"), ("not_error", "not_error")),
        "cosy": (("error", "partially_correct"), ("error", "correct")),
    },
    ("r02", "llm-small"): {
        "a lovely spot for families": (("error", "correct"), ("error", "correct")),
        "from £30": (("error", "incomplete"), ("error", "correct")),
        "beautiful views of the water": (("error", "correct"), ("error", "correct")),
    },
    ("r04", "llm-small"): {
        "Highly rated by locals": (("error", "correct"), ("error", "correct")),
        "just a short walk": (("not_error", "not_error"), ("error", "vague")),
    },
    ("r06", "llm-small"): {
        "a five-star rating": (("error", "correct"), ("error", "correct")),
        "a loyal following": (("error", "correct"), ("not_error", "not_error")),
    },
}


class Command(BaseCommand):
    help = "Load the demo dataset, sample annotations, demo users and a demo campaign (idempotent)."

    @transaction.atomic
    def handle(self, *args: object, **options: object) -> None:
        users = {}
        for username, role in USERS:
            user, created = User.objects.get_or_create(username=username, defaults={"role": role})
            if created:
                user.set_password(DEMO_PASSWORD)
                user.is_staff = user.is_superuser = role == Role.ADMIN
                user.save()
            users[username] = user
        if Dataset.objects.filter(name=DEMO_DATASET).exists():
            self.stdout.write("Demo already loaded.")
            self._names()
            return
        items_import(path=DEMO_FILE, dataset_name=DEMO_DATASET, task_slug="data-to-text", user=users["admin"])
        dataset = Dataset.objects.get(name=DEMO_DATASET)
        dataset.is_demo = True
        dataset.description = (
            "Hand-written by the team: six restaurant records, three systems. The annotations of "
            "'sample-ensemble' are SAMPLES written by people to show the tool, not model output."
        )
        dataset.save(update_fields=["is_demo", "description"])
        evaluator, _ = Evaluator.objects.get_or_create(
            name="Sample annotations (hand-written)", defaults={"kind": Evaluator.Kind.ENSEMBLE,
                                                                "description": "Demo samples, not a model."},
        )
        aspect = Aspect.objects.get(task__slug="data-to-text", name="accuracy")
        run = EvaluatorRun.objects.create(
            evaluator=evaluator, dataset=dataset, aspect=aspect, label="sample-ensemble", status=JobStatus.DONE,
        )
        # The samples were imported under the file's source name; the run becomes their source.
        imported = Source.objects.get(kind=SourceKind.IMPORT, label="sample-ensemble")
        Annotation.objects.filter(item__dataset=dataset, source=imported).update(source=run, is_sample=True)
        if not imported.annotations.exists():
            imported.delete()
        campaign = campaign_create(CampaignSpec(
            name=DEMO_CAMPAIGN, dataset=dataset, runs=[run],
            annotators=[users["expert1"], users["expert2"]], aspects=["accuracy"], annotators_per_item=2,
            seed=7), created_by=users["admin"],
        )
        self._sample_judgments(campaign, run, [users["expert1"], users["expert2"]])
        self.stdout.write(self.style.SUCCESS(f"Demo loaded: {dataset.items.count()} items, users "
                                             f"{', '.join(u for u, _ in USERS)} (password {DEMO_PASSWORD})."))
        self._names()

    def _sample_judgments(self, campaign: Campaign, run: EvaluatorRun, experts: list[User]) -> None:
        """Both experts judge SAMPLE_JUDGMENTS' outputs and finish them; their comments say these are samples."""
        for (external_id, system), verdicts in SAMPLE_JUDGMENTS.items():
            spans = {s.text: s for s in ErrorSpan.objects.filter(
                annotation__source=run, annotation__item__external_id=external_id, annotation__item__system=system)}
            for n, expert in enumerate(experts):
                assignment = Assignment.objects.get(campaign=campaign, annotator=expert,
                                                    item__external_id=external_id, item__system=system)
                for text, pair in verdicts.items():
                    span_verdict, explanation_verdict = pair[n]
                    judgment_set(assignment=assignment, span=spans[text], user=expert, record=False, changes={
                        "span_verdict": span_verdict, "explanation_verdict": explanation_verdict,
                        "comment": SAMPLE_COMMENT,
                    })
                assignment_finish(assignment=assignment, user=expert)

    def _names(self) -> None:
        """Print the names the CLI wants (`--dataset "..."`), so nobody has to guess them."""
        self.stdout.write(f'Demo dataset:  "{DEMO_DATASET}" (task data-to-text; aspect of its sample run: accuracy)')
        self.stdout.write(f'Demo campaign: "{DEMO_CAMPAIGN}"')
