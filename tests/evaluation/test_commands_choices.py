"""The management commands name their choices: presets, tasks, aspects, modes and rules in --help and in errors."""

from __future__ import annotations

import io

import pytest
from django.core.management import CommandError, call_command

from evaluation.engine.ensemble import OUTLIER_RULES
from evaluation.engine.presets import PRESETS
from evaluation.engine.tasks import FILE_KINDS, TASKS
from evaluation.management.commands.list_aspects import Command as ListAspects
from evaluation.management.commands.preannotate import Command as Preannotate
from evaluation.models import EvaluatorRun
from jobs.models import JobStatus
from tests import factories
from tests.conftest import REPO
from tests.ollama_sim.config import SimConfig
from tests.ollama_sim.server import OllamaSim

LAPTOP = PRESETS["laptop"]


@pytest.fixture
def dataset(db):
    return factories.dataset("tiny", input_headers=["Data"], output_header="Text", items=[
        {"external_id": "i1", "inputs": {"Data": "name[Aromi] | food[Thai]"}, "output": "Aromi serves Thai food."},
        {"external_id": "i2", "inputs": {"Data": "name[Bibi] | area[riverside]"}, "output": "Bibi is by the river."},
    ])


@pytest.fixture
def laptop_sim():
    with OllamaSim(SimConfig(models=[*LAPTOP.annotators, LAPTOP.supervisor], parallel=2)) as server:
        yield server


def _help(command: object, name: str) -> str:
    out = io.StringIO()
    command.create_parser("manage.py", name).print_help(out)
    return " ".join(out.getvalue().split())


def _call(*args: str, **options: object) -> str:
    out = io.StringIO()
    call_command(*args, stdout=out, **options)
    return out.getvalue()


def test_preannotate_help_lists_presets_with_their_models_and_the_rules():
    text = _help(Preannotate(), "preannotate")
    squeezed = "".join(text.split())  # argparse wraps lines at hyphens too
    for preset in PRESETS.values():
        assert "".join(f"{preset.name}: {', '.join(preset.annotators)}; supervisor {preset.supervisor}".split()) \
            in squeezed
    assert "{paper,workstation,laptop,tiny}" in text and "{" + ",".join(OUTLIER_RULES) + "}" in text
    assert "list_aspects" in text


@pytest.mark.django_db(transaction=True)
def test_preannotate_preset_picks_its_models_and_says_so(dataset, laptop_sim):
    out = _call("preannotate", dataset="tiny", aspect="accuracy", preset="laptop", ollama_url=laptop_sim.url,
                sync=True)
    run = EvaluatorRun.objects.get(dataset=dataset)
    assert run.status == JobStatus.DONE and run.config["preset"] == "laptop"
    assert run.config["annotators"] == list(LAPTOP.annotators) and run.config["supervisor"] == LAPTOP.supervisor
    first = out.splitlines()[0]
    assert first == (
        f"Run {run.label} (id {run.pk}) on 'tiny', aspect accuracy, mode ensemble: preset laptop (annotators "
        f"{', '.join(LAPTOP.annotators)}; supervisor {LAPTOP.supervisor}); 10 steps, parallel 4, "
        f"Ollama at {laptop_sim.url}."
    )
    # A one-model mode takes the preset's first annotator; models given by hand are not credited to a preset.
    _call("preannotate", dataset="tiny", aspect="fluency", preset="laptop", mode="single", ollama_url=laptop_sim.url,
          sync=True)
    single = EvaluatorRun.objects.get(dataset=dataset, aspect__name="fluency")
    assert single.config["annotators"] == [LAPTOP.annotators[0]] and single.config["supervisor"] == ""
    out = _call("preannotate", dataset="tiny", aspect="coverage", annotators="gemma2:2b", supervisor="qwen2.5:3b",
                ollama_url=laptop_sim.url, sync=True)
    assert "models as given (annotators gemma2:2b; supervisor qwen2.5:3b)" in out
    assert EvaluatorRun.objects.get(dataset=dataset, aspect__name="coverage").config["preset"] == ""


