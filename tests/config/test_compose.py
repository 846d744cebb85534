"""compose.yaml, the documented multi-host layout, checked for structure: no image can be pulled where the suite
runs, so this reads the file as Compose would (anchors merged) and holds it to the production guide."""

from __future__ import annotations

import re
import shlex
from typing import Any

import pytest
import yaml

from config.env import READ
from tests.conftest import REPO

COMPOSE = REPO / "compose.yaml"
APP_ROLES = {"migrate": "migrate", "web1": "web", "web2": "web", "worker1": "worker", "worker2": "worker"}
# Read by scripts/serve.sh and config/gunicorn.py rather than by the settings.
SERVE_VARIABLES = {"HOST", "PORT", "WEB_CONCURRENCY", "GUNICORN_THREADS", "FORWARDED_ALLOW_IPS", "CELERY_CONCURRENCY"}


@pytest.fixture(scope="module")
def services() -> dict[str, dict[str, Any]]:
    return yaml.safe_load(COMPOSE.read_text())["services"]


def _command(service: dict[str, Any]) -> list[str]:
    command = service["command"]
    return shlex.split(command) if isinstance(command, str) else list(command)


def _healthcheck(service: dict[str, Any]) -> str:
    return " ".join(service["healthcheck"]["test"])


def test_compose_has_every_role_of_the_guide_as_a_service(services):
    assert set(services) == {"db", "redis", "llm", "proxy", *APP_ROLES}
    for name, role in APP_ROLES.items():
        assert _command(services[name])[:3] == ["bash", "scripts/serve.sh", role], name
    assert ["--queues", "spanjudge"] == _command(services["worker1"])[3:] == _command(services["worker2"])[3:]
    assert services["migrate"]["restart"] == "no"  # one-off, once per release


def test_compose_app_services_share_one_multihost_environment(services):
    envs = {name: services[name]["environment"] for name in APP_ROLES}
    common = set.intersection(*(set(env) for env in envs.values()))
    for name, env in envs.items():
        assert env["SPANJUDGE_MULTIHOST"] == "true", name
        assert env["SPANJUDGE_EXPORT_STORAGE"] in {"database", "s3"}, name  # `folder` is refused with several hosts
        assert env["DATABASE_URL"].startswith("postgres://") and "@db:5432/" in env["DATABASE_URL"], name
        assert env["CELERY_BROKER_URL"] == "redis://redis:6379/0", name
        assert env["OLLAMA_URL"] == "http://llm:11434", name
        assert "DJANGO_SECRET_KEY" in env and ":?" in env["DJANGO_SECRET_KEY"], name  # never a default key
        # Same values everywhere for what every host must agree on.
        for key in ("DJANGO_SECRET_KEY", "DATABASE_URL", "CELERY_BROKER_URL", "CELERY_QUEUE"):
            assert env[key] == envs["migrate"][key], (name, key)
        unknown = set(env) - set(READ) - SERVE_VARIABLES
        assert not unknown, f"{name} sets variables nothing reads: {unknown}"
    assert {"DJANGO_SECRET_KEY", "DATABASE_URL", "CELERY_BROKER_URL", "SPANJUDGE_MULTIHOST"} <= common
    for name in ("web1", "web2"):
        env = envs[name]
        assert env["HOST"] == "0.0.0.0" and env["PORT"] == "8000"
        assert env["DJANGO_SECURE_PROXY_SSL_HEADER"] == "true"  # behind the proxy, which sets X-Forwarded-Proto
        assert "localhost" in env["DJANGO_ALLOWED_HOSTS"].split(",")  # the health check's Host


def test_compose_health_checks_and_start_order(services):
    for name in ("web1", "web2"):
        assert "http://localhost:8000/healthz" in _healthcheck(services[name])
        assert services[name]["depends_on"]["migrate"]["condition"] == "service_completed_successfully"
    for name in ("worker1", "worker2"):
        check = _healthcheck(services[name])
        assert "celery -A config inspect ping -d celery@$$(hostname)" in check
        assert services[name]["depends_on"]["migrate"]["condition"] == "service_completed_successfully"
    assert services["migrate"]["depends_on"]["db"]["condition"] == "service_healthy"
    assert "pg_isready" in _healthcheck(services["db"])
    assert "redis-cli ping" in _healthcheck(services["redis"])
    for service in services.values():
        assert "healthcheck" in service or service is services["migrate"]


def test_compose_proxy_balances_the_web_hosts_on_healthz(services):
    caddyfile = yaml.safe_load(COMPOSE.read_text())["configs"]["caddyfile"]["content"]
    assert re.search(r"reverse_proxy web1:8000 web2:8000", caddyfile)
    assert "health_uri /healthz" in caddyfile
    assert set(services["proxy"]["depends_on"]) == {"web1", "web2"}
    # Only the proxy is published; the app, the database and the broker are reached on the compose network.
    published = {name for name, service in services.items() if service.get("ports")}
    assert published == {"proxy"}
