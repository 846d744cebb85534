"""Where a form shows a refusal: at the first of its fields the refusal names, else at the top of the form."""

from __future__ import annotations

import re
from collections.abc import Container, Mapping
from typing import Protocol

from errors import UserError


class _Form(Protocol):
    fields: Container[str]

    def add_error(self, field: str | None, error: str) -> None: ...


def form_field(exc: UserError, fields: Container[str], aliases: Mapping[str, str] | None = None) -> str | None:
    """Return the form field that shows `exc`: the first field it names that the form has, as spelled
    (`link.cap` is the form's `link_cap`) or by its head (`protocol_options.tree[2]` is `protocol_options`),
    after `aliases` (a service's name -> the form's, where the form spells it otherwise); None for none."""
    aliases = aliases or {}
    for named in exc.fields:
        for name in (named.replace(".", "_"), re.split(r"[.\[]", named)[0]):
            name = aliases.get(name, name)
            if name in fields:
                return name
    return None


def refusal_place(form: _Form, exc: UserError, aliases: Mapping[str, str] | None = None) -> None:
    """Show `exc` on `form` at its field (or at the top when it names none of the form's)."""
    form.add_error(form_field(exc, form.fields, aliases), str(exc))
