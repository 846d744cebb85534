"""A refusal carries its field as data: every refusal class keeps it, the API answers it as `field`, the campaign
form and the import pages place a refusal at its field (or at the top), and no product code reads a field back
out of a message."""

from __future__ import annotations

import ast
import importlib
import json
import pkgutil
import re
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from accounts.services.tokens import token_create
from corpus.formats import FormatError, FormatErrors
from corpus.formats.errors import FILE
from errors import Conflict, UserError
from errors.placing import form_field
from tests.adjudication_study import three_judge_study
from tests.mqm_study import build_mqm_study

REPO = Path(__file__).resolve().parents[2]
PRODUCT = ("accounts", "analytics", "annotator", "comparison", "config", "corpus", "dhp", "errors", "evaluation",
           "jobs", "quality", "stats", "studies", "tasks")


def _product_files() -> list[Path]:
    return [p for top in PRODUCT for p in (REPO / top).rglob("*.py") if "migrations" not in p.parts]


def _every_refusal_class() -> list[type[UserError]]:
    """Every subclass of UserError the product defines (its modules imported first, so none is missed)."""
    for top in PRODUCT:
        package = importlib.import_module(top)
        for info in pkgutil.walk_packages(package.__path__, f"{top}."):
            if ".migrations" not in info.name and ".management.commands" not in info.name:
                importlib.import_module(info.name)
    found, todo = [], [UserError]
    while todo:
        for sub in todo.pop().__subclasses__():
            if sub.__module__.split(".")[0] in PRODUCT and sub not in found:
                found.append(sub)
                todo.append(sub)
    return found


# The refusal classes whose constructor is not UserError's (message, field=...): how to make one about a field.
SPECIAL = {
    "FormatError": lambda cls: cls("line 3", "field 'start' must be an integer", field="file"),
    "FormatErrors": lambda cls: cls([FormatError("object 1", "bad"), FormatError("object 2", "bad")]),
    "ImportRefused": lambda cls: cls(["line 1: bad"], spans_only=False),
    "StaleJudgment": lambda cls: cls(3, 4),
    "UploadTooLarge": lambda cls: cls("upload size", "too big"),
    "NoMqmSources": lambda cls: cls("--source", "no MQM source", field="source"),
    "NoPearmutSources": lambda cls: cls("--source", "no Pearmut source", field="source"),
}
SPECIAL_FIELD = {"FormatErrors": FILE, "ImportRefused": FILE, "StaleJudgment": "version", "UploadTooLarge": FILE}


def test_every_refusal_class_keeps_the_field_it_is_given_and_answers_it_in_its_body():
    classes = _every_refusal_class()
    assert len(classes) >= 30  # the walk found the product's refusals, not an empty list
    for cls in classes:
        if cls.__name__ == "UnknownSource" and issubclass(cls, FormatError):
            made, wanted = cls("--source", "no such source", field="source"), "source"
        elif cls.__name__ in SPECIAL:
            made = SPECIAL[cls.__name__](cls)
            wanted = SPECIAL_FIELD.get(cls.__name__, made.field)
        else:
            made, wanted = cls("routing.min_k: too small", field="routing.min_k"), "routing.min_k"
        assert made.field == wanted, cls
        assert made.body() == {"detail": str(made), "field": wanted}, cls
        several = cls.__new__(cls)
        UserError.__init__(several, "sample, routing: one of them", field=["sample", "routing"])
        assert several.field == ("sample", "routing") and several.body()["field"] == ["sample", "routing"]
    assert UserError("x").body() == {"detail": "x", "field": None}
    assert UserError("x", field=["only"]).field == "only" and UserError("x", field=[]).field is None


# ---- no code reads a field out of a message ------------------------------------------------------------------

