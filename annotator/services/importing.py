"""Import an item file, judgments included: the corpus importer plus a writer for the experts' verdicts.

Imported judgments hang on a closed campaign named after the dataset (one per dataset), with one done
assignment per (item, annotator), so that analytics count them like any campaign's.

A name in a file is only a claim: `"annotator": "expert2"` must not write under the real expert2's account.
Each name gets an import identity (an account that cannot log in, `User.imported_name` = the name) unless
the importer maps it explicitly to an existing user (`annotator_map`). Every judgment written gets an audit
row (JudgmentEvent, field "import") naming who imported it.
"""

from __future__ import annotations

import hashlib
import unicodedata
from collections.abc import Mapping
from pathlib import Path

from django.contrib.auth import get_user_model
from django.contrib.auth.validators import UnicodeUsernameValidator
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.db.models import Max
from django.utils.text import slugify

from accounts.models import Role
from annotator.engine.phases import Phase
from annotator.models import Assignment, Campaign, JudgmentEvent, SpanJudgment
from corpus import cleaning
from corpus.formats import FormatError, JudgmentRecord
from corpus.models import Dataset, Item
from corpus.services.importing import ImportReport, JudgedSpan
from corpus.services.importing import items_import as corpus_items_import

MAX_ANNOTATOR_NAME = 200  # User.imported_name
MAX_NAME = 200  # Dataset.name, Source.label, Annotation.aspect
IMPORT_EVENT_FIELD = "import"


def check_annotator_name(name: str) -> str:
    """Return `name` if a file may use it as an annotator name; raise FormatError naming the problem otherwise."""
    if not name.strip():
        raise FormatError("judgments", "field 'annotator' is blank")
    if len(name) > MAX_ANNOTATOR_NAME:
        raise FormatError("judgments", f"annotator {name[:40]!r}... is longer than {MAX_ANNOTATOR_NAME} characters")
    if any(unicodedata.category(ch).startswith("C") for ch in name):
        raise FormatError("judgments", f"annotator {name[:40]!r} contains a control character")
    return name


def identity_username(name: str) -> str:
    """Return the username of the import identity for `name`: `import.<slug>.<6 hex>`, valid under Django's
    username rules and unlike any name a person would pick (the hash keeps 'Expert 2' and 'expert-2' apart)."""
    slug = slugify(name)[:100] or "annotator"
    digest = hashlib.sha256(name.encode("utf-8")).hexdigest()[:6]
    username = f"import.{slug}.{digest}"
    UnicodeUsernameValidator()(username)
    return username


def resolve_annotator_map(annotator_map: Mapping[str, str]) -> dict[str, int]:
    """Return file name -> user pk for an explicit mapping; refuse unknown usernames before anything is read."""
    users = get_user_model().objects.filter(username__in=set(annotator_map.values()), imported_name="")
    found = {u.username: u.pk for u in users}
    unknown = sorted({u for u in annotator_map.values() if u not in found})
    if unknown:
        raise FormatError("--map-annotator", f"no such user: {', '.join(unknown)}")
    return {name: found[username] for name, username in annotator_map.items()}


def _pick(judgment: JudgmentRecord) -> dict[str, object]:
    """The columns of an exported occurrence pick (SpanJudgment.picked_*); none when the expert did not pick."""
    picked = judgment.get("occurrence")
    if picked is None:
        return {}
    return {"picked_start": picked["start"], "picked_end": picked["end"], "picked_none": picked["start"] is None}


