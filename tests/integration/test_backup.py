"""scripts/backup.sh + scripts/restore.sh: a dump restored into a fresh database has every row of every table."""

from __future__ import annotations

import os
import subprocess
import uuid
from pathlib import Path

import pytest
from django.db import connection

from annotator.models import Assignment, JudgmentEvent, SpanJudgment
from annotator.services.judgments import judgment_set
from tests.conftest import REPO
from tests.factories import build_campaign
from tests.integration.conftest import _database_url

pytestmark = pytest.mark.integration


def _counts(url: str) -> dict[str, int]:
    done = subprocess.run(["bash", "scripts/restore.sh", "--counts", url], cwd=REPO, capture_output=True, text=True,
                          check=True)
    return {name: int(n) for name, n in (line.split() for line in done.stdout.splitlines() if line.strip())}


def test_backup_restores_into_a_fresh_database_with_the_same_row_counts(transactional_db, make_user, tmp_path):
    if connection.vendor != "postgresql":
        pytest.fail("the backup test needs DATABASE_URL on PostgreSQL")
    ann = make_user("backed-up")
    built = build_campaign([ann], per_item=1)
    assignment = Assignment.objects.get(annotator=ann, item=built.items[0])
    for span in (built.spans["b1_family"], built.spans["a1_family"]):
        judgment_set(assignment=assignment, span=span, user=ann,
                     changes={"span_verdict": "error", "explanation_verdict": "correct", "comment": "kept ✓"})
    source = _database_url()
    before = _counts(source)
    assert before["annotator_spanjudgment"] == 2 and before["annotator_judgmentevent"] == 6

    dump = subprocess.run(["bash", "scripts/backup.sh", str(tmp_path)], cwd=REPO, capture_output=True, text=True,
                          env={**os.environ, "DATABASE_URL": source})
    assert dump.returncode == 0, dump.stderr
    dump_path = Path(dump.stdout.strip().splitlines()[-1])
    assert dump_path.exists() and dump_path.parent == tmp_path

    target = source.rsplit("/", 1)[0] + f"/restore_{uuid.uuid4().hex[:8]}"
    try:
        restored = subprocess.run(["bash", "scripts/restore.sh", str(dump_path), target], cwd=REPO,
                                  capture_output=True, text=True, env=dict(os.environ))
        assert restored.returncode == 0, restored.stderr
        after = _counts(target)
        assert after == before
        assert sum(after.values()) > 50  # the migrations' built-in rows and the campaign above, not empty tables
        # The restored judgments are the same rows, text included.
        rows = subprocess.run(["psql", "--dbname", target, "-tAc",
                               "SELECT count(*) FROM annotator_spanjudgment WHERE comment = 'kept ✓'"],
                              capture_output=True, text=True, check=True)
        assert rows.stdout.strip() == "2"
        # A second restore into an existing database is refused and changes nothing.
        again = subprocess.run(["bash", "scripts/restore.sh", str(dump_path), target], cwd=REPO,
                               capture_output=True, text=True, env=dict(os.environ))
        assert again.returncode == 3 and "exists" in again.stderr
        assert _counts(target) == before
    finally:
        name = target.rsplit("/", 1)[1]
        subprocess.run(["psql", "--dbname", source.rsplit("/", 1)[0] + "/postgres", "-c",
                        f'DROP DATABASE IF EXISTS "{name}"'], capture_output=True)
    assert SpanJudgment.objects.count() == 2 and JudgmentEvent.objects.count() == 6  # the source is untouched