READS_A_MESSAGE = re.compile(
    r"str\((?:exc|error|err|e|refusal|problem)\)\s*\.\s*(?:r?split|r?partition|startswith|index|find)\b"
    r"|\bin str\((?:exc|error|err|e)\)"
    r"|(?:message|problem)\.(?:r?partition|split)\(\"[:,]"
)


def test_no_product_code_parses_a_refusal_message_to_find_its_field():
    offenders = [f"{path.relative_to(REPO)}:{number}: {line.strip()}"
                 for path in _product_files()
                 for number, line in enumerate(path.read_text().splitlines(), 1) if READS_A_MESSAGE.search(line)]
    assert offenders == [], "\n".join(offenders)
    # the pattern does find such a read: the one the campaign view had
    assert READS_A_MESSAGE.search('field = str(exc).split(":", 1)[0].replace("link.", "link_")')
    assert READS_A_MESSAGE.search('option, _, problem = message.partition(": ")')


# A message that opens by naming a field ("link.cap: ...", f"{name}: ...") is a refusal about that field (a
# metric's name such as "gptscore-hf: ..." is no field: fields are identifiers).
NAMES_ITS_FIELD = re.compile(r"^[A-Za-z_][\w.\[\]]*(?:\s*[,/]\s*[A-Za-z_][\w.\[\]]*)*: ")
# Positional "where" of the file readers (line/object N) is a place in a file, not a field of the request.
NOT_A_FIELD = ("line", "object", "HTTP")


def _opening(message: ast.expr) -> str | None:
    """The literal text a message opens with, a placeholder standing for an f-string's first value."""
    if isinstance(message, ast.Constant) and isinstance(message.value, str):
        return message.value
    if isinstance(message, ast.JoinedStr) and message.values:
        first = message.values[0]
        if isinstance(first, ast.Constant):
            return first.value
        rest = message.values[1] if len(message.values) > 1 else None
        if isinstance(rest, ast.Constant) and isinstance(rest.value, str):
            return "x" + rest.value
    return None


def test_every_refusal_whose_message_names_a_field_names_it_as_data():
    names = {cls.__name__ for cls in _every_refusal_class()} | {"UserError"}
    missing = []
    for path in _product_files():
        for node in ast.walk(ast.parse(path.read_text())):
            if not (isinstance(node, ast.Raise) and isinstance(node.exc, ast.Call) and node.exc.args):
                continue
            func = node.exc.func
            name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", "")
            if name not in names or any(k.arg == "field" for k in node.exc.keywords):
                continue
            opening = _opening(node.exc.args[0])
            if opening and NAMES_ITS_FIELD.match(opening) and not opening.startswith(NOT_A_FIELD):
                missing.append(f"{path.relative_to(REPO)}:{node.lineno}")
    assert missing == [], "\n".join(missing)


# ---- the campaign form --------------------------------------------------------------------------------------

