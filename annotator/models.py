"""Campaigns, assignments, the experts' judgments of machine spans, and the errors experts add."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import F, Q

from annotator.engine.occurrences import Occurrence, effective_offsets, parse_pick, pick_text
from annotator.engine.phases import PHASE_LABELS, Phase
from corpus import protocols
from corpus.models import Dataset, ErrorSpan, Item, Source, SourceKind
from corpus.protocols import opennlgauge as protocol
from evaluation.models import EvaluatorRun
from stats.routing import ACTIVE, DESIGNS, THRESHOLD


class Campaign(models.Model):
    """A blind study: experts judge the spans of chosen evaluator runs on a dataset."""

    class Status(models.TextChoices):
        DRAFT = "draft", "Draft"
        OPEN = "open", "Open"
        CLOSED = "closed", "Closed"

    name = models.CharField(max_length=200, unique=True)
    dataset = models.ForeignKey(Dataset, on_delete=models.PROTECT, related_name="campaigns")
    aspects = models.JSONField(default=list, blank=True, help_text="Aspect names judged in this campaign.")
    runs = models.ManyToManyField(EvaluatorRun, through="CampaignRun", related_name="campaigns")
    annotators = models.ManyToManyField(settings.AUTH_USER_MODEL, blank=True, related_name="campaigns")
    annotators_per_item = models.PositiveSmallIntegerField(default=1)
    reviewers = models.ManyToManyField(
        settings.AUTH_USER_MODEL, blank=True, related_name="reviewing",
        help_text="Who adjudicates disagreements; empty = every researcher and admin.",
    )
    is_sampled = models.BooleanField(
        default=False, help_text="Judges a stratified sample of the machine spans (SampleDesign), not all.",
    )
    is_labeling = models.BooleanField(
        default=False, help_text="The dataset's labeling campaign: its judgments and decisions give the consensus "
                                 "a dataset export writes when no campaign is named (at most one per dataset).",
    )
    guidelines = models.TextField(blank=True, default="", help_text="Markdown shown to the annotators.")
    status = models.CharField(max_length=8, choices=Status.choices, default=Status.DRAFT)
    seed = models.IntegerField(default=0, help_text="Seeds the per-annotator item order.")
    categories = models.JSONField(
        default=list, blank=True,
        help_text="Keyed, coloured categories for added errors: [{key, name, colour}] (annotator.engine.categories).",
    )
    control_arm = models.FloatField(
        default=0.0,
        help_text="Share of outputs (seeded) in the control arm: marked from scratch before the machine spans show.",
    )
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    # Quality checks (docs/guides/quality-checks.md): known answers mixed into the work, and what follows.
    decoys = models.FloatField(default=0.0, help_text="Share of each annotator's machine spans that are decoys.")
    planted = models.FloatField(default=0.0, help_text="Share of each annotator's outputs with a planted error.")
    vigilance_min = models.FloatField(
        default=0.6, help_text="Flag an annotator when the upper 95% bound of a vigilance rate is below this."
    )
    qualification = models.JSONField(
        default=dict, blank=True, help_text='Training items and pass mark: {"items": [item ids], "pass": 0.8}.'
    )
    exclude_flagged = models.BooleanField(
        default=False, help_text="Leave flagged annotators out of Table 4, agreement, consensus and exports."
    )
    planted_near_duplicates = models.BooleanField(
        default=False, help_text="Planted copies may be of outputs their holder also judges (one fact apart); off: "
                                 "only of outputs outside the holder's queue."
    )
    # The annotation protocol (corpus.protocols): what the item screen asks, how errors are checked and scored.
    protocol = models.CharField(max_length=16, choices=protocols.CHOICES, default=protocols.DEFAULT)
    protocol_options = models.JSONField(
        default=dict, blank=True, help_text='The protocol\'s settings, e.g. MQM: {"tree": [...], "weights": {...}}.'
    )

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            models.CheckConstraint(condition=Q(annotators_per_item__gte=1), name="campaign_overlap_positive"),
            models.CheckConstraint(condition=Q(control_arm__gte=0, control_arm__lte=1),
                                   name="campaign_control_arm_share"),
            models.UniqueConstraint(fields=["dataset"], condition=Q(is_labeling=True),
                                    name="campaign_one_labeling_per_dataset"),
            models.CheckConstraint(condition=Q(decoys__gte=0, decoys__lte=0.5), name="campaign_decoys_share"),
            models.CheckConstraint(condition=Q(planted__gte=0, planted__lte=0.5), name="campaign_planted_share"),
            models.CheckConstraint(condition=Q(protocol__in=list(protocols.PROTOCOLS)), name="campaign_known_protocol"),
        ]

    def __str__(self) -> str:
        return self.name


class CampaignRun(models.Model):
    """An evaluator run judged in a campaign, under a neutral label the annotators see."""

    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="campaign_runs")
    run = models.ForeignKey(EvaluatorRun, on_delete=models.PROTECT, related_name="campaign_runs")
    label = models.CharField(max_length=32, help_text="Neutral name shown to annotators, e.g. 'Evaluator A'.")

    class Meta:
        ordering = ["campaign", "label"]
        constraints = [
            models.UniqueConstraint(fields=["campaign", "run"], name="campaignrun_unique_run"),
            models.UniqueConstraint(fields=["campaign", "label"], name="campaignrun_unique_label"),
        ]

    def __str__(self) -> str:
        return f"{self.campaign.name}: {self.label}"


class Assignment(models.Model):
    """One item for one annotator in one campaign; `order` is that annotator's shuffled position."""

    class Status(models.TextChoices):
        TODO = "todo", "To do"
        IN_PROGRESS = "in_progress", "In progress"
        DONE = "done", "Done"

    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="assignments")
    item = models.ForeignKey(Item, on_delete=models.CASCADE, related_name="assignments")
    annotator = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="assignments")
    order = models.PositiveIntegerField()
    is_control = models.BooleanField(default=False)
    status = models.CharField(max_length=12, choices=Status.choices, default=Status.TODO)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    seconds_spent = models.PositiveIntegerField(default=0)
    is_training = models.BooleanField(default=False, help_text="A qualification item: its key is shown once finished.")
    in_control_arm = models.BooleanField(
        default=False, help_text="Shown unprimed first: the annotator marks errors before the machine spans appear.",
    )
    phase = models.CharField(
        max_length=10, choices=[(p.value, PHASE_LABELS[p]) for p in Phase], default=Phase.JUDGING.value,
        help_text="Where the annotator is in this item (annotator.engine.phases): training, marking, judging, scoring, "
        "done.",
    )
    revealed_at = models.DateTimeField(
        null=True, blank=True, help_text="When a control-arm output's marking ended and its machine spans appeared."
    )
    boundary_at = models.DateTimeField(
        null=True, blank=True,
        help_text="When the last closing phase move happened (the reveal, spans done): undo never reaches before it.",
    )
    active_seconds = models.FloatField(
        default=0.0, help_text="Time between the annotator's actions, each idle gap capped at 60 s (Pearmut's rule)."
    )
    last_active_at = models.DateTimeField(null=True, blank=True)
    opened_at = models.DateTimeField(
        null=True, blank=True,
        help_text="When its annotator first opened the item: set once, by the open that claims it (pre-fill then).",
    )

    class Meta:
        ordering = ["campaign", "annotator", "order"]
        constraints = [
            models.UniqueConstraint(fields=["campaign", "item", "annotator"], name="assignment_unique"),
            models.UniqueConstraint(fields=["campaign", "annotator", "order"], name="assignment_unique_order"),
            # The phase model's consequences (annotator.services.phases is their one writer): the status says
            # "done" exactly in the done phase, training items stay training items, and only a control-arm
            # output is ever marked unprimed or revealed.
            models.CheckConstraint(
                condition=(Q(status="done") & Q(phase=Phase.DONE.value))
                | (~Q(status="done") & ~Q(phase=Phase.DONE.value)),
                name="assignment_done_status_is_done_phase"),
            models.CheckConstraint(condition=~Q(phase=Phase.TRAINING.value) | Q(is_training=True),
                                   name="assignment_training_phase_is_training_item"),
            models.CheckConstraint(
                condition=Q(is_training=False)
                | Q(phase__in=[Phase.TRAINING.value, Phase.SCORING.value, Phase.DONE.value]),
                name="assignment_training_item_in_training_or_done"),
            models.CheckConstraint(
                condition=~Q(phase=Phase.MARKING.value) | (Q(in_control_arm=True) & Q(revealed_at__isnull=True)),
                name="assignment_marking_is_unrevealed_control_arm"),
            models.CheckConstraint(condition=Q(revealed_at__isnull=True) | Q(in_control_arm=True),
                                   name="assignment_revealed_only_in_control_arm"),
        ]
        indexes = [models.Index(fields=["annotator", "status"], name="assignment_annotator_status")]

    def __str__(self) -> str:
        return f"{self.campaign.name} #{self.order} for {self.annotator}"

    def is_done(self) -> bool:
        return self.status == self.Status.DONE

    @property
    def wall_seconds(self) -> float:
        """Wall time on this item: the clock from the first signal on it to the last (annotator.selectors.
        worktime, where active time and the SQL form of this are defined beside it)."""
        if self.started_at is None or self.last_active_at is None:
            return 0.0
        return max(0.0, (self.last_active_at - self.started_at).total_seconds())

    def reopened_phase(self) -> Phase:
        """The phase a finished item returns to when an undo makes it incomplete again."""
        return Phase.TRAINING if self.is_training else Phase.JUDGING


