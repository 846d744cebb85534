"""GPTScore's server goes through the same allowlist as every LLM server, and errors never repeat its answer.

A listener on loopback records every connection: with the production allowlist (`strict_allowlist`) a job
naming it through the page, the API or `--gptscore-url` is refused and nothing ever reaches it."""

from __future__ import annotations

import http.server
import json
import socket
import threading

import pytest
from django.core.management import CommandError, call_command
from django.test import Client

from accounts.services.tokens import token_create
from comparison.models import ComparisonJob
from comparison.services.jobs import comparison_create
from errors import UserError

pytestmark = pytest.mark.django_db


class Listener:
    """A TCP listener on loopback that records each connection it accepts (and answers nothing)."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.sock.settimeout(0.2)
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}"
        self.reached: list[bytes] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            with conn:
                conn.settimeout(0.5)
                try:
                    self.reached.append(conn.recv(4096) or b"<connected>")
                except OSError:
                    self.reached.append(b"<connected>")

    def close(self) -> None:
        self._stop.set()
        self._thread.join(2)
        self.sock.close()


@pytest.fixture
def listener():
    made = Listener()
    yield made
    made.close()


@pytest.mark.strict_allowlist
def test_gptscore_url_outside_the_allowlist_reaches_nothing_from_page_api_or_command(listener, make_user, client,
                                                                                     settings, summaries):
    settings.GPTSCORE_URL = ""
    data = summaries
    admin = make_user("root", role="admin")
    target = f"{listener.url}/secret/path?q=1"

    with pytest.raises(UserError, match="not an allowed GPTScore server"):
        comparison_create(dataset=data, metrics="gptscore:m", gptscore_url=target)

    api = Client().post("/api/comparisons", data=json.dumps({"dataset": "sums", "metrics": ["gptscore:m"],
                                                              "gptscore_url": target}),
                        content_type="application/json", HTTP_AUTHORIZATION=f"Bearer {token_create(user=admin)}")
    assert api.status_code == 422 and "not an allowed GPTScore server" in api.json()["detail"]

    client.force_login(admin)
    page = client.post("/comparisons/new/", {"dataset": data.name, "metrics": "gptscore:m", "gptscore_url": target})
    assert page.status_code == 200 and b"not an allowed GPTScore server" in page.content

    with pytest.raises(CommandError, match="not an allowed GPTScore server"):
        call_command("compare_metrics", "--dataset", "sums", "--metrics", "gptscore:m", "--gptscore-url", target)

    assert listener.reached == []
    assert not ComparisonJob.objects.exists()


@pytest.mark.strict_allowlist
def test_gptscore_url_of_the_settings_is_allowed(settings):
    from evaluation.runs.launch import gptscore_server

    settings.GPTSCORE_URL = "http://scorer.internal:8000"
    assert gptscore_server("http://scorer.internal:8000/").url == "http://scorer.internal:8000"
    assert gptscore_server("openai+http://scorer.internal:8000").url == "http://scorer.internal:8000"


class _Refusing(http.server.BaseHTTPRequestHandler):
    def do_GET(self):  # noqa: N802 - the handler's required name
        body = b"SECRET-INTERNAL-BODY: admin panel"
        self.send_response(403)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


def test_an_allowed_server_error_names_url_and_status_never_the_body(summaries):
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Refusing)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    url = f"http://127.0.0.1:{server.server_address[1]}"
    data = summaries
    try:
        with pytest.raises(UserError) as caught:
            comparison_create(dataset=data, metrics="gptscore:m", gptscore_url=url)
    finally:
        server.shutdown()
        server.server_close()
    assert url in str(caught.value) and "HTTP 403" in str(caught.value)
    assert "SECRET" not in str(caught.value)
