"""Export files in a storage every host shares: database rows read chunk by chunk, or an S3-compatible bucket;
a retention deletes old ones; a file written by one process downloads from another with a var folder of its own."""

from __future__ import annotations

import json
import math
import os
import socket
import subprocess
import sys
from datetime import timedelta

import pytest
from django.db import connection
from django.http import FileResponse
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from analytics.exports.jobs import export_file, export_files_expire, stored_name
from analytics.exports.storage import DatabaseStorage, export_storage
from analytics.models import ExportFile, ExportFileChunk, ExportJob
from jobs.kinds import job_execute
from tests import factories as make
from tests.conftest import REPO
from tests.integration.conftest import _database_url

TEXT = "Grüße, 😀 and plain ASCII; " * 3  # characters outside the BMP and a size that is no multiple of the chunk


def test_database_storage_keeps_a_file_in_chunks_and_reads_one_per_read(db):
    from django.core.files.base import ContentFile

    storage = DatabaseStorage(chunk_bytes=16)
    data = TEXT.encode("utf-8")
    name = storage.save("7/notes.txt", ContentFile(data))
    assert name == "7/notes.txt" and storage.size(name) == len(data) and storage.exists(name)
    assert ExportFileChunk.objects.filter(file__name=name).count() == math.ceil(len(data) / 16)
    with storage.open(name) as file, CaptureQueriesContext(connection) as queries:
        first = file.read(16)
        second = file.read(16)
    assert first + second == data[:32]
    assert len(queries) == 2  # one chunk per read: memory holds a chunk, never the file
    with storage.open(name) as file:
        assert file.read() == data
        file.seek(5)
        assert file.read(3) == data[5:8]
    response = FileResponse(storage.open(name), as_attachment=True, filename="notes.txt")
    assert int(response["Content-Length"]) == len(data)  # known before the first byte
    assert b"".join(response.streaming_content) == data
    storage.save(name, ContentFile(b"shorter"))  # saved again: replaced under the same name
    assert storage.open(name).read() == b"shorter" and ExportFile.objects.filter(name=name).count() == 1
    assert storage.listdir("7") == ([], ["notes.txt"])
    storage.delete(name)
    assert not storage.exists(name) and not ExportFileChunk.objects.exists()


def test_export_job_files_are_in_the_database_by_default_and_download_whole(study, client, settings, tmp_path):
    settings.EXPORT_DIR = tmp_path / "exports"  # the folder storage's place: left empty by the default
    job = ExportJob.objects.create(dataset=study.dataset, format="jsonl", total=study.dataset.items.count())
    assert job_execute(ExportJob, job.pk) == "done"
    job.refresh_from_db()
    assert isinstance(export_storage(), DatabaseStorage)
    assert sorted(ExportFile.objects.values_list("name", flat=True)) == sorted(stored_name(job, n) for n in job.files)
    assert not settings.EXPORT_DIR.exists()
    client.force_login(make.user("rosa", role="researcher"))
    download = client.get(f"/analytics/exports/{job.pk}/files/{job.files[0]}")
    body = b"".join(download.streaming_content)
    assert download.status_code == 200 and int(download["Content-Length"]) == len(body)
    expected = set(study.dataset.items.values_list("external_id", flat=True))
    assert {json.loads(line)["item_id"] for line in body.decode().splitlines()} == expected


