"""Load the demo: users of every role, the hand-written restaurant dataset with sample annotations, a campaign."""

from __future__ import annotations

from pathlib import Path

from django.conf import settings
from django.db import transaction

from accounts.models import Role, User
from annotator.services.campaigns import campaign_create
from annotator.services.importing import items_import
from corpus.models import Annotation, Dataset, Source, SourceKind
from errors.commands import BaseCommand
from evaluation.models import Aspect, Evaluator, EvaluatorRun
from jobs.models import JobStatus

DEMO_FILE = Path(settings.BASE_DIR) / "demo" / "restaurants.jsonl"
DEMO_DATASET = "Demo: restaurants (data-to-text)"
DEMO_CAMPAIGN = "Demo campaign: restaurant accuracy"
DEMO_PASSWORD = "demo-pass-2026"
USERS = [("admin", Role.ADMIN), ("researcher", Role.RESEARCHER), ("expert1", Role.ANNOTATOR),
         ("expert2", Role.ANNOTATOR)]


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
            message="Hand-written samples loaded by load_demo.",
        )
        # The samples were imported under the file's source name; the run becomes their source.
        imported = Source.objects.get(kind=SourceKind.IMPORT, label="sample-ensemble")
        Annotation.objects.filter(item__dataset=dataset, source=imported).update(source=run, is_sample=True)
        if not imported.annotations.exists():
            imported.delete()
        campaign_create(
            name=DEMO_CAMPAIGN, dataset=dataset, runs=[run],
            annotators=[users["expert1"], users["expert2"]], aspects=["accuracy"], annotators_per_item=2,
            seed=7, created_by=users["admin"],
        )
        self.stdout.write(self.style.SUCCESS(f"Demo loaded: {dataset.items.count()} items, users "
                                             f"{', '.join(u for u, _ in USERS)} (password {DEMO_PASSWORD})."))
        self._names()

    def _names(self) -> None:
        """Print the names the CLI wants (`--dataset "..."`), so nobody has to guess them."""
        self.stdout.write(f'Demo dataset:  "{DEMO_DATASET}" (task data-to-text; aspect of its sample run: accuracy)')
        self.stdout.write(f'Demo campaign: "{DEMO_CAMPAIGN}"')
