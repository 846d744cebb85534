"""The API as a whole: scoped tokens, pagination everywhere, offline docs shown only to signed-in users."""

from __future__ import annotations

import io
import json

import pytest
from django.core.management import call_command
from django.test import Client

from accounts.services.tokens import token_create
from tests import factories as make

pytestmark = pytest.mark.django_db


def _client(token: str) -> Client:
    return Client(HTTP_AUTHORIZATION=f"Bearer {token}")


def test_read_token_may_look_but_not_change(researcher):
    make.dataset("scoped", items=[{"external_id": "1", "output": "text"}])
    read = _client(token_create(user=researcher, scope="read"))
    assert read.get("/api/datasets").status_code == 200
    refused = read.post("/api/campaigns", data="{}", content_type="application/json")
    assert refused.status_code == 403 and "read-only" in refused.json()["detail"]
    write = _client(token_create(user=researcher, scope="write"))
    # the write token gets past authentication to validation of the (empty) body
    assert write.post("/api/campaigns", data="{}", content_type="application/json").status_code == 422


def test_create_token_command_takes_a_scope(researcher):
    out = io.StringIO()
    call_command("create_token", researcher.username, scope="read", stdout=out)
    assert _client(out.getvalue().strip()).delete("/api/added-spans/1").status_code == 403


def test_lists_are_paginated_and_refuse_bad_offsets(researcher):
    dataset = make.dataset("paged", items=[{"external_id": str(i), "output": f"text {i}"} for i in range(5)])
    api = _client(token_create(user=researcher))
    page = api.get(f"/api/datasets/{dataset.pk}/items", {"limit": 2, "offset": 2}).json()
    assert page["count"] == 5 and [i["external_id"] for i in page["items"]] == ["2", "3"]
    for bad in ({"offset": -5}, {"offset": "1e20"}, {"limit": 0}, {"limit": 5000}):
        assert api.get(f"/api/datasets/{dataset.pk}/items", bad).status_code == 422, bad
    for path in ("/api/datasets", "/api/runs", "/api/assignments"):
        assert set(api.get(path).json()) == {"items", "count"}, path


def test_docs_need_a_sign_in_and_load_swagger_from_our_static_files(client, researcher, annotator_user):
    anonymous = client.get("/api/docs")
    assert anonymous.status_code == 302 and "/accounts/login/" in anonymous["Location"]
    assert client.get("/api/openapi.json").status_code == 302
    client.force_login(annotator_user)
    page = client.get("/api/docs")
    html = page.content.decode()
    assert page.status_code == 200 and "/static/ninja/swagger-ui-bundle.js" in html
    assert "cdn" not in html.lower() and "https://" not in html
    assert client.get("/static/ninja/swagger-ui-bundle.js").status_code == 200
    assert client.get("/api/openapi.json").json()["info"]["title"] == "spanjudge API"


# ---- every endpoint refuses strangers; researcher-only ones refuse annotators --------------------------------

RESEARCHER_ONLY = {
    "list_datasets", "import_items", "list_items", "export_dataset", "create_campaign", "campaign_control_accuracy",
    "list_runs", "retrieve_run", "create_run", "cancel_run", "resume_run", "retrieve_campaign_analytics",
    "retrieve_campaign_analytics_table", "retrieve_dataset_analytics", "retrieve_dataset_analytics_table",
    "retrieve_dataset_mqm_scores", "retrieve_dataset_pairwise", "retrieve_campaign_pairwise",
    "retrieve_campaign_figures", "import_annotations", "list_sources", "compare_sources", "create_export",
    "list_exports", "retrieve_export",
    "cancel_export", "resume_export",
    "download_export_file", "retrieve_labeling_campaign", "update_labeling_campaign", "create_routing_top_up",
}


# Bodies that pass validation, so that the role check (not the schema) is what answers.
BODIES = {
    "create_campaign": {"name": "c", "dataset_id": 1, "run_ids": [], "annotators": []},
    "create_run": {"dataset": "d", "aspect": "a"},
    "update_labeling_campaign": {"campaign_id": None},
}
UPLOADS = {"import_items": {"dataset": "d", "task": "t"}, "import_annotations": {"source": "s"}}


def _operations():
    from config.api import api

    schema = api.get_openapi_schema()
    for path, methods in schema["paths"].items():
        for method, operation in methods.items():
            yield path, method, operation["operationId"]