# Every field the campaign services refuse (campaign_create and the checks it calls), and the form field that
# shows it. A new refusal of those services with a field missing here fails the test below: give it a place.
CAMPAIGN_FORM_PLACES = {
    "annotators": "annotators", "annotators_per_item": "annotators_per_item", "runs": "runs",
    "reviewers": "reviewers", "seed": "seed", "control_arm": "control_arm", "protocol": "protocol",
    "protocol_options": "protocol_options", "protocol_options.major_from": "protocol_options",
    "protocol_options.tree": "protocol_options", "protocol_options.tree[2]": "protocol_options",
    "protocol_options.weights": "protocol_options", "sample": "sample_strata", "sample.strata": "sample_strata",
    "sample.per_stratum": "sample_per_stratum", "sample.total": "sample_total", "sample.seed": "sample_strata",
    "routing": "routing_min_k", "routing.min_k": "routing_min_k", "routing.audit_rate": "routing_audit_rate",
    "routing.design": "routing_design", "routing.min_probability": "routing_min_probability",
    "routing.target_ci_width": "routing_target_ci_width", "routing.budget_spans": "routing_budget_spans",
    "decoys": "decoys", "planted": "planted", "vigilance_min": "vigilance_min",
    "qualification.items": "qualification_items", "qualification.pass": "qualification_pass",
    "link": "link_enabled", "link.cap": "link_cap", "link.expires": "link_expires",
    "items_per_participant": "items_per_participant", "release_after_minutes": "release_after_minutes",
    "time_limit_minutes": "time_limit_minutes", "pass_code": "pass_code", "fail_code": "fail_code",
    "consent": "consent", "completion_url": "completion_url", "categories": "categories",
    "control_item_ids": "control_items", "name": "name", "guidelines": "guidelines",
}
# (module, function or class) whose refusals a campaign form can meet.
CAMPAIGN_SERVICES = [
    ("studies/setup.py", "_validate"), ("studies/design.py", "pool_refusal"),
    ("quality/services.py", "checks_validate"), ("studies/participants.py", "link_settings_check"),
    ("annotator/services/sampling.py", "SampleSpec"), ("stats/routing.py", "check_routing"),
    ("stats/routing.py", "check_settings"),
    ("corpus/protocols/esa.py", "clean_options"), ("corpus/protocols/__init__.py", "_mqm_options"),
    ("annotator/services/campaigns.py", "_check_text"), ("studies/design.py", "_fix_fields"),
]


def _literal_fields(module: str, name: str) -> set[str]:
    tree = ast.parse((REPO / module).read_text())
    scope = next(n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef | ast.ClassDef) and n.name == name)
    found: set[str] = set()
    for node in ast.walk(scope):
        if isinstance(node, ast.Call):
            for keyword in node.keywords:
                if keyword.arg == "field":
                    try:
                        value = ast.literal_eval(keyword.value)
                    except ValueError:
                        continue  # a name computed in a loop: the loop's literal names are below
                    found.update([value] if isinstance(value, str) else value)
        if isinstance(node, ast.Tuple) and node.elts and isinstance(node.elts[0], ast.Constant) \
                and isinstance(node.elts[0].value, str) and node.elts[0].value in CAMPAIGN_FORM_PLACES:
            found.add(node.elts[0].value)  # ("link.cap", spec.cap) in a loop that raises about `name`
    return found


def test_every_field_the_campaign_services_refuse_has_a_place_on_the_form():
    refused = set().union(*(_literal_fields(module, name) for module, name in CAMPAIGN_SERVICES))
    assert {"link.cap", "routing.min_k", "decoys", "sample.strata", "protocol_options"} <= refused
    assert refused - set(CAMPAIGN_FORM_PLACES) == set(), "give these a place in CAMPAIGN_FORM_PLACES"


def _field_error(html: str, field: str) -> str:
    found = re.search(rf'<span class="field-error" role="alert" id="id_{field}_error">(.*?)</span>', html, re.S)
    return found.group(1) if found else ""


def _top_errors(html: str) -> str:
    found = re.search(r'<div class="error form-errors" role="alert">(.*?)</div>', html, re.S)
    return found.group(1) if found else ""


@pytest.fixture
def campaign_form(make_user, client):
    built, _ = three_judge_study((make_user("ann1"), make_user("ann2"), make_user("ann3")))
    client.force_login(make_user("rita", role="researcher"))
    annotator = built.campaign.annotators.first()
    return {"name": "Placed", "dataset": built.dataset.pk, "runs": [str(r.pk) for r in built.runs],
            "annotators": [annotator.pk], "annotators_per_item": 1, "seed": 0, "guidelines": "Judge."}


@pytest.mark.django_db
@pytest.mark.parametrize(("named", "shown_at"), sorted(CAMPAIGN_FORM_PLACES.items()))
def test_the_campaign_form_shows_a_service_refusal_at_the_field_it_names(
        campaign_form, client, monkeypatch, named, shown_at):
    def refuse(*_, **__):
        raise UserError(f"{named}: refused here", field=named)

    monkeypatch.setattr("studies.views.campaigns.campaign_create", refuse)
    page = client.post("/campaigns/new/", campaign_form).content.decode()
    assert f"{named}: refused here" in _field_error(page, shown_at)
    assert "refused here" not in _top_errors(page)


