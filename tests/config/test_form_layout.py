"""One form layout everywhere: label, field, help, and one error message beside the field."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.django_db

PAGES = ["/runs/new/", "/dhp/runs/new/", "/comparisons/new/", "/datasets/import/", "/campaigns/new/",
         "/accounts/login/"]


@pytest.mark.parametrize("path", PAGES)
def test_every_form_renders_through_the_one_layout(client, make_user, path):
    client.force_login(make_user("root", role="admin"))
    page = client.get(path).content.decode()
    assert 'class="form-field' in page and ('class="helptext"' in page or "login" in path), path
    assert "<ul class=\"errorlist" not in page and "<p><label" not in page  # neither as_p nor Django's lists


def test_a_field_error_is_shown_once_beside_its_field(client, make_user):
    client.force_login(make_user("root", role="admin"))
    page = client.post("/runs/new/", {"parallel": "0"}).content.decode()
    message = "Ensure this value is greater than or equal to 1."
    assert page.count(message) == 1
    assert f'<span class="field-error" role="alert" id="id_parallel_error">{message}</span>' in page
    assert 'class="errorlist' not in page