def _text_choices(name: str, terms: tuple[protocol.Term, ...]) -> type[models.TextChoices]:
    return models.TextChoices(name, [(t.value.upper(), (t.value, t.label)) for t in terms])


SpanVerdict = _text_choices("SpanVerdict", protocol.SPAN_VERDICTS)
ExplanationVerdict = _text_choices("ExplanationVerdict", protocol.EXPLANATION_VERDICTS)
FLAG_FIELDS: dict[str, str] = {t.value: t.label for t in protocol.FLAGS}


class SpanJudgment(models.Model):
    """One annotator's verdicts on one machine span (the study protocol: docs, explanations/method)."""

    span = models.ForeignKey(ErrorSpan, on_delete=models.CASCADE, related_name="judgments")
    annotator = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="judgments")
    assignment = models.ForeignKey(Assignment, on_delete=models.CASCADE, related_name="judgments")
    span_verdict = models.CharField(max_length=16, choices=SpanVerdict.choices, blank=True, default="")
    explanation_verdict = models.CharField(
        max_length=20, choices=ExplanationVerdict.choices, blank=True, default=""
    )
    # One boolean column per protocol flag is added below the class, so that flag rates aggregate in SQL.
    comment = models.TextField(blank=True, default="")
    corrected_severity = models.PositiveSmallIntegerField(null=True, blank=True)
    version = models.PositiveIntegerField(
        default=0, help_text="Counts the changes; a save names the version it was typed against (stale: refused)."
    )
    # The expert's pick among the occurrences of an ambiguous span (annotator.engine.occurrences); the span's own
    # offsets stay the machine's. Not picked: all blank; picked "none": picked_none; else the picked offsets.
    picked_start = models.PositiveIntegerField(null=True, blank=True)
    picked_end = models.PositiveIntegerField(null=True, blank=True)
    picked_none = models.BooleanField(default=False, help_text="The expert says the location is not in the output.")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["span_id", "annotator_id"]
        constraints = [
            models.CheckConstraint(
                condition=(Q(picked_start__isnull=True) & Q(picked_end__isnull=True))
                | (Q(picked_start__isnull=False) & Q(picked_end__isnull=False) & Q(picked_start__lt=F("picked_end"))
                   & Q(picked_none=False)),
                name="judgment_pick_offsets_both_or_none_ordered",
            ),
            # Each campaign is its own study: a judgment belongs to one assignment (campaign, item, annotator).
            models.UniqueConstraint(fields=["assignment", "span"], name="judgment_one_per_assignment_span"),
            models.CheckConstraint(
                condition=Q(corrected_severity__isnull=True)
                | Q(corrected_severity__gte=min(protocol.SEVERITIES), corrected_severity__lte=max(protocol.SEVERITIES)),
                name="judgment_severity_1_to_5",
            ),
        ]
        indexes = [models.Index(fields=["span", "annotator"], name="judgment_span_annotator")]

    def __str__(self) -> str:
        return f"{self.annotator} on span {self.span_id}: {self.span_verdict}/{self.explanation_verdict}"

    def flags(self) -> list[str]:
        return [name for name in FLAG_FIELDS if getattr(self, name)]

    def is_complete(self) -> bool:
        return bool(self.span_verdict and self.explanation_verdict)

    @property
    def occurrence(self) -> str:
        """The pick in its audit-trail form: '' (machine's offsets), 'none', or 'start-end'."""
        if self.picked_start is not None and self.picked_end is not None:
            return pick_text(Occurrence(self.picked_start, self.picked_end))
        return pick_text(None, none=self.picked_none)

    @occurrence.setter
    def occurrence(self, text: str) -> None:
        picked, where = parse_pick(text)
        self.picked_none = picked and where is None
        self.picked_start, self.picked_end = (where.start, where.end) if where else (None, None)

    def is_picked(self) -> bool:
        return self.picked_none or self.picked_start is not None

    def offsets(self, machine: tuple[int | None, int | None]) -> tuple[int | None, int | None]:
        """The offsets this expert's judgment counts with: their pick, else the machine's."""
        return effective_offsets(machine, self.occurrence)