class _JudgmentWriter:
    def __init__(self, *, mapped: dict[str, int], importer_pk: int | None) -> None:
        self.campaign: Campaign | None = None
        self.users: dict[str, int] = dict(mapped)
        self.importer_pk = importer_pk
        self.assignments: dict[tuple[int, int], int] = {}
        self.orders: dict[int, int] = {}

    def __call__(self, dataset: Dataset, judged: list[JudgedSpan]) -> int:
        self._refuse_twice(judged)
        rows = [
            SpanJudgment(
                span=span, annotator_id=self._user(j["annotator"]),
                assignment_id=self._assignment(dataset, item_pk, self._user(j["annotator"])),
                span_verdict=j["span_verdict"] or "", explanation_verdict=j["explanation_verdict"] or "",
                comment=j["comment"], **dict.fromkeys(j["flags"], True), **_pick(j),
            )
            for span, item_pk, judgments in judged
            for j in judgments
        ]
        rows = SpanJudgment.objects.bulk_create(rows)
        JudgmentEvent.objects.bulk_create(
            JudgmentEvent(
                judgment=row, user_id=self.importer_pk or row.annotator_id, field=IMPORT_EVENT_FIELD,
                new_value=f"imported into dataset {dataset.name!r}: span {row.span_verdict or '-'}, "
                          f"explanation {row.explanation_verdict or '-'}",
            )
            for row in rows
        )
        return len(rows)

    def _refuse_twice(self, judged: list[JudgedSpan]) -> None:
        """One judgment per annotator and span (a database constraint): a file that judges a span twice under
        one name (or two names mapped to one user) is refused naming the span, before anything is written."""
        for span, item_pk, judgments in judged:
            seen: dict[int, str] = {}
            for j in judgments:
                user_pk = self._user(j["annotator"])
                if user_pk in seen:
                    names = repr(j["annotator"]) if seen[user_pk] == j["annotator"] else (
                        f"{seen[user_pk]!r} and {j['annotator']!r} (one user)")
                    external = Item.objects.filter(pk=item_pk).values_list("external_id", flat=True).first()
                    where = f"item {external!r}"
                    raise FormatError(
                        "judgments", f"{where}: span {span.start}-{span.end} ({span.text[:40]!r}) is judged twice "
                                     f"by annotator {names}; keep one judgment per annotator and span")
                seen[user_pk] = j["annotator"]

    def _user(self, name: str) -> int:
        if name not in self.users:
            check_annotator_name(name)
            model = get_user_model()
            user = model.objects.filter(imported_name=name).first()
            if user is None:
                try:
                    with transaction.atomic():
                        user = model(username=identity_username(name), imported_name=name, role=Role.ANNOTATOR,
                                     is_active=False)
                        user.set_unusable_password()
                        user.save(force_insert=True)
                except (IntegrityError, ValidationError):
                    raise FormatError("judgments", f"cannot make an import identity for annotator {name!r}: "
                                                   f"the username {identity_username(name)!r} is taken") from None
            self.users[name] = user.pk
        return self.users[name]

    def _assignment(self, dataset: Dataset, item_pk: int, user_pk: int) -> int:
        if self.campaign is None:
            self.campaign, _ = Campaign.objects.get_or_create(
                name=f"Imported judgments: {dataset.name}"[:200],
                defaults={"dataset": dataset, "status": Campaign.Status.CLOSED},
            )
        key = (item_pk, user_pk)
        if key not in self.assignments:
            assignment = Assignment.objects.filter(
                campaign=self.campaign, item_id=item_pk, annotator_id=user_pk
            ).first()
            if assignment is None:
                if user_pk not in self.orders:
                    top = Assignment.objects.filter(campaign=self.campaign, annotator_id=user_pk).aggregate(
                        m=Max("order")
                    )["m"]
                    self.orders[user_pk] = top or 0
                self.orders[user_pk] += 1
                assignment = Assignment.objects.create(
                    campaign=self.campaign, item_id=item_pk, annotator_id=user_pk, order=self.orders[user_pk],
                    status=Assignment.Status.DONE, phase=Phase.DONE,
                )
            self.assignments[key] = assignment.pk
        return self.assignments[key]


def _check_name(field: str, value: str, *, required: bool) -> None:
    """Names given with the import (not read from the file): not blank when required, fitting their columns,
    storable text (the one rule, corpus.cleaning.check_field). The message names the option (`--dataset`)."""
    cleaning.check_field(value, f"--{field}", max_length=MAX_NAME, required=required, error=_option_error,
                         field=field, identifier=True)


def _option_error(message: str, *, field: str) -> FormatError:
    """check_field's refusal of the option `--FIELD` as a FormatError about the field FIELD."""
    option = f"--{field}"
    return FormatError(option, message.removeprefix(f"{option}: "), field=field)


def items_import(
    *, path: Path, dataset_name: str, task_slug: str, source: str = "gold", aspect: str = "", user=None,
    file_name: str = "", annotator_map: Mapping[str, str] | None = None,
) -> ImportReport:
    """Import `path` like the corpus importer, storing the judgments it carries too (one transaction).

    Judgments go to import identities, except names in `annotator_map` (file name -> existing username)."""
    _check_name("dataset", dataset_name, required=True)
    _check_name("source", source, required=True)
    _check_name("aspect", aspect, required=False)
    mapped = resolve_annotator_map(annotator_map or {})
    return corpus_items_import(
        path=path, dataset_name=dataset_name, task_slug=task_slug, source=source, aspect=aspect, user=user,
        on_judgments=_JudgmentWriter(mapped=mapped, importer_pk=getattr(user, "pk", None)), file_name=file_name,
    )