def _concrete(path: str) -> str:
    import re

    return re.sub(r"\{[^}]+\}", "1", path)


def test_every_endpoint_answers_401_without_credentials(db):
    client = Client()
    operations = list(_operations())
    assert len(operations) >= 34
    for path, method, operation in operations:
        response = getattr(client, method)(_concrete(path))
        assert response.status_code == 401, (operation, response.status_code)


def test_researcher_endpoints_answer_403_to_annotators(annotator_user):
    api = _client(token_create(user=annotator_user))
    seen = set()
    for path, method, operation in _operations():
        if operation not in RESEARCHER_ONLY:
            continue
        seen.add(operation)
        if method == "get":
            response = api.get(_concrete(path), {"reference": "gold"} if operation == "compare_sources" else {})
        elif operation in UPLOADS:
            from django.core.files.uploadedfile import SimpleUploadedFile

            response = api.post(_concrete(path), {"file": SimpleUploadedFile("f.jsonl", b"{}"), **UPLOADS[operation]})
        else:
            body = json.dumps(BODIES.get(operation, {}))
            response = getattr(api, method)(_concrete(path), data=body, content_type="application/json")
        assert response.status_code == 403, (operation, response.status_code)
    assert seen == RESEARCHER_ONLY


def test_campaigns_and_time_twins(make_user):
    from annotator.models import Assignment
    from tests.factories import build_campaign

    ann = make_user("timed")
    built = build_campaign([ann], per_item=1)
    api = _client(token_create(user=ann))
    listed = api.get("/api/campaigns").json()
    assert listed["count"] == 1 and listed["items"][0]["id"] == built.campaign.pk
    detail = api.get(f"/api/campaigns/{built.campaign.pk}").json()
    assert detail["n_assignments"] == 2 and "guidelines" in detail
    assignment = Assignment.objects.filter(annotator=ann).first()
    assert api.post(f"/api/assignments/{assignment.pk}/time", data='{"seconds": 42}',
                    content_type="application/json").status_code == 204
    assignment.refresh_from_db()
    assert assignment.seconds_spent == 42
    other = make_user("other")
    assert _client(token_create(user=other)).get(f"/api/campaigns/{built.campaign.pk}").status_code == 404


def test_import_annotations_and_compare_through_the_api(researcher, settings, tmp_path):
    from django.core.files.uploadedfile import SimpleUploadedFile

    dataset = make.dataset("api-compare", items=[{"external_id": "1", "output": "The Hawks won."}])
    make.gold(dataset.items.get(), [(4, 9)])
    api = _client(token_create(user=researcher))
    good = b'{"item_id": "1", "model": "m", "spans": [{"start": 4, "text": "hawks"}]}\n'
    created = api.post(f"/api/datasets/{dataset.pk}/annotations",
                       {"file": SimpleUploadedFile("run.jsonl", good), "source": "llm"})
    assert created.status_code == 201 and created.json()["normalized"] == 1
    bad = b'{"item_id": "1", "spans": [{"start": 40, "text": "x"}, {"start": 0, "text": ""}]}\n'
    refused = api.post(f"/api/datasets/{dataset.pk}/annotations",
                       {"file": SimpleUploadedFile("bad.jsonl", bad), "source": "other"})
    detail = refused.json()["detail"]
    assert refused.status_code == 422 and "spans[0]: impossible span" in detail and "spans[1]: empty span" in detail
    assert detail.startswith("bad.jsonl: 2 problems") and "/tmp" not in detail
    settings.IMPORT_MAX_UPLOAD_MB = 0
    too_big = api.post(f"/api/datasets/{dataset.pk}/annotations",
                       {"file": SimpleUploadedFile("big.jsonl", good), "source": "big"})
    assert too_big.status_code == 413 and "IMPORT_MAX_UPLOAD_MB" in too_big.json()["detail"]
    names = [s["name"] for s in api.get(f"/api/datasets/{dataset.pk}/sources").json()["items"]]
    assert names == ["external:llm", "gold:gold"]
    rows = api.get(f"/api/datasets/{dataset.pk}/compare", {"reference": "gold:gold"}).json()
    assert rows[0]["source"] == "external:llm" and rows[0]["span_exact"]["f1"] == 1.0
    unknown = api.get(f"/api/datasets/{dataset.pk}/compare", {"reference": "gold:nope"})
    assert unknown.status_code == 422 and "gold:gold" in unknown.json()["detail"]