for _flag in protocol.FLAGS:
    SpanJudgment.add_to_class(_flag.value, models.BooleanField(default=False, help_text=_flag.help))


class JudgmentEvent(models.Model):
    """Audit trail (and undo stack): who changed which field of a judgment, from what to what, when."""

    judgment = models.ForeignKey(SpanJudgment, on_delete=models.CASCADE, related_name="events")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    field = models.CharField(max_length=32)
    old_value = models.TextField(blank=True, default="")
    new_value = models.TextField(blank=True, default="")
    undone = models.BooleanField(default=False)
    at = models.DateTimeField(auto_now_add=True)
    ms = models.PositiveIntegerField(null=True, blank=True, help_text="Milliseconds from focus to this save.")

    class Meta:
        ordering = ["judgment_id", "at", "id"]
        indexes = [models.Index(fields=["user", "at"], name="judgmentevent_user_at")]


class WorkAction(models.Model):
    """The undo/redo stack: one row per action an annotator took on an assignment, with what reverses it.

    `payload` holds both sides of the change: for a judgment field {span, field, old, new}; for an added
    error {span: id, before: {...} or null, after: {...} or null} (null = the error does not exist on that
    side); for an item score {old, new} (null = no score). Undo walks back through rows not undone, newest
    first; redo replays the most recently undone row, but only while no action was taken after that undo (as
    in any editor), which `at` > `undone_at` tells.
    """

    class Kind(models.TextChoices):
        JUDGMENT = "judgment", "Judgment field"
        ADDED = "added", "Added error"
        SCORE = "score", "Item score"
        PREFERENCE = "preference", "Comparison choice"

    assignment = models.ForeignKey(Assignment, on_delete=models.CASCADE, related_name="actions")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    kind = models.CharField(max_length=12, choices=Kind.choices)
    payload = models.JSONField()
    undone = models.BooleanField(default=False)
    at = models.DateTimeField(auto_now_add=True)
    undone_at = models.DateTimeField(null=True, blank=True)
    ms = models.PositiveIntegerField(null=True, blank=True, help_text="Milliseconds from focus to this action.")

    class Meta:
        ordering = ["assignment_id", "id"]
        indexes = [models.Index(fields=["assignment", "user", "undone"], name="workaction_stack")]


