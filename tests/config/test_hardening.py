"""Production settings refuse a missing key, pass `check --deploy`, throttle logins and reject weak passwords."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile

import pytest
from django.contrib.auth.password_validation import validate_password
from django.core.exceptions import ValidationError

from accounts.models import User
from tests.conftest import REPO

# The production environment docs/guides/production.md documents, with example host names.
PRODUCTION_ENV = {
    "DJANGO_DEBUG": "false",
    "DJANGO_SECRET_KEY": "k3Jq9vX2-example-only-4rT8mZpL0wYc7bN1sD5fG6hH2jK9lQ3eR8tY0uI4oP7aS1dF",
    "DJANGO_ALLOWED_HOSTS": "spanjudge.example.org",
    "DJANGO_CSRF_TRUSTED_ORIGINS": "https://spanjudge.example.org",
    "DJANGO_SECURE_SSL_REDIRECT": "true",
    "DJANGO_SECURE_HSTS_SECONDS": "31536000",
    "DJANGO_SECURE_HSTS_INCLUDE_SUBDOMAINS": "true",
    "DJANGO_SECURE_HSTS_PRELOAD": "true",
    "DJANGO_SECURE_COOKIES": "true",
    "DJANGO_SECURE_PROXY_SSL_HEADER": "true",
}


def _manage(*args: str, env: dict[str, str], var_dir: str | None = None) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith(("DJANGO_SECURE", "DJANGO_SECRET"))}
    for name in ("DJANGO_DEBUG", "DJANGO_ALLOW_ASYNC_UNSAFE"):  # the browser tests set the latter for themselves
        base.pop(name, None)
    # A var folder of its own: the checkout's var/local.env (written by run.sh) must not supply a key here.
    with tempfile.TemporaryDirectory() as empty:
        base["SPANJUDGE_VAR_DIR"] = var_dir or empty
        return subprocess.run([sys.executable, "manage.py", *args], cwd=REPO, env={**base, **env},
                              capture_output=True, text=True, timeout=120)


def test_check_deploy_is_clean_with_the_documented_production_environment():
    done = _manage("check", "--deploy", "--fail-level", "WARNING", env=PRODUCTION_ENV)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "no issues" in done.stdout


def test_check_deploy_warns_without_the_https_switches():
    done = _manage("check", "--deploy", "--fail-level", "WARNING",
                   env={"DJANGO_DEBUG": "false", "DJANGO_SECRET_KEY": PRODUCTION_ENV["DJANGO_SECRET_KEY"]})
    assert done.returncode != 0
    for warning in ("security.W004", "security.W008", "security.W012", "security.W016"):
        assert warning in done.stderr + done.stdout


def test_settings_refuse_to_start_without_secret_key_outside_debug():
    for command in ("check", "migrate", "makemigrations"):
        done = _manage(command, env={"DJANGO_DEBUG": "false"})
        assert done.returncode != 0
        # The refusal itself, not Django's deferred "Models aren't loaded yet".
        assert "spanjudge cannot start: DJANGO_SECRET_KEY is not set" in done.stderr, done.stderr[-500:]
        assert "Traceback" not in done.stderr
    demo = _manage("check", env={"DJANGO_DEBUG": "true"})  # the demo keeps its built-in development key
    assert demo.returncode == 0, demo.stderr


def test_settings_refuse_a_short_secret_key_outside_debug_only():
    short = "k3Jq9vX2-example-only-4rT8mZpL0wYc7bN1sD5fG6hH2jK"  # 49 characters
    done = _manage("check", env={"DJANGO_DEBUG": "false", "DJANGO_SECRET_KEY": short})
    assert done.returncode != 0
    assert "DJANGO_SECRET_KEY is 49 characters long" in done.stderr, done.stderr[-500:]
    assert "Traceback" not in done.stderr
    fifty = _manage("check", env={"DJANGO_DEBUG": "false", "DJANGO_SECRET_KEY": short + "Z"})
    assert fifty.returncode == 0, fifty.stderr[-500:]
    debug = _manage("check", env={"DJANGO_DEBUG": "true", "DJANGO_SECRET_KEY": "short"})
    assert debug.returncode == 0, debug.stderr[-500:]
def test_local_env_written_by_run_sh_supplies_the_key_and_the_environment_wins(tmp_path):
    """A second terminal needs no exported variable: scripts/local_env.sh (run by run.sh) writes the key once."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("DJANGO_")}
    written = subprocess.run(["bash", "scripts/local_env.sh"], cwd=REPO, env={**env, "PWD": str(REPO)},
                             capture_output=True, text=True, timeout=60)
    assert written.returncode == 0, written.stderr
    local = REPO / "var" / "local.env"
    lines = local.read_text().splitlines()
    key = next(line.split("=", 1)[1] for line in lines if line.startswith("DJANGO_SECRET_KEY="))
    assert len(key) >= 50 and oct(local.stat().st_mode & 0o777) == "0o600"
    (tmp_path / "local.env").write_text(local.read_text())
    done = _manage("shell", "-c", "from django.conf import settings; print(settings.SECRET_KEY)",
                   env={"DJANGO_DEBUG": "false"}, var_dir=str(tmp_path))
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == key
    exported = _manage("shell", "-c", "from django.conf import settings; print(settings.SECRET_KEY)",
                       env={"DJANGO_DEBUG": "false", "DJANGO_SECRET_KEY": "x" * 60}, var_dir=str(tmp_path))
    assert exported.stdout.strip().splitlines()[-1] == "x" * 60
    (tmp_path / "local.env").write_text("not a setting\n")
    broken = _manage("check", env={"DJANGO_DEBUG": "false"}, var_dir=str(tmp_path))
    assert broken.returncode != 0 and "local.env, line 1: expected NAME=value" in broken.stderr


@pytest.mark.django_db
def test_login_locked_after_wrong_passwords_even_with_the_right_one(client, make_user):
    make_user("victim")  # password pass-1234 (tests/factories.py)
    for _ in range(50):
        response = client.post("/accounts/login/", {"username": "victim", "password": "wrong-guess"})
        assert response.status_code in (200, 429)
    response = client.post("/accounts/login/", {"username": "victim", "password": "pass-1234"})
    assert response.status_code == 429
    assert "_auth_user_id" not in client.session
    # Another account from the same address is not locked by the attack on this one.
    make_user("bystander")
    response = client.post("/accounts/login/", {"username": "bystander", "password": "pass-1234"})
    assert response.status_code == 302 and client.session["_auth_user_id"]


@pytest.mark.django_db
def test_login_succeeds_after_a_few_wrong_passwords(client, make_user):
    make_user("typo")
    for _ in range(3):
        client.post("/accounts/login/", {"username": "typo", "password": "wrong"})
    response = client.post("/accounts/login/", {"username": "typo", "password": "pass-1234"})
    assert response.status_code == 302


@pytest.mark.parametrize("weak", ["12345678", "password123", "1234567890", "short1!"])
def test_standard_password_validators_refuse_weak_passwords(weak):
    with pytest.raises(ValidationError):
        validate_password(weak)


@pytest.mark.django_db
def test_admin_refuses_a_new_user_with_a_weak_password(client):
    client.force_login(User.objects.create_superuser("root", password="a-long-passphrase-2026", role="admin"))
    response = client.post("/admin/accounts/user/add/", {
        "username": "newbie", "password1": "12345678", "password2": "12345678", "usable_password": "true",
        "role": "annotator",
    })
    assert response.status_code == 200
    assert not User.objects.filter(username="newbie").exists()
    assert "too common" in response.content.decode() or "entirely numeric" in response.content.decode()
