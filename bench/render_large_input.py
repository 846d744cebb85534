"""Benchmark: opening an item whose input holds one huge structured value (time and peak memory).

Builds a RotoWire-like input of about 6 MB: a JSON object whose `box_score` is a Python-repr string of player
rows (the shape RotoWire files carry), then renders it the way the item page does (`render_inputs`), twice,
in a fresh child process so that its peak RSS is the rendering's own. Prints time and peak RSS beside the
process baseline and the bound (an item page should open in well under a second and 300 MB).

    python bench/render_large_input.py [--mb 6]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BOUND_MB = 300
BOUND_S = 1.0

CHILD = r"""
import json, resource, sys, time
sys.path.insert(0, sys.argv[1])
from annotator.rendering import render_inputs
inputs = json.loads(open(sys.argv[2], encoding="utf-8").read())
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
t0 = time.perf_counter(); views = render_inputs(inputs); first = time.perf_counter() - t0
t0 = time.perf_counter(); render_inputs(inputs); second = time.perf_counter() - t0
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps({"first": first, "second": second, "base": base, "peak": peak,
                  "kinds": [v.kind for v in views]}))
"""


def _value(megabytes: float) -> dict[str, str]:
    row = {"PLAYER_NAME": "Player Name", "TEAM_CITY": "Boston", "START_POSITION": "G", "MIN": "34", "PTS": "21",
           "REB": "7", "AST": "5", "STL": "1", "BLK": "0", "TO": "2", "FGM": "8", "FGA": "15", "FG3M": "3"}
    rows = []
    size = 0
    while size < megabytes * 1_000_000:
        rows.append(dict(row, PLAYER_NAME=f"Player {len(rows)}"))
        size += len(repr(rows[-1])) + 2
    return {"Data": json.dumps({"home_name": "Celtics", "box_score": repr(rows)})}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=float, nargs="+", default=[6.0, 0.15],
                        help="sizes of the structured value in MB (the second default is parsed into a table)")
    args = parser.parse_args()
    for mb in args.mb:
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "inputs.json"
            path.write_text(json.dumps(_value(mb)), encoding="utf-8")
            size = path.stat().st_size / 1e6
            done = subprocess.run([sys.executable, "-c", CHILD, str(ROOT), str(path)], capture_output=True,
                                  text=True, check=True)
        r = json.loads(done.stdout)
        print(f"input value {size:.2f} MB, rendered as {r['kinds']}: first render {r['first'] * 1000:.1f} ms "
              f"(bound {BOUND_S * 1000:.0f} ms), second (cached) {r['second'] * 1000:.2f} ms; peak RSS "
              f"{r['peak']:.0f} MB (bound {BOUND_MB} MB; {r['base']:.0f} MB before rendering)")


if __name__ == "__main__":
    main()