class ControlVerdict(models.Model):
    """The known correct verdicts of a span on a control item of a campaign."""

    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="control_verdicts")
    span = models.ForeignKey(ErrorSpan, on_delete=models.CASCADE, related_name="control_verdicts")
    span_verdict = models.CharField(max_length=16, choices=SpanVerdict.choices)
    explanation_verdict = models.CharField(max_length=20, choices=ExplanationVerdict.choices, blank=True)
    note = models.TextField(blank=True, default="", help_text="Why: shown beside a training item's key.")

    class Meta:
        constraints = [models.UniqueConstraint(fields=["campaign", "span"], name="control_unique_span")]


class AddedSource(Source):
    """The errors one expert added in one campaign: a source of its own, so that campaigns never share them."""

    source = models.OneToOneField(
        Source, on_delete=models.CASCADE, parent_link=True, primary_key=True, related_name="added"
    )
    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="added_sources")
    annotator = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="added_sources")

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["campaign", "annotator"], name="addedsource_one_per_campaign_annotator"),
        ]

    def save(self, *args, **kwargs) -> None:
        self.kind = SourceKind.CAMPAIGN
        super().save(*args, **kwargs)


class Adjudication(models.Model):
    """A reviewer's final verdicts on a span the judges disagreed on (a machine span or an added error), or on
    one they agreed on when a reviewer overrode them (`override`, listed on the review screen).

    Blank fields leave the judges' majority in force (corpus.consensus); `occurrence` decides where an
    ambiguous span is when the judges' picks differ (annotator.engine.occurrences' text form). The judges' own
    verdicts are never changed, so agreement before adjudication stays measurable. Each field has its own
    version (`versions`, field -> number of audited changes, undos and redos), so an undo can tell whether
    someone changed the field since."""

    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="adjudications")
    span = models.ForeignKey(ErrorSpan, on_delete=models.CASCADE, related_name="adjudications")
    reviewer = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+")
    span_verdict = models.CharField(max_length=16, choices=SpanVerdict.choices, blank=True, default="")
    explanation_verdict = models.CharField(
        max_length=20, choices=ExplanationVerdict.choices, blank=True, default=""
    )
    occurrence = models.CharField(
        max_length=24, blank=True, default="",
        help_text="An ambiguous span's place: '' = the judges' majority pick, 'none', or 'start-end' (a candidate).")
    note = models.TextField(blank=True, default="")
    override = models.BooleanField(default=False, help_text="Decided although the judges agree (audited, listed).")
    versions = models.JSONField(default=dict, blank=True, help_text="field -> its version (audit rows so far).")
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["campaign_id", "span_id"]
        constraints = [models.UniqueConstraint(fields=["campaign", "span"], name="adjudication_one_per_span")]

    def is_decided(self) -> bool:
        return bool(self.span_verdict or self.explanation_verdict or self.occurrence)

    def decided_place(self) -> tuple[int | None, int | None] | None:
        """The decided place of an ambiguous span as consensus offsets: None leaves the judges' majority pick,
        (None, None) says the location is not in the output."""
        picked, where = parse_pick(self.occurrence)
        if not picked:
            return None
        return (None, None) if where is None else (where.start, where.end)


