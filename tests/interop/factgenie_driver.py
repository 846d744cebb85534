"""Drive the real factgenie 1.2.1 over a folder of campaigns (run as a script, in its own process).

factgenie keeps its campaigns, data and config inside its package; this script points those paths at a
scratch folder before factgenie's modules read them, so the shared environment is never written to.

    python tests/interop/factgenie_driver.py HOME COMMANDS.json  ->  prints one JSON object of results
"""

from __future__ import annotations

import contextlib
import io
import json
import shutil
import sys
from pathlib import Path


def _point_at(home: Path) -> None:
    import factgenie

    factgenie.CAMPAIGN_DIR = home / "campaigns"
    factgenie.INPUT_DIR = home / "data" / "inputs"
    factgenie.OUTPUT_DIR = home / "data" / "outputs"
    factgenie.DATASET_CONFIG_PATH = home / "data" / "datasets.yml"
    factgenie.MAIN_CONFIG_PATH = home / "config.yml"
    for folder in (factgenie.INPUT_DIR, factgenie.OUTPUT_DIR):
        folder.mkdir(parents=True, exist_ok=True)
    shutil.copy(factgenie.MAIN_CONFIG_TEMPLATE_PATH, factgenie.MAIN_CONFIG_PATH)


def main() -> int:
    home, commands = Path(sys.argv[1]), json.loads(Path(sys.argv[2]).read_text())
    _point_at(home)
    from click.testing import CliRunner
    from factgenie.bin.run import create_app, run

    results: dict[str, object] = {}
    runner = CliRunner()
    for name, args in commands.get("cli", {}).items():
        outcome = runner.invoke(run, args, catch_exceptions=True)
        results[name] = {"exit": outcome.exit_code, "output": outcome.output,
                         "error": repr(outcome.exception) if outcome.exception else None}
    if commands.get("pages"):
        with contextlib.redirect_stdout(io.StringIO()):
            app = create_app()
        client = app.test_client()
        results["pages"] = {path: client.get(path).status_code for path in commands["pages"]}
        app.db["scheduler"].shutdown(wait=False)
    print(json.dumps(results))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