@pytest.mark.django_db
@pytest.mark.parametrize("field", [None, "no_such_field_of_the_form", ("neither", "nor")])
def test_the_campaign_form_shows_a_refusal_about_no_form_field_at_the_top(campaign_form, client, monkeypatch, field):
    def refuse(*_, **__):
        raise Conflict("refused as a whole", field=field)

    monkeypatch.setattr("studies.views.campaigns.campaign_create", refuse)
    page = client.post("/campaigns/new/", campaign_form).content.decode()
    assert "refused as a whole" in _top_errors(page)
    assert not re.search(r'class="field-error"[^>]*>[^<]*refused as a whole', page)


@pytest.mark.django_db
def test_the_campaign_forms_real_refusals_land_at_their_fields(tmp_path, make_user, client, campaign_form):
    """Refusals the service itself raises, for settings the form alone lets through."""
    base = build_mqm_study(tmp_path, [make_user("m0")], name="MQM base")
    mqm = {"name": "Web MQM", "dataset": base.dataset.pk, "annotators": [make_user("m1").pk],
           "annotators_per_item": 1, "seed": 0, "guidelines": "Mark.", "protocol": "mqm"}
    decoys = client.post("/campaigns/new/", {**mqm, "decoys": "0.2"}).content.decode()
    assert "nobody gives verdicts on machine spans" in _field_error(decoys, "decoys")
    sample = client.post("/campaigns/new/", {**mqm, "sample_strata": "evaluator", "sample_total": "3"})
    assert "the &#x27;mqm&#x27; protocol gives none" in _field_error(sample.content.decode(), "sample_strata")
    full = client.post("/campaigns/new/", {**campaign_form, "link_enabled": "on", "items_per_participant": "1",
                                           "pass_code": "DONE1"}).content.decode()
    assert "nobody could ever join by the link" in _field_error(full, "link_enabled")


# ---- the API ----------------------------------------------------------------------------------------------------

@pytest.mark.django_db
def test_the_api_answers_the_field_beside_the_detail(make_user):
    built, _ = three_judge_study((make_user("ann1"), make_user("ann2"), make_user("ann3")))
    api = Client(HTTP_AUTHORIZATION=f"Bearer {token_create(user=make_user('rita', role='researcher'))}")
    body = {"name": "By API", "dataset_id": built.dataset.pk, "run_ids": [r.pk for r in built.runs],
            "annotators": ["ann1"]}

    def post(**extra):
        return api.post("/api/campaigns", data=json.dumps({**body, **extra}), content_type="application/json")

    cap = post(link={"enabled": True, "cap": 0}, items_per_participant=1)
    assert cap.status_code == 422
    assert cap.json() == {"detail": "link.cap: must be at least 1 (or null for no cap)", "field": "link.cap"}
    both = post(sample={"strata": "evaluator", "total": 1}, routing={"min_k": 2, "audit_rate": 0.2})
    assert both.status_code == 422 and both.json()["field"] == ["sample", "routing"]
    assert post(annotators=["ann1", "ann2"], annotators_per_item=5).json()["field"] == "annotators_per_item"
    nothing = api.post(f"/api/campaigns/{built.campaign.pk}/disputes/undo")  # a state, not a field
    assert nothing.status_code == 409 and nothing.json() == {"detail": "nothing to undo", "field": None}


def test_the_api_reference_documents_the_field():
    from config.openapi import ERROR_SCHEMA

    assert "field" in ERROR_SCHEMA["properties"]
    from scripts.docs_reference import api_page  # the generated page, as the docs build writes it

    page = api_page()
    assert '"field"' in page and "dotted path" in page