class AdjudicationEvent(models.Model):
    """Audit trail and undo stack of adjudication: who changed, undid or redid which field of a decision, from
    what to what, and the field's version after it. The undo stack is a reviewer's `change` rows."""

    class Action(models.TextChoices):
        CHANGE = "change", "Change"
        UNDO = "undo", "Undo"
        REDO = "redo", "Redo"
        OVERRIDE = "override", "Override"

    adjudication = models.ForeignKey(Adjudication, on_delete=models.CASCADE, related_name="events")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    action = models.CharField(max_length=8, choices=Action.choices, default=Action.CHANGE)
    field = models.CharField(max_length=32)
    old_value = models.TextField(blank=True, default="")
    new_value = models.TextField(blank=True, default="")
    version = models.PositiveIntegerField(default=0, help_text="The field's version after this row.")
    reverts = models.ForeignKey("self", null=True, blank=True, on_delete=models.CASCADE, related_name="steps",
                                help_text="The change an undo or redo row steps over.")
    undone = models.BooleanField(default=False)
    at = models.DateTimeField(auto_now_add=True)
    undone_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["adjudication_id", "at", "id"]
        indexes = [models.Index(fields=["user", "undone"], name="adjevent_user_undone")]


class SampleDesign(models.Model):
    """How a sampled campaign drew the machine spans it judges (stats.sampling).

    A routed campaign (annotator.services.routing) is a design too: within each evaluator, the spans that at
    least `min_k` of the ensemble's models flagged form the stratum `confident`, judged by experts only in an
    audit sample at `audit_rate` (the rest are AutoResolved), and the others the stratum `uncertain`, judged in
    full. Every span's inclusion probability is known, so the estimates of all spans are design-weighted.

    The `active` routing design (stats.ppi) draws the judged spans in batches instead, each span with its own
    probability from a calibrated predictor's uncertainty (floor `min_probability`), until `target_ci_width` or
    `budget_spans` per evaluator; every batch's probabilities and predictions are its SpanDraw rows."""

    class Strata(models.TextChoices):
        EVALUATOR = "evaluator", "Evaluator"
        CATEGORY = "evaluator+category", "Evaluator and category"
        SEVERITY = "evaluator+severity", "Evaluator and severity"
        ROUTING = "evaluator+confidence", "Evaluator and ensemble confidence (routing)"

    campaign = models.OneToOneField(Campaign, on_delete=models.CASCADE, related_name="sample_design")
    strata = models.CharField(max_length=24, choices=Strata.choices, default=Strata.EVALUATOR)
    seed = models.IntegerField(default=0)
    per_stratum = models.PositiveIntegerField(null=True, blank=True)
    total = models.PositiveIntegerField(null=True, blank=True)
    population = models.JSONField(default=dict, help_text="run id -> stratum -> number of machine spans.")
    min_k = models.PositiveSmallIntegerField(
        null=True, blank=True, help_text="Routing: spans flagged by at least this many models go to the audit stratum.")
    audit_rate = models.FloatField(
        null=True, blank=True, help_text="Routing: the share of the confident spans experts judge (0-1].")
    routing_design = models.CharField(
        max_length=12, choices=[(d, d) for d in DESIGNS], default=THRESHOLD,
        help_text="Routing: threshold (min_k and an audit) or active (batches drawn by the predicted uncertainty).")
    min_probability = models.FloatField(
        null=True, blank=True, help_text="Active routing: no span's inclusion probability in a batch is below this.")
    target_ci_width = models.FloatField(
        null=True, blank=True, help_text="Active routing: top up until each evaluator's full 95% width is this.")
    budget_spans = models.PositiveIntegerField(
        null=True, blank=True, help_text="Active routing: the expert judgments to spend per evaluator.")

    class Meta:
        constraints = [
            models.CheckConstraint(
                condition=(~Q(strata="evaluator+confidence") & (Q(per_stratum__isnull=True) ^ Q(total__isnull=True))
                           & Q(min_k__isnull=True, audit_rate__isnull=True, routing_design=THRESHOLD,
                               min_probability__isnull=True, target_ci_width__isnull=True, budget_spans__isnull=True))
                | Q(strata="evaluator+confidence", per_stratum__isnull=True, total__isnull=True,
                    routing_design=THRESHOLD, min_k__gte=1, audit_rate__gt=0, audit_rate__lte=1,
                    min_probability__isnull=True, target_ci_width__isnull=True, budget_spans__isnull=True)
                | (Q(strata="evaluator+confidence", per_stratum__isnull=True, total__isnull=True,
                     routing_design=ACTIVE, min_k__isnull=True, audit_rate__isnull=True, min_probability__gt=0,
                     min_probability__lte=1)
                   & (Q(target_ci_width__isnull=True) ^ Q(budget_spans__isnull=True))),
                name="sampledesign_one_size_or_routing"),
        ]

    @property
    def is_routing(self) -> bool:
        return self.strata == self.Strata.ROUTING

    @property
    def is_active(self) -> bool:
        return self.is_routing and self.routing_design == ACTIVE


