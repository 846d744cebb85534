"""Drive Label Studio's own import and export code (run with the Python of a venv holding label-studio 1.23).

Label Studio pins its own Django and friends, so it lives in a separate virtualenv; this script runs there:
it sets Label Studio up on a SQLite file (migrated once and copied from a template beside it), creates a
project with our labeling config, imports our tasks through Label Studio's import API, exports the project
through its export API (a JSON snapshot, as the Export button makes it), and prints the export.

    VENV/bin/python tests/interop/labelstudio_driver.py WORKDIR CONFIG.xml TASKS.json TEMPLATE.sqlite3 [EMAIL...]

Each EMAIL becomes a Label Studio user of the project's organization (Label Studio refuses an imported
annotation whose `completed_by` is not one of its users).
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path


def main() -> int:
    work, config, tasks, template = (Path(a) for a in sys.argv[1:5])
    emails = sys.argv[5:]
    data = work / "ls-data"
    data.mkdir(parents=True, exist_ok=True)
    database = data / "label_studio.sqlite3"
    if template.exists():
        shutil.copy(template, database)
    os.environ.update(LABEL_STUDIO_BASE_DATA_DIR=str(data), DJANGO_DB="sqlite", DATABASE_NAME=str(database),
                      DJANGO_SETTINGS_MODULE="core.settings.label_studio", LOG_LEVEL="ERROR")
    import label_studio

    sys.path.insert(0, os.path.dirname(label_studio.__file__))
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0, interactive=False)
    if not template.exists():
        shutil.copy(database, template)
    from organizations.models import Organization
    from rest_framework.test import APIClient
    from users.models import User

    user = User.objects.create_user(email="researcher@example.org", password="unused-Passw0rd")
    org = Organization.create_organization(created_by=user, title="spanjudge interop")
    user.active_organization = org
    user.save()
    users = {}
    for email in emails:
        person = User.objects.create_user(email=email, password="unused-Passw0rd")
        org.add_user(person)
        person.active_organization = org
        person.save()
        users[email] = person.id
    client = APIClient()
    client.force_authenticate(user)
    project = client.post("/api/projects/", {"title": "interop", "label_config": config.read_text()}, format="json")
    assert project.status_code == 201, project.content
    pk = project.json()["id"]
    imported = client.post(f"/api/projects/{pk}/import?commit_to_project=true",
                           json.loads(tasks.read_text()), format="json")
    assert imported.status_code == 201, imported.content
    # the export the Data Manager's Export button makes: a snapshot with predictions in full
    snapshot = client.post(f"/api/projects/{pk}/exports/", {
        "serialization_options": {"predictions": {"only_id": False}, "drafts": {"only_id": True}},
        "annotation_filter_options": {"usual": True},
    }, format="json")
    assert snapshot.status_code == 201, snapshot.content
    exported = client.get(f"/api/projects/{pk}/exports/{snapshot.json()['id']}/download?exportType=JSON")
    assert exported.status_code == 200, exported.status_code
    body = b"".join(exported.streaming_content) if exported.streaming else exported.content
    print(json.dumps({"user_id": user.id, "users": users, "import": imported.json(), "export": json.loads(body)}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