# ---- the import pages --------------------------------------------------------------------------------------

@pytest.mark.django_db
def test_the_import_page_shows_a_file_problem_at_the_file_and_an_option_problem_at_the_option(
        client, researcher, monkeypatch):
    client.force_login(researcher)
    bad = SimpleUploadedFile("items.jsonl", b'{"id": "1", "inputs": {"D": "x"}, "outputs": {"T": "y"}, "spans": 3}\n')
    page = client.post("/datasets/import/", {"file": bad, "dataset": "D1", "task": "data-to-text",
                                              "source": "gold"})
    assert page.status_code == 400
    html = page.content.decode()
    assert "items.jsonl" in _field_error(html, "file") and "nothing was imported" in _field_error(html, "file")

    def refuse(**_):
        raise FormatError("--dataset", "must not be blank", field="dataset")

    monkeypatch.setattr("annotator.views.pages.upload_import", refuse)
    good = SimpleUploadedFile("items.jsonl", b'{"id": "1", "inputs": {"D": "x"}, "outputs": {"T": "y"}}\n')
    page = client.post("/datasets/import/", {"file": good, "dataset": "D1", "task": "data-to-text", "source": "gold"})
    html = page.content.decode()
    assert "--dataset: must not be blank" in _field_error(html, "dataset") and not _field_error(html, "file")


@pytest.mark.django_db
def test_the_import_service_names_the_option_it_refuses(tmp_path):
    from annotator.services.importing import items_import

    path = tmp_path / "items.jsonl"
    path.write_text('{"id": "1", "inputs": {"D": "x"}, "outputs": {"T": "y"}}\n')
    for option, kwargs in (("dataset", {"dataset_name": " "}), ("source", {"source": "a\x00b"}),
                           ("aspect", {"aspect": "x" * 1000})):
        args = {"path": path, "dataset_name": "D", "task_slug": "data-to-text", **kwargs}
        with pytest.raises(FormatError) as refused:
            items_import(**args)
        assert refused.value.field == option and str(refused.value).startswith(f"--{option}: ")
    with pytest.raises(FormatError) as unknown:
        items_import(path=path, dataset_name="D", task_slug="no-such-task")
    assert unknown.value.field == "task"
    assert FormatErrors([FormatError("object 1", "bad")]).field == FILE


def test_form_field_prefers_the_spelled_field_then_the_head():
    fields = {"link_cap", "link_enabled", "protocol_options"}
    assert form_field(UserError("x", field="link.cap"), fields) == "link_cap"
    assert form_field(UserError("x", field="protocol_options.tree[1]"), fields) == "protocol_options"
    assert form_field(UserError("x", field="link.expires"), fields) is None  # no link_expires and no head `link`
    assert form_field(UserError("x", field="link.expires"), fields, {"link": "link_enabled"}) == "link_enabled"
    assert form_field(UserError("x", field=("nope", "link.cap")), fields) == "link_cap"
    assert form_field(UserError("x"), fields) is None


@pytest.mark.django_db
def test_the_input_rules_name_the_field_of_a_body_or_query_they_refuse(make_user):
    api = Client(HTTP_AUTHORIZATION=f"Bearer {token_create(user=make_user('rita', role='researcher'))}")
    body = api.post("/api/campaigns", data='{"name": "a\\u0000b", "link": {"consent": "\\ud800"}}',
                    content_type="application/json")
    assert body.status_code == 422 and body.json()["field"] in ("name", "link.consent")
    assert body.json()["detail"].startswith(f"the JSON body is refused: body.{body.json()['field']}: ")
    query = api.get("/api/campaigns", {"status": "open\x00"})
    assert query.status_code == 400 and query.json()["field"] == "status"
    whole = api.post("/api/campaigns", data="[1e999]", content_type="application/json")
    assert whole.status_code in (400, 422) and whole.json().get("field") is None