class SampledSpan(models.Model):
    """A machine span drawn into a sampled campaign, with the stratum it was drawn from."""

    design = models.ForeignKey(SampleDesign, on_delete=models.CASCADE, related_name="spans")
    span = models.ForeignKey(ErrorSpan, on_delete=models.CASCADE, related_name="sampled_in")
    run_id = models.PositiveIntegerField()
    stratum = models.CharField(max_length=120)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["design", "span"], name="sampledspan_unique")]


class AutoResolved(models.Model):
    """A span of a routed campaign resolved without an expert: it carries the ensemble's verdict (Error), since
    at least the design's `min_k` models flagged it, and no expert saw it. Under the active design it carries the
    model's label from the latest top-up's predictor (Error before any), and it leaves when a batch draws it."""

    design = models.ForeignKey(SampleDesign, on_delete=models.CASCADE, related_name="auto_resolved")
    span = models.ForeignKey(ErrorSpan, on_delete=models.CASCADE, related_name="auto_resolved_in")
    run_id = models.PositiveIntegerField()
    span_verdict = models.CharField(max_length=16, choices=SpanVerdict.choices, default=protocol.SPAN_OK)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["design", "span"], name="autoresolved_unique")]


class SpanDraw(models.Model):
    """One span of an active routed campaign in one batch: the inclusion probability the batch gave it (1 for a
    span drawn in an earlier batch), the predicted probability that an expert calls it an error that the batch's
    probabilities came from (none in the first, uniform, batch), and whether this batch drew it. Every batch holds a
    row for every routed span, so its estimate can be recomputed from these rows and the experts' labels alone."""

    design = models.ForeignKey(SampleDesign, on_delete=models.CASCADE, related_name="draws")
    span = models.ForeignKey(ErrorSpan, on_delete=models.CASCADE, related_name="drawn_in")
    run_id = models.PositiveIntegerField()
    batch = models.PositiveSmallIntegerField()
    probability = models.FloatField()
    prediction = models.FloatField(null=True, blank=True)
    drawn = models.BooleanField(default=False)

    class Meta:
        ordering = ["design_id", "batch", "span_id"]
        constraints = [
            models.UniqueConstraint(fields=["design", "batch", "span"], name="spandraw_unique"),
            models.CheckConstraint(condition=Q(probability__gt=0, probability__lte=1), name="spandraw_probability"),
            models.CheckConstraint(condition=Q(prediction__isnull=True) | Q(prediction__gte=0, prediction__lte=1),
                                   name="spandraw_prediction"),
        ]


class UnprimedMark(models.Model):
    """An error an expert marked on a control-arm output before its machine spans were revealed.

    Written at the reveal for every error the expert had added while marking; from then on the span is fixed
    (annotator.services.control_arm). Errors added after the reveal have no row here: they count as primed."""

    assignment = models.ForeignKey(Assignment, on_delete=models.CASCADE, related_name="unprimed_marks")
    span = models.OneToOneField(ErrorSpan, on_delete=models.CASCADE, related_name="unprimed_mark")

    class Meta:
        ordering = ["assignment_id", "span_id"]


class MarkingTime(models.Model):
    """The working time a control-arm output had taken when its marking ended (the unprimed arm's time)."""

    assignment = models.OneToOneField(Assignment, on_delete=models.CASCADE, primary_key=True,
                                      related_name="marking_time")
    seconds = models.PositiveIntegerField(default=0)


# The ESA protocol's own rows (the score, ESA^AI's pre-filled spans) live in their own module.
from annotator.esa_models import EsaPrefill, EsaScore  # noqa: E402,F401
from annotator.score_models import ItemScore  # noqa: E402,F401
from annotator.unit_models import ComparisonUnit, UnitOutput  # noqa: E402,F401
