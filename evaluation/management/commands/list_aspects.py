"""`manage.py list_aspects [--task TASK]`: the tasks, the files each fits, and their aspects with definitions."""

from __future__ import annotations

import textwrap

from django.core.management.base import CommandError, CommandParser

from corpus.models import TaskType
from errors.commands import BaseCommand
from evaluation.engine.tasks import FILE_KINDS, TASKS
from evaluation.models import Aspect


class Command(BaseCommand):
    help = (
        "List the tasks (the --task of import_items), what kind of file each fits, and each task's aspects "
        "(the --aspect of preannotate) with their definitions. Reads the database, so aspects and tasks an "
        "admin added or edited are listed too."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--task", default="", help=f"Only this task: {', '.join(TASKS)} or one an admin added.")
        parser.add_argument("--names", action="store_true", help="Aspect names only, without definitions.")

    def handle(self, *args: object, **options: object) -> None:
        tasks = TaskType.objects.order_by("slug")
        if options["task"]:
            tasks = tasks.filter(slug=options["task"])
            if not tasks.exists():
                known = ", ".join(TaskType.objects.order_by("slug").values_list("slug", flat=True)) or "none"
                raise CommandError(f"unknown task {options['task']!r} (tasks: {known})")
        aspects: dict[int, list[Aspect]] = {}
        for aspect in Aspect.objects.filter(task__in=tasks).order_by("name"):
            aspects.setdefault(aspect.task_id, []).append(aspect)
        for task in tasks:
            self.stdout.write(self.style.MIGRATE_HEADING(f"{task.slug}") + f"  ({task.name})")
            self.stdout.write(_wrap(f"files: {FILE_KINDS.get(task.slug, task.description)}", "  "))
            names = [a.name for a in aspects.get(task.pk, [])]
            self.stdout.write(_wrap(f"aspects: {', '.join(names) or 'none yet (an admin adds them)'}", "  "))
            if not options["names"]:
                for aspect in aspects.get(task.pk, []):
                    self.stdout.write(_wrap(f"{aspect.name}: {aspect.definition}", "    ", "      "))
            self.stdout.write("")


def _wrap(text: str, indent: str, subsequent: str | None = None) -> str:
    return textwrap.fill(text, width=100, initial_indent=indent,
                         subsequent_indent=subsequent if subsequent is not None else indent + "  ")
