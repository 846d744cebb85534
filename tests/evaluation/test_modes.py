"""Run modes: each spec decides what a run of its mode is, and every place that lists modes lists these."""

from __future__ import annotations

import pytest

from errors import UserError
from evaluation.forms import RunLaunchForm
from evaluation.management.commands.preannotate import Command
from evaluation.models import LLMRole
from evaluation.runs.launch import LaunchError, run_create
from evaluation.runs.modes import MODES, RunMode, ScoreScale, mode_spec
from evaluation.schemas import RunIn
from tests import factories

pytestmark = pytest.mark.django_db
VALUES = ["ensemble", "single", "distilled"]  # stored in run configs and typed on the CLI: a public contract


@pytest.fixture
def dataset():
    return factories.dataset("modes", input_headers=["Data"], output_header="Text", items=[
        {"external_id": str(i), "inputs": {"Data": f"r{i}"}, "output": f"Out {i}."} for i in range(3)
    ])


def test_mode_values_are_the_public_ones():
    assert [mode.value for mode in RunMode] == list(MODES) == VALUES


@pytest.mark.parametrize("mode", VALUES)
def test_run_create_follows_the_mode_spec(dataset, mode):
    spec = mode_spec(mode)
    annotators = ["a:1b", "b:1b"] if spec.n_models is None else ["a:1b"]
    run = run_create(dataset=dataset, aspect_name="accuracy", annotators=annotators, supervisor="s:1b",
                     mode=mode, check=False)
    passes = spec.passes(annotators, "s:1b")
    assert run.config["mode"] == mode and run.label == f"{mode}-{run.pk}"
    assert set(run.templates) == {str(kind) for kind in spec.template_kinds}
    assert spec.annotator_template in run.templates
    assert run.total == 3 * len(passes)
    assert list(run.progress) == [model_pass.progress_key for model_pass in passes]
    assert run.config["supervisor"] == ("s:1b" if spec.has_supervisor else "")
    assert run.evaluator.kind == spec.evaluator_kind


def test_phases_put_the_supervisor_last():
    passes = mode_spec("ensemble").passes(["a", "b"], "s")
    assert [(p.model, p.role, p.progress_key) for p in passes] == [
        ("a", LLMRole.ANNOTATOR, "a"), ("b", LLMRole.ANNOTATOR, "b"),
        ("s", LLMRole.SUPERVISOR, "s (supervisor)"),
    ]
    assert [p.model for p in mode_spec("single").passes(["a"], "s")] == ["a"]


def test_template_kinds_are_prompt_template_kinds():
    kinds = set(LLMRole.values)
    assert all(set(spec.template_kinds) <= kinds for spec in MODES.values())


def test_only_the_distilled_mode_scores_0_to_100():
    assert {m: spec.score_scale for m, spec in MODES.items()} == {
        RunMode.ENSEMBLE: ScoreScale.LABELS, RunMode.SINGLE: ScoreScale.LABELS, RunMode.DISTILLED: ScoreScale.PERCENT,
    }


def test_unknown_mode_and_wrong_model_count_are_refused(dataset):
    with pytest.raises(UserError, match="unknown mode 'fusion' \\(modes: ensemble, single, distilled\\)"):
        run_create(dataset=dataset, aspect_name="accuracy", mode="fusion", check=False)
    with pytest.raises(LaunchError, match="a distilled run takes exactly one model"):
        run_create(dataset=dataset, aspect_name="accuracy", annotators=["a", "b"], mode="distilled", check=False)


def test_form_cli_and_api_list_the_modes():
    assert [value for value, _ in RunLaunchForm().fields["mode"].choices] == VALUES
    parser = Command().create_parser("manage.py", "preannotate")
    (action,) = [a for a in parser._actions if a.dest == "mode"]
    assert list(action.choices) == VALUES and action.default == "ensemble"
    assert all(value in action.help for value in VALUES)
    field = RunIn.model_json_schema()["properties"]["mode"]
    assert field["default"] == "ensemble" and all(value in field["description"] for value in VALUES)


@pytest.mark.parametrize(("mode", "expected"), [("ensemble", ["a", "b"]), ("single", ["a"]), ("distilled", ["a"])])
def test_form_keeps_as_many_models_as_the_mode_takes(dataset, mode, expected):
    form = RunLaunchForm({"dataset": dataset.pk, "aspect": "accuracy", "annotators": "a, b", "supervisor": "s",
                          "parallel": 2, "mode": mode, "outlier_rule": "leave_one_out"})
    assert form.is_valid(), form.errors
    assert form.models() == (expected, "s")
