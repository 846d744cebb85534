"""Ninja schemas of the annotation API (inputs and outputs kept separate)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated, Any

from ninja import Field, Schema
from pydantic import ConfigDict, create_model, field_validator

from corpus.cleaning import INT32_MAX, INT64_MAX
from corpus.protocols import opennlgauge as protocol

# A row id: beyond PostgreSQL's bigint it names nothing, and is refused as a 422 naming the field.
RowId = Annotated[int, Field(ge=-INT64_MAX - 1, le=INT64_MAX)]
Count32 = Annotated[int, Field(le=INT32_MAX)]  # stored in an `integer` column
# An error with no characters to mark (ESA's missing content; any protocol's unlocated error) has no offsets.
UNPLACED = "null when the error has no place in the output (ESA's missing content, an unlocated error)"


class DatasetOut(Schema):
    id: int
    name: str
    task: str
    input_headers: list[str]
    output_header: str
    score_aspects: list[str]
    n_items: int


class ItemOut(Schema):
    id: int
    external_id: str
    system: str
    inputs: dict[str, str]
    output: str
    human_scores: dict[str, float]


# ---- annotation work (annotator-facing: neutral labels only, never run, evaluator, model or source) ---------


class AssignmentOut(Schema):
    id: int
    campaign_id: int
    campaign: str
    order: int
    status: str
    seconds_spent: int  # the seconds the item screen's timer reported; the study's times are the two below
    active_seconds: float  # active time (annotator.selectors.worktime)
    wall_seconds: float  # wall time: the clock from the first signal on the item to the last


class JudgmentOut(Schema):
    span_id: int
    span_verdict: str
    explanation_verdict: str
    flags: list[str]
    comment: str
    corrected_severity: int | None
    complete: bool
    version: int = 0
    # the pick among an ambiguous span's occurrences: picked with offsets, or picked "none" (offsets null)
    picked: bool = False
    picked_start: int | None = None
    picked_end: int | None = None


class OccurrenceOut(Schema):
    start: int
    end: int


class ErrorOut(Schema):
    span_id: int
    number: int
    label: str
    text: str
    # the offsets that count for the assignee: their pick once picked, else the machine's; null when unplaced
    start: int | None = Field(..., description=f"character offset into the output; {UNPLACED}")
    end: int | None = Field(..., description=f"exclusive end offset; {UNPLACED}")
    match: str
    ambiguous: bool  # the location occurs more than once and neither its notes nor the explanation said which
    explanation: str
    severity: int | None
    category: str
    judgment: JudgmentOut | None
    occurrences: list[OccurrenceOut] = []  # an ambiguous span's candidates, in text order; empty otherwise
    picked: bool = False  # the assignee picked an occurrence (or none): start/end are the pick
    machine_start: int | None = None  # the aligner's offsets, whatever the pick
    machine_end: int | None = None


class OccurrenceIn(Schema):
    """Exactly one of index (0-based into the card's occurrences), none, reset; version as in JudgmentFieldsIn."""

    index: int | None = None
    none: bool = False
    reset: bool = False
    version: int | None = None
    ms: float | None = None


class AddedSpanOut(Schema):
    id: int
    start: int | None = Field(..., description=f"character offset into the output; {UNPLACED}")
    end: int | None = Field(..., description=f"exclusive end offset; {UNPLACED}")
    text: str
    aspect: str
    category: str
    severity: int | None
    note: str


class WorkItemOut(Schema):
    inputs: dict[str, str]
    output: str


class AssignmentDetailOut(AssignmentOut):
    phase: str  # annotator.engine.phases: while "marking", errors is empty and nothing tells how many there are
    aspects: list[str]
    item: WorkItemOut
    errors: list[ErrorOut]
    added_spans: list[AddedSpanOut]
    n_complete: int | None  # None while marking
    n_total: int | None


# Only the fields given are changed; `corrected_severity: null` clears a correction. One optional field per
# protocol flag, so that a new flag needs no edit here.
JudgmentFieldsIn = create_model(
    "JudgmentFieldsIn",
    __base__=Schema,
    span_verdict=(str | None, None),
    explanation_verdict=(str | None, None),
    **{flag: (bool | None, None) for flag in protocol.FLAG_VALUES},
    comment=(str | None, None),
    corrected_severity=(int | None, None),
    # Not a field: the judgment version the change was made against; a stale one is refused with 409.
    version=(int | None, None),
    # Not a field: milliseconds from the card's focus to this save (telemetry; clamped to 0..10 minutes).
    ms=(float | None, None),
)


class JudgmentIn(JudgmentFieldsIn):
    span_id: int


class UndoOut(Schema):
    """An undo or redo step: `undone` is true when a step was taken (for redo too); `field` names the judgment
    field, or is "added_span" for an added error; `reopened` says a finished item is open again."""

    undone: bool
    field: str | None = None
    judgment: JudgmentOut | None = None
    message: str = ""
    reopened: bool = False


class AddedSpanIn(Schema):
    start: int | None = Field(None, description="character offset into the output; null (with end) only for the "
                                                "protocol's unlocated category, ESA's missing content")
    end: int | None = Field(None, description="exclusive end offset; null as start is")
    aspect: str | None = None
    category: str = ""
    severity: int | None = None
    note: str = ""
    ms: float | None = None  # milliseconds from the text's focus to this save (telemetry)


class AddedSpanPatchIn(Schema):
    start: int | None = None
    end: int | None = None
    category: str | None = None
    severity: int | None = None
    note: str | None = None
    ms: float | None = None


class FinishIn(Schema):
    seconds: int = 0


class ControlKeyIn(Schema):
    span_id: RowId
    span_verdict: str
    explanation_verdict: str = ""
    note: str = ""  # shown beside the key of a qualification (training) item


class SampleIn(Schema):
    """Judge a stratified random sample of each evaluator's spans: strata 'evaluator', 'evaluator+category'
    or 'evaluator+severity'; exactly one of per_stratum or total (per evaluator); a seed."""

    strata: str = "evaluator"
    per_stratum: int | None = Field(None, ge=1, le=INT32_MAX)
    total: int | None = Field(None, ge=1, le=INT32_MAX)
    seed: int = Field(0, ge=0, le=INT32_MAX)


class RoutingIn(Schema):
    """Routed judging, exclusive with `sample`. `design` "threshold" (the default): spans that at least `min_k` of
    an ensemble's models flagged are resolved without an expert (recorded as `auto`, verdict Error), except a
    random audit of them at `audit_rate` (0 < rate <= 1) that experts judge like any span; the others go to
    experts. `design` "active": experts judge batches drawn with probabilities that follow a calibrated
    predictor's uncertainty, none below `min_probability` (default 0.05), the first uniform, topped up until
    each evaluator's full 95% width is `target_ci_width` or its `budget_spans` judgments are spent (exactly one of
    the two); the figures are prediction-powered (`estimator` "ppi++"). A setting of the other design is a 422
    naming it."""

    model_config = ConfigDict(extra="forbid")

    design: str = "threshold"
    min_k: int | None = None
    audit_rate: float | None = None
    min_probability: float | None = None
    target_ci_width: float | None = None
    budget_spans: int | None = None


class LinkIn(Schema):
    """A participant link: `/join/<token>/`, open while enabled, not expired and under the cap."""

    enabled: bool = True
    cap: Count32 | None = None
    expires: datetime | None = None

    @field_validator("expires")
    @classmethod
    def _expires_in_range(cls, value: datetime | None) -> datetime | None:
        if value is not None:
            try:
                value.astimezone(UTC)
            except OverflowError:
                raise ValueError("the moment falls outside the years 1-9999 in UTC") from None
        return value


class QualificationIn(Schema):
    """Training items shown first, with their key after each; `pass` is the share of span verdicts that must
    equal the key."""

    items: list[RowId]
    pass_: float = Field(0.8, alias="pass")


class CampaignIn(Schema):
    name: str
    dataset_id: RowId
    run_ids: list[RowId]
    annotators: list[str]
    aspects: list[str] = []
    annotators_per_item: Count32 = 1
    guidelines: str = ""
    seed: int = 0
    item_ids: list[RowId] | None = None
    control_item_ids: list[RowId] = []
    control_verdicts: list[ControlKeyIn] = []
    reviewers: list[str] = []  # usernames; empty = every researcher and admin adjudicates
    sample: SampleIn | None = None
    routing: RoutingIn | None = None
    control_arm: float = 0.0  # share of outputs first marked without machine spans (annotator.engine.crossing)
    # A participant link and the study settings of those who join by it (studies.participants).
    link: LinkIn | None = None
    consent: str = ""
    items_per_participant: Count32 | None = None
    release_after_minutes: Count32 = 30
    time_limit_minutes: Count32 | None = None
    pass_code: str = ""
    fail_code: str = ""
    completion_url: str | None = None
    # Quality checks (docs/guides/quality-checks.md); out-of-range values are a 422 naming the field.
    decoys: float = 0.0
    planted: float = 0.0
    vigilance_min: float = 0.6
    qualification: QualificationIn | None = None
    exclude_flagged: bool = False
    planted_near_duplicates: bool = False  # planted copies of outputs their holder also judges (warned with the count)
    # The annotation protocol (docs: guides/mqm.md, guides/esa.md): opennlgauge (verdicts on machine spans), mqm
    # or esa.
    protocol: str = "opennlgauge"
    protocol_options: dict[str, Any] | None = None  # mqm: {"tree": [...], "weights": {...}}; esa: {"major_from": 4}
    # Create a link study with pass and fail codes even when its checks can flag nobody (else a 422 naming the fix).
    accept_weak_checks: bool = False
    # Answer the set-up report (200) and create nothing.
    dry_run: bool = False


class CampaignOut(Schema):
    id: int
    name: str
    dataset_id: int
    aspects: list[str]
    annotators_per_item: int
    n_assignments: int
    labels: dict[str, int]


class ControlAccuracyOut(Schema):
    annotator: str
    spans: int
    span_correct: int
    span_percent: float | None
    explanations: int
    explanation_correct: int
    explanation_percent: float | None


class ImportOut(Schema):
    dataset_id: int
    dataset: str
    created_items: int
    reused_items: int
    annotations: int
    spans: int
    judgments: int


class SettingsIn(Schema):
    """The signed-in user's item-screen settings; a field left out is left as it is."""

    auto_advance: bool | None = None


class SettingsOut(Schema):
    auto_advance: bool


class CampaignSummaryOut(Schema):
    id: int
    name: str
    dataset_id: int
    status: str
    aspects: list[str]
    annotators_per_item: int


class CampaignDetailOut(CampaignSummaryOut):
    guidelines: str
    n_assignments: int
    n_done: int


class TimeIn(Schema):
    seconds: int = Field(ge=0, le=86_400)


class AnnotationImportOut(Schema):
    dataset: str
    source: str
    tool: str
    annotations: int
    spans: int
    normalized: int
    no_error_outputs: int
    skipped: list[str]


# ---- a protocol's own steps on an item (MQM's errors; ESA's spans, missing content, done and score) ----------

class MqmErrorIn(Schema):
    start: int = Field(..., description="character offset into the output, or into the source when side is "
                                        "source (code points)")
    end: int = Field(..., description="exclusive end offset")
    side: str = Field("output", description="where the error lies: output (the translation) or source (an "
                                            "omission marked where the source says what is missing)")
    category: str = Field(..., description="a category of the campaign's error tree, e.g. Accuracy/Mistranslation")
    severity: str = Field(..., description="a severity by name: neutral, minor or major")
    note: str = ""
    ms: float | None = None


class MqmErrorOut(Schema):
    id: int
    start: int | None
    end: int | None
    side: str = Field(..., description="output or source: the text start and end count in")
    text: str
    category: str
    severity: str  # by name


class EsaSpanIn(Schema):
    start: int = Field(..., description="character offset into the output (code points)")
    end: int = Field(..., description="exclusive end offset")
    severity: str = Field(..., description="minor or major")
    ms: float | None = None


class EsaSpanPatchIn(Schema):
    severity: str | None = Field(None, description="re-grade: minor or major")
    start: int | None = Field(None, description="resize: the new start, sent with end")
    end: int | None = None
    ms: float | None = None


class EsaMissingIn(Schema):
    severity: str = Field(..., description="minor or major")
    ms: float | None = None


class EsaDoneIn(Schema):
    ms: float | None = Field(None, description="milliseconds from the item's opening to spans done")
    seconds: int = Field(0, description="active seconds to add (the screen's timer)")


class EsaScoreIn(Schema):
    score: int | str = Field(..., description="a whole number from 0 to 100")
    ms: float | None = None


class EsaSpanOut(Schema):
    id: int
    start: int | None = Field(..., description=f"character offset into the output; {UNPLACED}")
    end: int | None
    text: str
    severity: str  # by name
    missing: bool  # content missing at the end of the output (no place in the text)
    prefilled: bool  # an ESA^AI span that arrived pre-filled from the machine


class EsaStateOut(Schema):
    assignment_id: int
    arm: str  # ESA or ESA^AI
    prefilled: bool
    spans_done: bool
    score: int | None
    spans: list[EsaSpanOut]