def test_annotations_import_page_lists_problems_and_imports(client, researcher, annotator_user):
    from django.core.files.uploadedfile import SimpleUploadedFile

    dataset = make.dataset("page-import", items=[{"external_id": "1", "output": "The Hawks won."}])
    client.force_login(researcher)
    url = f"/datasets/{dataset.pk}/annotations/import/"
    assert client.get(url).status_code == 200
    bad = b'{"item_id": "1", "spans": [{"start": 4, "text": "Nets"}]}\n'
    refused = client.post(url, {"file": SimpleUploadedFile("bad.jsonl", bad), "source": "x", "format": "jsonl"})
    assert refused.status_code == 400
    assert "line 1, spans[0]: offsets 4-8 select &#x27;Hawk&#x27;" in refused.content.decode()
    done = client.post(url, {"file": SimpleUploadedFile("bad.jsonl", bad), "source": "x", "format": "jsonl",
                             "skip_bad_spans": "on"})
    assert done.status_code == 302
    client.force_login(annotator_user)
    assert client.get(url).status_code == 403


# Every operation as researchers' scripts know it: operationId, method, path and tag. Moving a router between
# modules must leave this set as it is; a new operation is added here on purpose.
OPERATIONS = {
    ("add_assignment_time", "POST", "/api/assignments/{assignment_id}/time", "annotation"),
    ("campaign_control_accuracy", "GET", "/api/campaigns/{campaign_id}/control-accuracy", "campaigns"),
    ("campaign_vigilance", "GET", "/api/campaigns/{campaign_id}/vigilance", "campaigns"),
    ("cancel_comparison", "POST", "/api/comparisons/{job_id}/cancel", "comparisons"),
    ("cancel_dhp_run", "POST", "/api/dhp/runs/{run_id}/cancel", "dhp"),
    ("cancel_run", "POST", "/api/runs/{run_id}/cancel", "runs"),
    ("compare_sources", "GET", "/api/datasets/{dataset_id}/compare", "sources and exports"),
    ("create_added_span", "POST", "/api/assignments/{assignment_id}/added-spans", "annotation"),
    ("open_assignment", "POST", "/api/assignments/{assignment_id}/open", "annotation"),
    ("create_mqm_error", "POST", "/api/assignments/{assignment_id}/mqm-errors", "annotation"),
    ("delete_mqm_error", "DELETE", "/api/mqm-errors/{span_id}", "annotation"),
    ("retrieve_esa_state", "GET", "/api/assignments/{assignment_id}/esa", "annotation"),
    ("create_esa_span", "POST", "/api/assignments/{assignment_id}/esa-spans", "annotation"),
    ("update_esa_span", "PATCH", "/api/esa-spans/{span_id}", "annotation"),
    ("delete_esa_span", "DELETE", "/api/esa-spans/{span_id}", "annotation"),
    ("create_esa_missing", "POST", "/api/assignments/{assignment_id}/esa-missing", "annotation"),
    ("create_esa_spans_done", "POST", "/api/assignments/{assignment_id}/esa-done", "annotation"),
    ("update_esa_score", "PUT", "/api/assignments/{assignment_id}/esa-score", "annotation"),
    ("create_campaign", "POST", "/api/campaigns", "campaigns"),
    ("create_routing_top_up", "POST", "/api/campaigns/{campaign_id}/routing/top-up", "campaigns"),
    ("create_comparison", "POST", "/api/comparisons", "comparisons"),
    ("create_dhp_run", "POST", "/api/dhp/runs", "dhp"),
    ("create_export", "POST", "/api/datasets/{dataset_id}/exports", "sources and exports"),
    ("create_judgment", "POST", "/api/assignments/{assignment_id}/judgments", "annotation"),
    ("create_run", "POST", "/api/runs", "runs"),
    ("create_token", "POST", "/api/tokens", "tokens"),
    ("delete_added_span", "DELETE", "/api/added-spans/{span_id}", "annotation"),
    ("download_campaign_report", "GET", "/api/analytics/campaigns/{campaign_id}/report.zip", "analytics"),
    ("download_export_file", "GET", "/api/exports/{job_id}/files/{name}", "sources and exports"),
    ("export_comparison", "GET", "/api/comparisons/{job_id}/results", "comparisons"),
    ("export_dataset", "GET", "/api/datasets/{dataset_id}/export", "datasets"),
    ("export_dhp_run", "GET", "/api/dhp/runs/{run_id}/export", "dhp"),
    ("export_labeled_set", "GET", "/api/analytics/campaigns/{campaign_id}/labeled", "labeled sets and estimates"),
    ("finish_assignment", "POST", "/api/assignments/{assignment_id}/finish", "annotation"),
    ("flag_participant", "POST", "/api/campaigns/{campaign_id}/participants/{participant_id}/flag", "participants"),
    ("import_annotations", "POST", "/api/datasets/{dataset_id}/annotations", "datasets"),
    ("import_items", "POST", "/api/datasets/import", "datasets"),
    ("list_assignments", "GET", "/api/assignments", "annotation"),
    ("list_campaigns", "GET", "/api/campaigns", "campaigns"),
    ("list_comparisons", "GET", "/api/comparisons", "comparisons"),
    ("list_datasets", "GET", "/api/datasets", "datasets"),
    ("list_decoys", "GET", "/api/campaigns/{campaign_id}/decoys", "campaigns"),
    ("decoy_audit", "GET", "/api/campaigns/{campaign_id}/decoys/audit", "campaigns"),
    ("explain_decoys", "POST", "/api/campaigns/{campaign_id}/decoys/explain", "campaigns"),
    ("retrieve_decoy_explanation_job", "GET", "/api/decoy-explanations/{job_id}", "campaigns"),
    ("cancel_decoy_explanation_job", "POST", "/api/decoy-explanations/{job_id}/cancel", "campaigns"),
    ("resume_decoy_explanation_job", "POST", "/api/decoy-explanations/{job_id}/resume", "campaigns"),
    ("write_planted_errors", "POST", "/api/campaigns/{campaign_id}/planted/write", "campaigns"),
    ("retrieve_planted_writing_job", "GET", "/api/planted-writing/{job_id}", "campaigns"),
    ("cancel_planted_writing_job", "POST", "/api/planted-writing/{job_id}/cancel", "campaigns"),
    ("resume_planted_writing_job", "POST", "/api/planted-writing/{job_id}/resume", "campaigns"),
    ("list_dispute_history", "GET", "/api/campaigns/{campaign_id}/disputes/{span_id}/history", "adjudication"),
    ("list_disputes", "GET", "/api/campaigns/{campaign_id}/disputes", "adjudication"),
    ("list_exports", "GET", "/api/exports", "sources and exports"),
    ("cancel_export", "POST", "/api/exports/{job_id}/cancel", "sources and exports"),
    ("resume_export", "POST", "/api/exports/{job_id}/resume", "sources and exports"),
    ("list_items", "GET", "/api/datasets/{dataset_id}/items", "datasets"),
    ("list_participants", "GET", "/api/campaigns/{campaign_id}/participants", "participants"),
    ("list_priming_figures", "GET", "/api/analytics/campaigns/{campaign_id}/priming", "priming"),
    ("list_runs", "GET", "/api/runs", "runs"),
    ("list_sample_estimates", "GET", "/api/analytics/campaigns/{campaign_id}/estimates", "labeled sets and estimates"),
    ("list_sources", "GET", "/api/datasets/{dataset_id}/sources", "sources and exports"),
    ("list_tokens", "GET", "/api/tokens", "tokens"),
    ("open_campaign", "POST", "/api/campaigns/{campaign_id}/open", "campaigns"),
    ("redo_dispute_decision", "POST", "/api/campaigns/{campaign_id}/disputes/redo", "adjudication"),
    ("redo_judgment", "POST", "/api/assignments/{assignment_id}/redo", "annotation"),
    ("reopen_training", "POST", "/api/campaigns/{campaign_id}/qualification/{username}/reopen", "campaigns"),
    ("resume_comparison", "POST", "/api/comparisons/{job_id}/resume", "comparisons"),
    ("resume_dhp_run", "POST", "/api/dhp/runs/{run_id}/resume", "dhp"),
    ("resume_run", "POST", "/api/runs/{run_id}/resume", "runs"),
    ("retrieve_assignment", "GET", "/api/assignments/{assignment_id}", "annotation"),
    ("retrieve_campaign", "GET", "/api/campaigns/{campaign_id}", "campaigns"),
    ("retrieve_campaign_analytics", "GET", "/api/analytics/campaigns/{campaign_id}", "analytics"),
    ("retrieve_campaign_analytics_table", "GET", "/api/analytics/campaigns/{campaign_id}/tables/{key}", "analytics"),
    ("retrieve_campaign_link", "GET", "/api/campaigns/{campaign_id}/link", "participants"),
    ("retrieve_campaign_ranking", "GET", "/api/analytics/campaigns/{campaign_id}/ranking", "analytics"),
    ("retrieve_campaign_confidence", "GET", "/api/analytics/campaigns/{campaign_id}/confidence", "analytics"),
    ("retrieve_campaign_routing", "GET", "/api/analytics/campaigns/{campaign_id}/routing", "analytics"),
    ("retrieve_campaign_esa", "GET", "/api/analytics/campaigns/{campaign_id}/esa", "analytics"),
    ("retrieve_campaign_mqm_scores", "GET", "/api/analytics/campaigns/{campaign_id}/mqm", "analytics"),
    ("retrieve_campaign_pairwise", "GET", "/api/analytics/campaigns/{campaign_id}/pairwise", "analytics"),
    ("retrieve_campaign_figures", "GET", "/api/analytics/campaigns/{campaign_id}/figures/{key}", "analytics"),
    ("retrieve_item_score", "GET", "/api/assignments/{assignment_id}/score", "annotation"),
    ("update_item_score", "PUT", "/api/assignments/{assignment_id}/score", "annotation"),
    ("retrieve_comparison", "GET", "/api/comparisons/{job_id}", "comparisons"),
    ("retrieve_dataset_analytics", "GET", "/api/analytics/datasets/{dataset_id}", "analytics"),
    ("retrieve_dataset_analytics_table", "GET", "/api/analytics/datasets/{dataset_id}/tables/{key}", "analytics"),
    ("retrieve_dataset_mqm_scores", "GET", "/api/analytics/datasets/{dataset_id}/mqm", "analytics"),
    ("retrieve_dataset_pairwise", "GET", "/api/analytics/datasets/{dataset_id}/pairwise", "analytics"),
    ("retrieve_dhp_run", "GET", "/api/dhp/runs/{run_id}", "dhp"),
    ("retrieve_export", "GET", "/api/exports/{job_id}", "sources and exports"),
    ("retrieve_labeled_card", "GET", "/api/analytics/campaigns/{campaign_id}/labeled/card",
     "labeled sets and estimates"),
    ("retrieve_labeling_campaign", "GET", "/api/datasets/{dataset_id}/labeling-campaign", "datasets"),
    ("retrieve_run", "GET", "/api/runs/{run_id}", "runs"),
    ("retrieve_survey_results", "GET", "/api/dhp/surveys/{survey_id}/results", "dhp"),
    ("reveal_assignment", "POST", "/api/assignments/{assignment_id}/reveal", "annotation"),
    ("revoke_campaign_link", "POST", "/api/campaigns/{campaign_id}/link/revoke", "participants"),
    ("revoke_token", "POST", "/api/tokens/{token_id}/revoke", "tokens"),
    ("undo_dispute_decision", "POST", "/api/campaigns/{campaign_id}/disputes/undo", "adjudication"),
    ("undo_judgment", "POST", "/api/assignments/{assignment_id}/undo", "annotation"),
    ("update_added_span", "PATCH", "/api/added-spans/{span_id}", "annotation"),
    ("update_dispute_decision", "PUT", "/api/campaigns/{campaign_id}/disputes/{span_id}", "adjudication"),
    ("update_judgment", "PATCH", "/api/assignments/{assignment_id}/judgments/{span_id}", "annotation"),
    ("update_judgment_occurrence", "PATCH", "/api/assignments/{assignment_id}/judgments/{span_id}/occurrence",
     "annotation"),
    ("update_labeling_campaign", "PUT", "/api/datasets/{dataset_id}/labeling-campaign", "datasets"),
    ("update_settings", "PATCH", "/api/me/settings", "annotation"),
}


def test_api_operations_keep_their_ids_paths_and_tags():
    from config.api import api

    schema = api.get_openapi_schema()
    served = {(op["operationId"], method.upper(), path, *op["tags"])
              for path, methods in schema["paths"].items() for method, op in methods.items()}
    assert served == OPERATIONS
