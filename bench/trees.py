"""What the load benches share to serve the floor (bench/floor.py) and to compare two trees in one session.

`floor_shim` writes a directory that, put first on a server's path, serves the floor's URLs in front of the
project's and the timed WSGI application, whichever tree the server runs. `alternate` runs a bench script on
the tree of a git ref and on this one, in alternating runs on fresh tables, each writing its figures as JSON,
and prints both trees' figures side by side: the machine's load drifts, so runs of one tree in a row would
compare moments, not code. The bench script reads the tree to run from `BENCH_TREE`.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

HERE = Path(__file__).resolve().parent
TREE = Path(os.environ.get("BENCH_TREE") or HERE.parent)
"""The tree whose code the bench builds with and serves: this checkout, or another one under comparison."""


def floor_shim(var_dir: Path) -> Path:
    """A directory with the floor (as `floor`), settings that put its URLs in front of the project's
    (`floor_settings`) and the timed WSGI application (`floor_wsgi:application`)."""
    shim = var_dir / "floor_shim"
    shim.mkdir(parents=True, exist_ok=True)
    (shim / "floor.py").write_text((HERE / "floor.py").read_text())
    (shim / "floor_settings.py").write_text("from config.settings import *  # noqa: F403\n"
                                            'ROOT_URLCONF = "floor_urlconf"\n')
    (shim / "floor_urlconf.py").write_text('from floor import floor_urls\n\nurlpatterns = floor_urls("config.urls")\n')
    (shim / "floor_wsgi.py").write_text((HERE / "timed_wsgi.py").read_text())
    return shim


def server_env(var_dir: Path, **extra: str) -> dict[str, str]:
    """The environment of a server that serves TREE with the floor in front."""
    path = [str(floor_shim(var_dir)), str(TREE), os.environ.get("PYTHONPATH", "")]
    return dict(os.environ, DJANGO_SETTINGS_MODULE="floor_settings", PYTHONPATH=os.pathsep.join(path), **extra)


def without_compare(argv: Sequence[str]) -> list[str]:
    """The command line without `--compare REF` / `--compare=REF`, for the runs `alternate` makes."""
    kept: list[str] = []
    skip = False
    for arg in argv:
        if skip:
            skip = False
        elif arg == "--compare":
            skip = True
        elif not arg.startswith("--compare="):
            kept.append(arg)
    return kept


def alternate(script: Path, argv: Sequence[str], ref: str, rounds: int, keys: Sequence[str]) -> None:
    """Run `script` with `argv` on the tree of `ref` and on this one, alternating, `rounds` runs each; print
    each tree's `keys` from every run."""
    tree = Path(tempfile.mkdtemp(prefix="bench_tree_"))
    archive = subprocess.run(["git", "-C", str(HERE.parent), "archive", ref], check=True, capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(tree)], input=archive, check=True)
    runs: dict[str, list[dict]] = {ref: [], "this tree": []}
    for round_ in range(rounds):
        for label, root in ((ref, tree), ("this tree", HERE.parent)):
            out = tree.parent / f"{tree.name}-{len(runs[label])}-{'ref' if root == tree else 'this'}.json"
            print(f"\n==== run {round_ + 1} of {rounds}: {label} ({root})", flush=True)
            subprocess.run([sys.executable, str(script), *without_compare(argv), "--json", str(out)],
                           env=dict(os.environ, BENCH_TREE=str(root)), check=True)
            runs[label].append(json.loads(out.read_text()))
    print(f"\n{'each run, in order':26}" + "".join(f"{label[:26]:>28}" for label in runs))
    for key in keys:
        cells = [" / ".join(_cell(run.get(key)) for run in done) for done in runs.values()]
        print(f"{key:26}" + "".join(f"{cell:>28}" for cell in cells))


def _cell(value: object) -> str:
    if isinstance(value, float):
        return f"{value:.2f}" if abs(value) < 10 else f"{value:.1f}"
    return "-" if value is None else str(value)