def test_retention_deletes_old_export_files_and_says_so_on_the_job(study, client, settings):
    settings.EXPORT_RETENTION_DAYS = 30
    old, recent = (ExportJob.objects.create(dataset=study.dataset, format="csv") for _ in range(2))
    for job in (old, recent):
        assert job_execute(ExportJob, job.pk) == "done"
    ExportJob.objects.filter(pk=old.pk).update(finished_at=timezone.now() - timedelta(days=31))
    old.refresh_from_db()
    old_names = [stored_name(old, n) for n in old.files]
    assert export_files_expire() == [old.pk]
    old.refresh_from_db()
    recent.refresh_from_db()
    assert old.files == [] and "SPANJUDGE_EXPORT_RETENTION_DAYS" in old.message
    assert not ExportFile.objects.filter(name__in=old_names).exists()
    assert recent.files and all(export_file(recent, n) is not None for n in recent.files)
    client.force_login(make.user("rosa", role="researcher"))
    gone = client.get(f"/analytics/exports/{old.pk}/files/{old_names[0].split('/', 1)[1]}")
    assert gone.status_code == 404
    orphan = ExportJob.objects.create(dataset=make.dataset("deleted later"), format="jsonl")
    assert job_execute(ExportJob, orphan.pk) == "done"
    orphan_names = [stored_name(orphan, n) for n in ExportJob.objects.get(pk=orphan.pk).files]
    orphan.dataset.delete()  # takes its export jobs with it, not their stored files
    assert ExportFile.objects.filter(name__in=orphan_names).count() == len(orphan_names)
    export_files_expire()
    assert not ExportFile.objects.filter(name__in=orphan_names).exists()
    assert all(export_file(recent, n) is not None for n in recent.files)
    settings.EXPORT_RETENTION_DAYS = 0  # keep for ever
    ExportJob.objects.filter(pk=recent.pk).update(finished_at=timezone.now() - timedelta(days=3650))
    assert export_files_expire() == []
    assert ExportJob.objects.get(pk=recent.pk).files == recent.files


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _django(code: str, var_dir, **env: str) -> str:
    """Run `code` in a fresh process on the test database with `var_dir` as its SPANJUDGE_VAR_DIR; its stdout."""
    environ = {k: v for k, v in os.environ.items() if k not in ("SPANJUDGE_EXPORT_DIR", "SPANJUDGE_EXPORT_STORAGE")}
    environ.update(DATABASE_URL=_database_url(), SPANJUDGE_VAR_DIR=str(var_dir), DJANGO_DEBUG="true",
                   DATABASE_CONN_MAX_AGE="0", **env)
    done = subprocess.run([sys.executable, "manage.py", "shell", "-c", code], cwd=REPO, env=environ,
                          capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


BUCKET = "spanjudge-exports"


@pytest.fixture
def moto_s3(monkeypatch):
    """A stand-in for S3: moto's server mode on a free loopback port, with a bucket and throwaway credentials in
    the environment (where boto3 reads them, in this process and in the ones it starts)."""
    boto3 = pytest.importorskip("boto3")
    server_module = pytest.importorskip("moto.server")
    port = _free_port()
    server = server_module.ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    for name, value in {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing",
                        "AWS_DEFAULT_REGION": "us-east-1"}.items():
        monkeypatch.setenv(name, value)
    url = f"http://127.0.0.1:{port}"
    client = boto3.client("s3", endpoint_url=url, region_name="us-east-1")
    client.create_bucket(Bucket=BUCKET)
    yield url, client
    server.stop()


DOWNLOAD = (
    "import json; from django.test import Client; from accounts.models import User\n"
    "c = Client(); c.force_login(User.objects.get(pk={user}))\n"
    "r = c.get('/analytics/exports/{job}/files/{name}')\n"
    "body = b''.join(r.streaming_content)\n"
    "print(json.dumps({{'status': r.status_code, 'length': r['Content-Length'], 'body': body.decode()}}))"
)


@pytest.mark.parametrize("storage", ["database", "s3"])
def test_an_export_written_by_one_process_downloads_from_another_with_a_different_var_dir(storage, request,
                                                                                           transactional_db,
                                                                                           tmp_path):
    """The worker host and the web host share the database (and the bucket) and no folder."""
    env = {"SPANJUDGE_EXPORT_STORAGE": storage}
    if storage == "s3":
        url, s3 = request.getfixturevalue("moto_s3")
        env.update(SPANJUDGE_EXPORT_S3_BUCKET=BUCKET, SPANJUDGE_EXPORT_S3_ENDPOINT_URL=url,
                   SPANJUDGE_EXPORT_S3_REGION="us-east-1", SPANJUDGE_EXPORT_S3_PREFIX="lab/exports")
    dataset = make.dataset("two hosts", items=[{"external_id": f"x{i}", "output": f"text {i}"} for i in range(30)])
    researcher = make.user("rosa", role="researcher")
    job = ExportJob.objects.create(dataset=dataset, format="jsonl", total=30)
    worker_var, web_var = tmp_path / "worker-var", tmp_path / "web-var"
    written = _django(
        "from analytics.models import ExportJob; from jobs.kinds import job_execute; "
        f"print(job_execute(ExportJob, {job.pk}))", worker_var, **env)
    assert written.strip().splitlines()[-1] == "done"
    job.refresh_from_db()
    served = _django(DOWNLOAD.format(user=researcher.pk, job=job.pk, name=job.files[0]), web_var, **env)
    answer = json.loads(served.strip().splitlines()[-1])
    assert answer["status"] == 200 and int(answer["length"]) == len(answer["body"].encode())
    assert [json.loads(line)["item_id"] for line in answer["body"].splitlines()] == [f"x{i}" for i in range(30)]
    if storage == "s3":
        keys = sorted(o["Key"] for o in s3.list_objects_v2(Bucket=BUCKET)["Contents"])
        assert keys == sorted(f"lab/exports/{job.pk}/{name}" for name in job.files)
        stored = s3.get_object(Bucket=BUCKET, Key=f"lab/exports/{job.pk}/{job.files[0]}")["Body"].read()
        assert stored == answer["body"].encode() and not ExportFile.objects.exists()
    else:
        assert sorted(ExportFile.objects.values_list("name", flat=True)) == [f"{job.pk}/{n}" for n in sorted(job.files)]
    # Neither host kept the files in its var folder: the worker wrote them in a temporary folder it removed.
    assert not (worker_var / "exports").exists() and not (web_var / "exports").exists()


def test_the_folder_storage_writes_into_the_export_folder_of_this_host(transactional_db, tmp_path):
    dataset = make.dataset("one host", items=[{"external_id": "only", "output": "text"}])
    researcher = make.user("rosa", role="researcher")
    job = ExportJob.objects.create(dataset=dataset, format="csv", total=1)
    folder = tmp_path / "shared-exports"
    env = {"SPANJUDGE_EXPORT_STORAGE": "folder", "SPANJUDGE_EXPORT_DIR": str(folder)}
    _django("from analytics.models import ExportJob; from jobs.kinds import job_execute; "
            f"job_execute(ExportJob, {job.pk})", tmp_path / "var", **env)
    job.refresh_from_db()
    assert sorted(p.name for p in (folder / str(job.pk)).iterdir()) == sorted(job.files)
    served = _django(DOWNLOAD.format(user=researcher.pk, job=job.pk, name=job.files[0]), tmp_path / "var", **env)
    answer = json.loads(served.strip().splitlines()[-1])
    assert answer["status"] == 200 and answer["body"].encode() == (folder / str(job.pk) / job.files[0]).read_bytes()
    assert not ExportFile.objects.exists()


def test_s3_storage_without_a_bucket_refuses_to_start_naming_the_setting(tmp_path):
    environ = {k: v for k, v in os.environ.items() if not k.startswith("SPANJUDGE_")}
    environ.update(SPANJUDGE_VAR_DIR=str(tmp_path), DJANGO_DEBUG="true", SPANJUDGE_EXPORT_STORAGE="s3")
    done = subprocess.run([sys.executable, "manage.py", "check"], cwd=REPO, env=environ, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode != 0 and "SPANJUDGE_EXPORT_S3_BUCKET" in done.stderr, done.stderr[-2000:]
