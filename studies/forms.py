"""The form that sets up a study: a campaign with its arms, checks and participant link."""

from __future__ import annotations

import json
from typing import Any

from django import forms
from django.urls import reverse_lazy

from accounts.models import Role, User
from annotator.engine.categories import CategoryError, default_categories, parse_category_names
from annotator.models import Campaign, SampleDesign
from annotator.services.campaigns import DEFAULT_GUIDELINES
from annotator.services.routing import RoutingSpec
from annotator.services.sampling import SampleSpec
from corpus import protocols
from corpus.cleaning import INT32_MAX
from corpus.models import Dataset, Item
from corpus.protocols.errors import ProtocolError
from errors.placing import refusal_place
from evaluation.models import EvaluatorRun
from evaluation.selectors import own_runs
from jobs.models import JobStatus
from quality.services import CheckSettings
from stats.routing import ACTIVE, THRESHOLD, RoutingError
from studies.participants import LinkSettings, ParticipationError, link_settings_check


class CampaignForm(forms.Form):
    """Choose a dataset first; the runs, aspects and items offered then come from that dataset."""

    # Picking a dataset re-renders the form for it, with what was typed so far (hx-include).
    DATASET_PICKED = {"hx-get": reverse_lazy("campaign_new"), "hx-target": "#campaign-form", "hx-swap": "outerHTML",
                      "hx-include": "closest form"}
    # (legend, element id, field names): the one form layout shows each group as a fieldset.
    GROUPS: tuple[tuple[str, str, tuple[str, ...]], ...] = (
        ("", "", ("name", "dataset")),
        # Before the runs: the protocol decides whether runs are judged, only pre-fill, or may be left out.
        ("Protocol", "protocol-settings", ("protocol", "protocol_options")),
        ("", "", ("runs", "aspects", "annotators", "annotators_per_item", "control_items", "reviewers")),
        ("Designed sample", "sample-settings", ("sample_strata", "sample_per_stratum", "sample_total")),
        ("Routed judging", "routing-settings", ("routing_design", "routing_min_k", "routing_audit_rate",
                                                 "routing_min_probability", "routing_target_ci_width",
                                                 "routing_budget_spans")),
        ("", "", ("control_arm",)),
        ("Participant link", "link-settings", (
            "link_enabled", "link_cap", "link_expires", "items_per_participant", "release_after_minutes",
            "time_limit_minutes", "pass_code", "fail_code", "completion_url", "consent")),
        ("Quality checks", "quality-check-settings", (
            "decoys", "planted", "vigilance_min", "qualification_items", "qualification_pass", "exclude_flagged",
            "planted_near_duplicates", "accept_weak_checks")),
        ("", "", ("seed", "categories", "guidelines")),
    )

    name = forms.CharField(max_length=200)
    dataset = forms.ModelChoiceField(queryset=Dataset.objects.order_by("name"), empty_label="— choose a dataset —",
                                     widget=forms.Select(attrs=DATASET_PICKED))
    # Required by the protocols that judge machine spans (clean); under MQM and ESA runs only pre-fill.
    runs = forms.MultipleChoiceField(widget=forms.CheckboxSelectMultiple, required=False,
                                     label="Evaluator runs to judge (shown to annotators as Evaluator A, B, …)",
                                     help_text="Under MQM or ESA optional: their spans pre-fill the annotators' own; "
                                               "without runs every output of the dataset is rated.")
    aspects = forms.MultipleChoiceField(widget=forms.CheckboxSelectMultiple, required=False)
    annotators = forms.ModelMultipleChoiceField(
        queryset=User.objects.filter(role=Role.ANNOTATOR, is_active=True).order_by("username"),
        widget=forms.CheckboxSelectMultiple, required=False,
        help_text="Registered annotators; none is fine when participants join by a link.",
    )
    annotators_per_item = forms.IntegerField(min_value=1, max_value=50, initial=2,
                                             help_text="Overlap: how many annotators judge each item.")
    protocol = forms.ChoiceField(
        choices=protocols.CHOICES, initial=protocols.DEFAULT, required=False,  # not sent: the default
        help_text="OpeNLGauge: annotators accept or reject each error span the evaluator runs found, and add what "
                  "they missed. MQM: annotators mark every error themselves, with a category from the error tree "
                  "and a severity; the output's score is the sum of their weights. ESA: annotators mark errors as "
                  "Minor or Major, then score the output from 0 to 100. Under MQM and ESA nobody gives verdicts on "
                  "machine spans: runs only pre-fill, so decoys, routing and a sample of spans do not apply.",
    )
    protocol_options = forms.CharField(
        required=False, max_length=50_000, widget=forms.Textarea(attrs={"rows": 4}), label="Protocol options (JSON)",
        help_text='Empty: the protocol\'s defaults. MQM: {"tree": [...], "weights": {...}}, a tree and weights of '
                  'the campaign\'s own; ESA: {"major_from": 4}, the machine severity from which a pre-filled span '
                  "is Major. OpeNLGauge takes none.",
    )
    control_items = forms.CharField(
        required=False, help_text="Item ids (external ids, comma-separated) used as control items for everyone.",
    )
    control_arm = forms.FloatField(
        required=False, min_value=0, max_value=1, initial=0, label="Control arm",
        help_text="Share of outputs (0-1) first marked without the machine's spans by half of their annotators, "
                  "then judged as usual: measures the machine's recall and how much its spans sway the experts.",
    )
    seed = forms.IntegerField(initial=0, min_value=0, max_value=2**31 - 1,
                              help_text="Seeds the per-annotator item order and the neutral labels.")
    guidelines = forms.CharField(widget=forms.Textarea(attrs={"rows": 14}), initial=DEFAULT_GUIDELINES,
                                 help_text="Markdown shown to the annotators.")
    categories = forms.CharField(
        required=False, widget=forms.Textarea(attrs={"rows": 2}),
        help_text="Categories experts pick for an added error, comma-separated, in key order (1-9). "
                  "Empty: the task's defaults.",
    )

    reviewers = forms.ModelMultipleChoiceField(
        queryset=User.objects.filter(role__in=[Role.RESEARCHER, Role.ADMIN], is_active=True).order_by("username"),
        widget=forms.CheckboxSelectMultiple, required=False,
        help_text="Who adjudicates disagreements. None chosen: every researcher and admin.",
    )
    sample_strata = forms.ChoiceField(
        required=False, label="Judge a sample",
        choices=[("", "No: judge every machine span"), *SampleDesign.Strata.choices],
        help_text="Judge a stratified random sample of each evaluator's spans (strata: evaluator, and optionally "
                  "category or severity); the analytics then estimate Span OK and Exp. correct for all spans. "
                  "The seed below also seeds the draw.",
    )
    sample_per_stratum = forms.IntegerField(required=False, min_value=1, max_value=INT32_MAX, label="Spans per stratum")
    sample_total = forms.IntegerField(required=False, min_value=1, max_value=INT32_MAX,
                                      label="or spans per evaluator in all")
    # Routed judging (annotator.services.routing): the API's "routing" object.
    routing_min_k = forms.IntegerField(
        required=False, min_value=1, max_value=1000, label="Resolve spans at least this many models flagged",
        help_text="Empty: experts judge every span. Otherwise spans that at least this many of an ensemble's models "
                  "flagged are resolved as errors without an expert, but for a random audit; the analytics report "
                  "design-weighted figures for all spans. Not with a sample.",
    )
    routing_audit_rate = forms.FloatField(required=False, min_value=0, max_value=1, initial=0.2, label="Audit rate",
                                          help_text="Share (0-1] of those spans experts judge all the same.")
    routing_design = forms.ChoiceField(
        required=False, label="Routing design",
        choices=[("", "Threshold, when a number of models is given above"), (THRESHOLD, "Threshold"),
                 (ACTIVE, "Active: batches drawn by the predicted uncertainty")],
        help_text="Active: experts judge batches drawn with probabilities that follow a calibrated predictor's "
                  "uncertainty (the first uniform), topped up while the campaign runs until the target width or the "
                  "budget; the figures are prediction-powered. Leave the number of models and the audit rate empty.",
    )
    routing_min_probability = forms.FloatField(
        required=False, label="Lowest inclusion probability",
        help_text="Active: no span's chance of reaching an expert in a batch is below this (default 0.05).")
    routing_target_ci_width = forms.FloatField(
        required=False, label="Target full 95% width",
        help_text="Active: top up until each evaluator's interval is this wide (0.06 = 6 points), or give a budget.")
    routing_budget_spans = forms.IntegerField(required=False, label="or expert judgments per evaluator",
                                              help_text="Active: the spans experts judge per evaluator, in all.")
    # A participant link (studies.participants): the API's "link" object and the study fields.
    link_enabled = forms.BooleanField(required=False, label="Recruit participants by a link",
                                      help_text="/join/<token>/ for Prolific, MTurk or an e-mail.")
    link_cap = forms.IntegerField(required=False, min_value=1, max_value=INT32_MAX,
                                  label="At most this many participants")
    link_expires = forms.DateTimeField(required=False, label="Link expires", help_text="e.g. 2026-12-01 18:00")
    consent = forms.CharField(required=False, widget=forms.Textarea(attrs={"rows": 5}),
                              help_text="Markdown shown before the Start button.")
    items_per_participant = forms.IntegerField(required=False, min_value=1, max_value=INT32_MAX)
    release_after_minutes = forms.IntegerField(required=False, min_value=1, max_value=INT32_MAX, initial=30,
                                               help_text="Idle this long, a participant's open items go back.")
    time_limit_minutes = forms.IntegerField(required=False, min_value=1, max_value=INT32_MAX,
                                            help_text="Empty: no limit.")
    pass_code = forms.CharField(required=False, max_length=64, help_text="The completion code.")
    fail_code = forms.CharField(required=False, max_length=64,
                                help_text="The screened-out code, for flagged participants (optional).")
    completion_url = forms.CharField(required=False, max_length=2000,
                                     help_text="https://…?cc={code}: where participants go at the end.")
    # Quality checks (docs/guides/quality-checks.md): the twins of the API's fields.
    decoys = forms.FloatField(initial=0.0, required=False, min_value=0, max_value=0.5, label="Decoys",
                              help_text="Share of each annotator's machine spans that are decoys (0 = off).")
    planted = forms.FloatField(initial=0.0, required=False, min_value=0, max_value=0.5, label="Planted errors",
                               help_text="Share of each annotator's outputs with a planted error (0 = off).")
    vigilance_min = forms.FloatField(initial=0.6, required=False, min_value=0, max_value=1, label="Vigilance minimum",
                                     help_text="Flag when the upper 95% bound of a check's rate is below this.")
    qualification_items = forms.CharField(
        required=False, label="Training items",
        help_text="Item ids (external ids, comma-separated; id@system where an id has outputs of several systems) "
                  "every annotator judges first, with the key after each.",
    )
    qualification_pass = forms.FloatField(initial=0.8, required=False, min_value=0, max_value=1, label="Pass mark")
    exclude_flagged = forms.BooleanField(required=False, label="Leave flagged annotators out of the figures")
    planted_near_duplicates = forms.BooleanField(
        required=False, label="Planted copies may be of outputs their judge also judges",
        help_text="Off: a planted copy is never one fact apart from an output in the same queue.")
    accept_weak_checks = forms.BooleanField(
        required=False, label="Create it even if the checks can flag nobody",
        help_text="A link study with a fail code is refused when no check could flag anyone; "
                  "Check the design shows each check's power first.")

    def __init__(self, *args: object, dataset: Dataset | None = None, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)
        self.dataset_obj = dataset
        runs = EvaluatorRun.objects.none()
        if dataset is not None:
            # A cancelled run is not offered: its answers are incomplete by decision.
            runs = (own_runs().filter(dataset=dataset).exclude(status=JobStatus.CANCELLED)
                    .select_related("aspect", "evaluator").order_by("label"))
            self.fields["categories"].initial = ", ".join(c["name"] for c in default_categories(dataset.task.slug))
        self.run_objects = {str(r.pk): r for r in runs}
        self.fields["runs"].choices = [
            (pk, f"{r.label} — {r.evaluator.name} ({r.aspect.name}, {r.get_status_display()})"
                 + (" — SIMULATED: no model was called" if r.simulated else ""))
            for pk, r in self.run_objects.items()
        ]
        self.simulated_runs = [r.label for r in self.run_objects.values() if r.simulated]
        aspect_names = sorted({r.aspect.name for r in self.run_objects.values()})
        self.fields["aspects"].choices = [(a, a) for a in aspect_names]
        if not self.run_objects:
            self.fields["runs"].help_text = ("This dataset has no evaluator runs yet." if dataset is not None
                                             else "Choose a dataset first: its evaluator runs are listed here.")

    @property
    def field_groups(self) -> list[tuple[str, str, list[forms.BoundField]]]:
        """The fields in their groups, for the one form layout (templates/forms/form.html)."""
        return [(legend, element_id, [self[name] for name in names]) for legend, element_id, names in self.GROUPS]

    def clean_categories(self) -> list[str]:
        try:
            return [c["name"] for c in parse_category_names(self.cleaned_data["categories"])]
        except CategoryError as exc:
            raise forms.ValidationError(str(exc)) from None

    def clean_protocol(self) -> str:
        return self.cleaned_data["protocol"] or protocols.DEFAULT

    def clean_protocol_options(self) -> dict[str, Any]:
        """The options as the protocol checks them, the same check the API's `protocol_options` gets."""
        raw = self.cleaned_data["protocol_options"].strip()
        value = None
        if raw:
            try:
                value = json.loads(raw, parse_constant=_no_constant)
            except (ValueError, RecursionError) as exc:  # JSONDecodeError is a ValueError; so is NaN refused
                raise forms.ValidationError(f"Not valid JSON: {exc}") from None
        name = self.cleaned_data.get("protocol")
        if name is None:  # the protocol itself is refused at its own field
            return {}
        try:
            return protocols.get(name).clean_options(value)
        except ProtocolError as exc:
            raise forms.ValidationError(str(exc)) from None

    def clean_control_items(self) -> list[int]:
        return self._items("control_items")

    def clean_qualification_items(self) -> list[int]:
        return self._items("qualification_items")

    def _items(self, field: str) -> list[int]:
        """The items named by external id, or by `id@system` where one id names an output of several systems
        (refused naming the matches, never one picked silently)."""
        raw = [part.strip() for part in self.cleaned_data[field].split(",") if part.strip()]
        if not raw:
            return []
        dataset = self.cleaned_data.get("dataset") or self.dataset_obj
        own = Item.objects.filter(dataset=dataset, derived_from__isnull=True)
        found: dict[str, list[tuple[str, int]]] = {}
        plain = set(raw) | {r.rpartition("@")[0] for r in raw if "@" in r}
        for external_id, system, pk in own.filter(external_id__in=plain).values_list("external_id", "system", "pk"):
            found.setdefault(external_id, []).append((system, pk))
        picked, unknown, several = [], [], []
        for name in dict.fromkeys(raw):
            matches = found.get(name)
            if matches is None and "@" in name:  # id@system: the output of that system
                external_id, _, system = name.rpartition("@")
                matches = [m for m in found.get(external_id, []) if m[0] == system] or None
            if matches is None:
                unknown.append(name)
            elif len(matches) > 1:
                several.append(f"{name} ({', '.join(f'{name}@{system}' for system, _ in sorted(matches))})")
            else:
                picked.append(matches[0][1])
        if unknown:
            raise forms.ValidationError(f"Not items of this dataset: {', '.join(unknown)}")
        if several:
            raise forms.ValidationError(f"Each of these ids names an output of several systems; pick one by system: "
                                        f"{'; '.join(several)}")
        return picked

    def clean(self) -> dict:
        data = super().clean()
        annotators = data.get("annotators")
        per_item = data.get("annotators_per_item")
        data["link"] = self._link(data)
        if not annotators and not data.get("link_enabled"):
            self.add_error("annotators", "Choose annotators, or recruit participants by a link.")
        elif annotators and not data.get("link_enabled") and per_item and per_item > len(annotators):
            self.add_error("annotators_per_item", f"Only {len(annotators)} annotators chosen.")
        data["run_objects"] = [self.run_objects[pk] for pk in data.get("runs", []) if pk in self.run_objects]
        protocol = protocols.PROTOCOLS.get(data.get("protocol", ""))
        if protocol is not None and protocol.judges_machine_spans and not data["run_objects"] \
                and "runs" not in self.errors:
            self.add_error("runs", "Choose at least one run: under this protocol annotators give verdicts on the "
                                   "runs' spans.")
        data["checks"] = CheckSettings(
            decoys=data.get("decoys") or 0.0, planted=data.get("planted") or 0.0,
            vigilance_min=data.get("vigilance_min") if data.get("vigilance_min") is not None else 0.6,
            qualification_items=tuple(data.get("qualification_items") or ()),
            qualification_pass=data.get("qualification_pass") if data.get("qualification_pass") is not None else 0.8,
            exclude_flagged=bool(data.get("exclude_flagged")),
            planted_near_duplicates=bool(data.get("planted_near_duplicates")),
        )
        data["sample"] = None
        if data.get("sample_strata") and not {"sample_per_stratum", "sample_total"} & set(self.errors):
            per, total = data.get("sample_per_stratum"), data.get("sample_total")
            if (per is None) == (total is None):
                self.add_error("sample_per_stratum", "Give either a size per stratum or a total per evaluator.")
            else:
                data["sample"] = SampleSpec(strata=data["sample_strata"], per_stratum=per, total=total,
                                            seed=data.get("seed") or 0)
        data["routing"] = self._routing(data)
        return data

    def _routing(self, data: dict) -> RoutingSpec | None:
        """The routing settings, checked; a refusal is shown at the field it names."""
        design = data.get("routing_design") or (THRESHOLD if data.get("routing_min_k") is not None else "")
        if not design:
            return None
        if data.get("sample_strata"):
            self.add_error("routing_design" if data.get("routing_design") else "routing_min_k",
                           "sample, routing: a campaign either judges a sample or routes its spans, not both.")
            return None
        rate = data.get("routing_audit_rate")
        if design == THRESHOLD:
            spec = RoutingSpec(min_k=data.get("routing_min_k"), audit_rate=0.2 if rate is None else rate,
                               min_probability=data.get("routing_min_probability"),
                               target_ci_width=data.get("routing_target_ci_width"),
                               budget_spans=data.get("routing_budget_spans"), seed=data.get("seed") or 0)
        else:  # the audit rate's field has an initial value: the active design reads only its own fields
            spec = RoutingSpec(design=design, min_probability=data.get("routing_min_probability"),
                               target_ci_width=data.get("routing_target_ci_width"),
                               budget_spans=data.get("routing_budget_spans"), min_k=data.get("routing_min_k"),
                               seed=data.get("seed") or 0)
        try:
            spec.check()
        except RoutingError as exc:
            refusal_place(self, exc)
            return None
        return spec

    def _link(self, data: dict) -> LinkSettings | None:
        """The link settings, checked by the service; its refusal is shown at the field it names."""
        if not data.get("link_enabled"):
            return None
        if not data.get("items_per_participant"):
            self.add_error("items_per_participant", "Required with a participant link.")
            return None
        spec = LinkSettings(
            cap=data.get("link_cap"), expires=data.get("link_expires"), consent=data.get("consent") or "",
            items_per_participant=data["items_per_participant"],
            release_after_minutes=data.get("release_after_minutes") or 30,
            time_limit_minutes=data.get("time_limit_minutes"), pass_code=data.get("pass_code") or "",
            fail_code=data.get("fail_code") or "", completion_url=data.get("completion_url") or None,
        )
        try:
            link_settings_check(spec)
        except ParticipationError as exc:
            refusal_place(self, exc)
            return None
        return spec


def _no_constant(name: str) -> float:
    """JSON has no NaN or Infinity, though Python's reader takes them."""
    raise ValueError(f"{name} is not a JSON number")


class PlanForm(forms.Form):
    """Plan a study from a pilot campaign (annotator.selectors.pilot): `manage.py plan_study`'s twin."""

    plan_from = forms.ModelChoiceField(queryset=Campaign.objects.order_by("name"), label="Pilot campaign",
                                       empty_label="— choose a finished or pilot campaign —")
    plan_outputs = forms.IntegerField(min_value=1, max_value=1_000_000, label="Outputs", initial=200)
    plan_judges = forms.IntegerField(min_value=1, max_value=50, label="Judges per output", initial=2)
    plan_difference = forms.FloatField(required=False, min_value=0.001, max_value=0.99, label="Difference to detect",
                                       help_text="Span accuracy difference between two evaluators, as a share "
                                                 "(0.05 = 5 points). Empty: no power.")
