"""Every command that takes `--format json` writes only JSON to standard output (file descriptor 1 itself, where
a C library's log lands too), so `manage.py CMD --format json > f.json` gives a file any JSON reader opens."""

from __future__ import annotations

import json
from argparse import _StoreAction

import pytest
from django.core.management import CommandError, call_command, get_commands, load_command_class

from errors import UserError
from tests.output_study import build_output_study

pytestmark = pytest.mark.django_db
PROJECT_APPS = ("accounts", "analytics", "annotator", "comparison", "corpus", "dhp", "evaluation", "jobs",
                "quality", "studies")


def commands_with(fmt: str) -> list[tuple[str, list[tuple[str, str, bool]]]]:
    """(name, [(dest, option, required)]) of every project command whose --format offers `fmt`."""
    found = []
    for name, app in sorted(get_commands().items()):
        if app.split(".")[0] not in PROJECT_APPS:
            continue
        parser = load_command_class(app, name).create_parser("manage.py", name)
        actions = [a for a in parser._actions if isinstance(a, _StoreAction)]
        # a required choice between options (--dataset or --campaign): the first one is given
        chosen = {id(g._group_actions[0]) for g in parser._mutually_exclusive_groups if g.required}
        formats = next((a.choices for a in actions if a.dest == "format"), None) or ()
        if fmt in formats:
            found.append((name, [(a.dest, a.option_strings[0] if a.option_strings else "",
                                  a.required or id(a) in chosen) for a in actions]))
    return found


def command_args(options: list[tuple[str, str, bool]], values: dict[str, str], fmt: str) -> list[str]:
    """The command line: --format, and each required option from `values` (a KeyError names a new one)."""
    args = ["--format", fmt]
    for dest, option, required in options:
        if required and dest != "format":
            args += [option, values[dest]] if option else [values[dest]]
    return args


def test_every_json_command_writes_only_json_to_stdout(make_user, tmp_path, capfd):
    study = build_output_study(make_user, tmp_path)
    commands = commands_with("json")
    assert {"compare_sources", "esa_scores", "mqm_scores", "priming", "vigilance"} <= {n for n, _ in commands}
    parsed, refused = [], []
    capfd.readouterr()
    for name, options in commands:
        for values in study.values():
            args = command_args(options, values, "json")
            try:
                call_command(name, *args)  # to the process's own stdout: capfd reads file descriptor 1
            except (CommandError, UserError) as exc:
                out = capfd.readouterr().out
                assert not out.strip(), (name, args, out[:300])  # a refusal writes nothing to stdout
                refused.append(f"{name} {args}: {exc}")
                continue
            out = capfd.readouterr().out
            try:
                document = json.loads(out)
            except ValueError as exc:
                raise AssertionError(f"{name} {args} wrote what is not JSON: {out[:300]!r}") from exc
            if name == "compare_sources":  # gamma included: the solver ran beside the JSON
                assert any(row["gamma"] is not None for row in document), document
            parsed.append(name)
    print("parsed:", sorted(set(parsed)), "\nrefused:", "\n".join(refused))
    assert {n for n, _ in commands} == set(parsed), refused  # each answered JSON for one of the studies at least


def test_gamma_prints_nothing_on_stdout_when_solves_interleave(capfd, monkeypatch):
    """GLPK writes its log straight to file descriptor 1. cvxpy quiets it per solve and then restores the options
    it found, deleting keys they lacked; pygamma solves in threads, so one solve's restore could fall between
    another's quieting and its call into GLPK. That interleaving is played here on every solve: nothing may
    reach stdout."""
    pytest.importorskip("pygamma_agreement")
    import cvxopt.glpk
    from cvxpy.reductions.solvers.conic_solvers.glpk_mi_conif import GLPK_MI

    from analytics.compare.metrics import CatSpan, gamma_agreement

    solve, prepare = GLPK_MI.solve_via_data, GLPK_MI._prepare_cvxopt_matrices
    found: list[dict] = []
    solves: list[int] = []

    def solve_seen(self, *args, **kwargs):
        found.append(cvxopt.glpk.options.copy())  # what a solve starting now on another thread would restore
        solves.append(1)
        return solve(self, *args, **kwargs)

    def prepare_after_another_restore(data):
        GLPK_MI._restore_solver_options(found[0])  # another thread's solve ends here, restoring what it found
        return prepare(data)

    monkeypatch.setattr(GLPK_MI, "solve_via_data", solve_seen)
    monkeypatch.setattr(GLPK_MI, "_prepare_cvxopt_matrices", staticmethod(prepare_after_another_restore))
    monkeypatch.setattr(cvxopt.glpk, "options", {})  # a fresh process: cvxopt starts with no options
    keys = list(range(3))
    predicted = {k: [CatSpan(0, 9), CatSpan(12, 20 + k), CatSpan(30, 34)] for k in keys}
    reference = {k: [CatSpan(0, 9), CatSpan(14, 20), CatSpan(31 + k, 40)] for k in keys}
    capfd.readouterr()
    gamma = gamma_agreement(predicted, reference, keys, by_category=False)
    out = capfd.readouterr().out
    assert solves and gamma is not None and gamma <= 1
    assert "GLPK" not in out and not out.strip(), out[:300]
