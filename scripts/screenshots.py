"""Make the screenshots of README.md and the docs of the item screen: a short document, a long one, and a phone.

Runs against a throw-away test database (made and dropped here) and Django's live server, with made-up data
from tests/ (no licensed text), driving Debian's chromium through Playwright like the browser tests:

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/spanjudge .venv/bin/python scripts/screenshots.py [OUTDIR]

Writes OUTDIR/item-short.png, item-long.png, item-phone.png and screenshot.png (OUTDIR defaults to docs/).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")  # Playwright's sync API runs an event loop here


def main(outdir: Path) -> None:
    import django

    django.setup()
    from django.contrib.staticfiles.handlers import StaticFilesHandler
    from django.test.runner import DiscoverRunner
    from django.test.testcases import LiveServerThread
    from django.test.utils import setup_test_environment
    from playwright.sync_api import sync_playwright

    from annotator.models import Assignment
    from annotator.services.judgments import judgment_set
    from tests.browser.conftest import CHROMIUM, CHROMIUM_ARGS
    from tests.browser.long_item import build_long_campaign
    from tests.factories import PASSWORD, build_campaign, user

    setup_test_environment()
    runner = DiscoverRunner(verbosity=0, interactive=False)
    old = runner.setup_databases()
    server = LiveServerThread("127.0.0.1", StaticFilesHandler, port=0)
    server.daemon = True
    server.start()
    server.is_ready.wait()
    url = f"http://127.0.0.1:{server.port}"
    try:
        short_user, long_user = user("expert1"), user("expert2")
        built = build_campaign([short_user], per_item=1, name="Restaurants (demo)")
        short = Assignment.objects.get(annotator=short_user, item=built.items[0])
        judgment_set(assignment=short, span=built.spans["b1_family"], user=short_user,
                     changes={"span_verdict": "error", "explanation_verdict": "correct"})
        build_long_campaign([long_user], name="Basketball summaries (made up)")
        long = Assignment.objects.get(annotator=long_user)
        outdir.mkdir(parents=True, exist_ok=True)
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            shots = [("item-short.png", short_user, short, 1400, 820, 1),
                     ("item-long.png", long_user, long, 1600, 900, 2),
                     ("item-phone.png", long_user, long, 390, 844, 0)]
            for name, who, assignment, width, height, presses in shots:
                context = browser.new_context(viewport={"width": width, "height": height})
                page = context.new_page()
                page.goto(f"{url}/accounts/login/")
                page.fill("#id_username", who.username)
                page.fill("#id_password", PASSWORD)
                page.keyboard.press("Enter")
                page.wait_for_url(f"{url}/")
                page.goto(f"{url}/work/{assignment.pk}/")
                page.locator("#errors .error-card.is-focus").wait_for()
                for _ in range(presses):
                    page.keyboard.press("j")
                page.wait_for_timeout(400)
                page.screenshot(path=str(outdir / name))
                if name == "item-short.png":
                    page.screenshot(path=str(outdir / "screenshot.png"))
                context.close()
                print(f"wrote {outdir / name}")
            browser.close()
    finally:
        server.terminate()
        runner.teardown_databases(old)


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "docs")
