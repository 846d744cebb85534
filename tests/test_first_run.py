"""What a newcomer meets first: run.sh on a taken port, htmx served by django-htmx, the demo's names printed."""

from __future__ import annotations

import io
import os
import socket
import subprocess

import pytest
from django.core.management import call_command

from tests.conftest import REPO


def test_run_sh_refuses_a_taken_port_before_doing_anything():
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = subprocess.run(["bash", "scripts/run.sh"], cwd=REPO, env=dict(os.environ, PORT=str(port)),
                                capture_output=True, text=True, timeout=60)
    assert result.returncode == 1
    assert f"Port {port} on 127.0.0.1 is taken" in result.stderr
    assert f"PORT={port + 1} bash scripts/run.sh" in result.stderr
    # No banner, no set-up, no migration: it stopped first.
    assert result.stdout == ""


def test_run_sh_documents_its_variables_and_needs_no_npm():
    run = (REPO / "scripts" / "run.sh").read_text()
    setup = (REPO / "scripts" / "setup.sh").read_text()
    assert all(f"#   {name}" in run for name in ("HOST", "PORT", "PYTHON"))
    assert "npm" not in setup and "nodejs" not in setup and "static/vendor" not in setup


@pytest.mark.django_db
def test_pages_load_htmx_from_django_htmx_and_it_is_served(client):
    page = client.get("/accounts/login/").content.decode()
    assert '<script src="/static/django_htmx/htmx-2.min.js" defer></script>' in page
    assert "vendor/" not in page
    assert not (REPO / "static" / "vendor").exists()  # no committed copy beside the one django-htmx serves
    script = b"".join(client.get("/static/django_htmx/htmx-2.min.js").streaming_content)
    assert b'version:"2.' in script  # htmx 2, the major version the templates are written for


@pytest.mark.django_db
def test_load_demo_prints_the_names_the_cli_needs_every_time():
    for _ in range(2):  # the first load and every later start of run.sh
        out = io.StringIO()
        call_command("load_demo", stdout=out)
        assert 'Demo dataset:  "Demo: restaurants (data-to-text)"' in out.getvalue()
        assert 'Demo campaign: "Demo campaign: restaurant accuracy"' in out.getvalue()
    assert "already loaded" in out.getvalue()
