"""A new job kind is four files (tests/jobkind: models.py, its migration, jobs.py, its template): from them alone
it gets its Celery task, its admin, its page, its Cancel and Resume pages and API operations."""

from __future__ import annotations

import sys
import types
from collections.abc import Iterator

import pytest
from celery import current_app
from django.contrib import admin
from django.core.management import call_command
from django.test.utils import modify_settings
from django.urls import include, path, reverse
from ninja.testing import TestClient

from jobs import kinds
from jobs.admin import KindAdmin
from jobs.api import job_actions_router
from jobs.kinds import JobKind, job_kind
from jobs.models import JobStatus
from jobs.views import job_urlpatterns
from jobs.worker import job_task

FILES = ("models.py", "migrations/0001_initial.py", "jobs.py", "templates/jobkind/tally.html")


@pytest.fixture
def tally_kind(db) -> Iterator[JobKind]:
    """tests.jobkind installed for one test, its table made by its own migration; nothing of it is left after."""
    declared = sys.modules.get("tests.jobkind.jobs")
    if declared is not None:  # an earlier test imported it: declared again, as its first import did
        kinds._KINDS[declared.KIND.model] = declared.KIND
    with modify_settings(INSTALLED_APPS={"append": "tests.jobkind"}):
        from tests.jobkind.models import Tally

        call_command("migrate", "jobkind", verbosity=0)
        try:
            yield job_kind(Tally)
        finally:
            kinds._KINDS.pop(Tally, None)
            if admin.site.is_registered(Tally):
                admin.site.unregister(Tally)
            current_app.tasks.pop(Tally.task_name, None)


def test_the_fixture_kind_is_declared_in_four_files_and_nothing_else():
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent / "jobkind"
    written = sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file() and "__pycache__" not in p.parts
                     and p.name != "__init__.py")
    assert written == sorted(FILES)


def test_its_migration_matches_its_model(tally_kind):
    call_command("makemigrations", "jobkind", "--check", "--dry-run", verbosity=0)


def test_its_task_is_named_by_the_kind_and_runs_the_job(tally_kind):
    model = tally_kind.model
    assert model.task_name == "jobkind.Tally"
    task = job_task(tally_kind)
    assert model.task_name in current_app.tasks and task.name == model.task_name and task.job_model is model
    job = model.objects.create(total=3)
    assert task(job.pk) == JobStatus.DONE
    assert model.objects.get(pk=job.pk).done_total() == (3, 3)


def test_it_gets_the_lifecycle_admin_with_cancel_and_resume(tally_kind):
    assert isinstance(admin.site._registry[tally_kind.model], KindAdmin)


def test_its_api_operations_are_generated_with_the_declared_path_and_ids(tally_kind, admin_user):
    router = job_actions_router([tally_kind])
    operations = {(method, route, op.operation_id, tuple(op.tags))
                  for route, view in router.path_operations.items() for op in view.operations for method in op.methods}
    assert operations == {
        ("POST", "/tallies/{tally_id}/cancel", "cancel_tally", ("tallies",)),
        ("POST", "/tallies/{tally_id}/resume", "resume_tally", ("tallies",)),
    }
    job = tally_kind.model.objects.create(total=2)
    client = TestClient(router)
    answer = client.post(f"/tallies/{job.pk}/cancel", user=admin_user)
    assert answer.status_code == 200 and answer.json()["status"] == JobStatus.CANCELLED
    again = client.post(f"/tallies/{job.pk}/resume", user=admin_user)
    assert again.status_code == 409 and "cancelled" in again.json()["detail"]


def test_its_page_and_page_actions_are_served_at_the_declared_urls(tally_kind, admin_client, settings):
    urls = types.ModuleType("tally_urls")
    urls.urlpatterns = [  # type: ignore[attr-defined]
        path("admin/", admin.site.urls),  # built now, so the kind's admin is in it
        path("", include(job_urlpatterns([tally_kind]))),
        path("", include("config.urls")),
    ]
    settings.ROOT_URLCONF = urls
    job = tally_kind.model.objects.create(total=2)
    assert reverse("tally_cancel", kwargs={"pk": job.pk}) == f"/tallies/{job.pk}/cancel/"
    assert reverse("tally_resume", kwargs={"pk": job.pk}) == f"/tallies/{job.pk}/resume/"
    page = admin_client.get(f"/tallies/{job.pk}/")
    assert page.status_code == 200 and b'id="cancel-tally"' in page.content
    done = admin_client.post(f"/tallies/{job.pk}/cancel/")
    assert done.status_code == 302 and done["Location"] == f"/tallies/{job.pk}/"
    assert tally_kind.model.objects.get(pk=job.pk).status == JobStatus.CANCELLED
    changelist = admin_client.get(reverse("admin:jobkind_tally_changelist"))
    assert changelist.status_code == 200