def test_preannotate_errors_list_the_valid_values(dataset):
    # From the command line argparse refuses them; from Python (call_command with keywords) the launch does.
    with pytest.raises(CommandError, match=r"invalid choice: 'phone' \(choose from '?paper'?, '?workstation'?, "):
        _call("preannotate", "--dataset=tiny", "--aspect=accuracy", "--preset=phone")
    known = r"\(known: paper, workstation, laptop, tiny\)"
    with pytest.raises(CommandError, match=rf"unknown ensemble preset 'phone' {known}"):
        _call("preannotate", dataset="tiny", aspect="accuracy", preset="phone")
    with pytest.raises(CommandError, match=r"invalid choice: 'fusion' \(choose from '?ensemble'?, '?single'?, "):
        _call("preannotate", "--dataset=tiny", "--aspect=accuracy", "--mode=fusion")
    with pytest.raises(CommandError, match=r"invalid choice: 'median' \(choose from '?leave_one_out'?, "):
        _call("preannotate", "--dataset=tiny", "--aspect=accuracy", "--outlier-rule=median")
    with pytest.raises(CommandError, match=r"no dataset named 'Tiny' \(datasets: 'tiny'\)"):
        _call("preannotate", dataset="Tiny", aspect="accuracy")
    with pytest.raises(CommandError, match=r"has no aspect 'charm' \(aspects: accuracy, correctness, coverage"):
        _call("preannotate", dataset="tiny", aspect="charm")


def test_list_aspects_shows_tasks_file_kinds_and_definitions(db):
    out = _call("list_aspects", task="data-to-text")
    flat = " ".join(out.split())
    assert flat.startswith("data-to-text (data-to-text generation)")
    assert FILE_KINDS["data-to-text"] in flat
    assert "accuracy: Whether the facts in the text" in flat and "summarization" not in flat
    names = _call("list_aspects", names=True)
    assert all(slug in names for slug in TASKS) and "Whether the facts" not in names
    assert "aspects: fluency, grammaticality, meaning preservation, simplicity" in " ".join(names.split())


def test_list_aspects_refuses_an_unknown_task_listing_the_tasks(db):
    with pytest.raises(CommandError, match=r"unknown task 'poetry' \(tasks: data-to-text, dialogue, "):
        _call("list_aspects", task="poetry")
    assert all(slug in _help(ListAspects(), "list_aspects") for slug in TASKS)


def test_import_items_help_lists_the_tasks():
    from annotator.management.commands.import_items import Command as ImportItems

    text = _help(ImportItems(), "import_items")
    assert all(slug in text for slug in TASKS) and "list_aspects" in text


def test_docs_import_table_is_the_engine_file_kinds():
    readme = (REPO / "docs" / "getting-started" / "first-real-run.md").read_text()
    rows = dict(
        (line.rsplit("|", 2)[1].strip(" `"), line.split("|")[1].strip())
        for line in readme.splitlines() if line.startswith("| ") and line.rstrip().endswith("` |")
        and line.rsplit("|", 2)[1].strip(" `") in TASKS
    )
    assert rows == FILE_KINDS


@pytest.mark.django_db(transaction=True)
def test_api_run_takes_a_preset_and_lists_presets_when_it_is_unknown(dataset, laptop_sim, make_user):
    from ninja.testing import TestClient

    from config.api import api

    client, admin = TestClient(api), make_user("root", role="admin")
    body = {"dataset": "tiny", "aspect": "accuracy", "ollama_url": laptop_sim.url}
    refused = client.post("/runs", json=body | {"preset": "phone"}, user=admin)
    assert refused.status_code == 422
    assert refused.json()["detail"] == "unknown ensemble preset 'phone' (known: paper, workstation, laptop, tiny)"
    created = client.post("/runs", json=body | {"preset": "laptop"}, user=admin)
    assert created.status_code == 201, created.content
    run = EvaluatorRun.objects.get(pk=created.json()["id"])
    assert run.config["preset"] == "laptop" and run.config["annotators"] == list(LAPTOP.annotators)
    missing = client.post("/runs", json=body | {"dataset": "Tiny"}, user=admin)
    assert missing.status_code == 404 and missing.json()["detail"] == "no dataset named 'Tiny' (datasets: 'tiny')"


@pytest.mark.django_db(transaction=True)
def test_run_form_with_empty_model_fields_takes_and_records_the_preset(client, dataset, laptop_sim, make_user):
    client.force_login(make_user("root", role="admin"))
    form = {"dataset": dataset.pk, "aspect": "accuracy", "preset": "laptop", "annotators": "", "supervisor": "",
            "ollama_url": laptop_sim.url, "parallel": 2, "mode": "single", "outlier_rule": "leave_one_out"}
    response = client.post("/runs/new/", form)
    run = EvaluatorRun.objects.get(dataset=dataset)
    assert response.status_code == 302 and response.url == f"/runs/{run.pk}/"
    assert run.config["preset"] == "laptop" and run.config["annotators"] == [LAPTOP.annotators[0]]
    client.post("/runs/new/", form | {"mode": "ensemble", "aspect": "fluency", "supervisor": "gemma2:2b"})
    mixed = EvaluatorRun.objects.get(dataset=dataset, aspect__name="fluency")
    assert mixed.config["annotators"] == list(LAPTOP.annotators) and mixed.config["supervisor"] == "gemma2:2b"
    assert mixed.config["preset"] == "laptop"
