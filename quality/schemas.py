"""Schemas of the quality-check API (researchers only: keys, decoys and vigilance)."""

from __future__ import annotations

from ninja import Schema
from pydantic import ConfigDict


class DecoysOut(Schema):
    shown: int
    rejected: int
    rate: float | None
    ci_low: float
    ci_high: float


class PlantedOut(Schema):
    shown: int
    found: int
    rate: float | None
    ci_low: float
    ci_high: float


class QualificationOut(Schema):
    passed: bool | None
    score: float | None


class VigilanceOut(Schema):
    annotator: str
    decoys: DecoysOut
    planted: PlantedOut
    median_ms_to_verdict: float | None
    confirm_rate: float | None
    fast_confirm_rate: float | None
    changed_rate: float | None
    drift: list[float | None]
    active_seconds: float
    wall_seconds: int
    qualification: QualificationOut | None
    flagged: bool
    reasons: list[str]


class DecoyOut(Schema):
    id: int
    item_id: int
    external_id: str
    output: str
    start: int
    end: int
    text: str
    label: str
    aspect: str
    explanation: str
    severity: int | None
    category: str
    key: dict[str, str]


class ReopenOut(Schema):
    annotator: str
    reopened: int


class AuditFeatureOut(Schema):
    feature: str
    weight: float


class DecoyAuditOut(Schema):
    """How well a cross-validated classifier tells the campaign's decoy cards from its real ones."""

    decoys: int
    real: int
    auc: float | None
    ci_low: float | None
    ci_high: float | None
    level: str
    warn_above: float
    block_above: float
    features: list[AuditFeatureOut]
    folds: int
    resamples: int
    seconds: float
    reason: str


class CampaignOpenIn(Schema):
    """The optional body of opening a draft: `accept_audit` opens it even when the decoy audit blocks."""

    accept_audit: bool = False


class DecoyExplanationJobOut(Schema):
    """A decoy explanation job: its progress in decoys, and what it did with them so far."""

    id: int
    campaign_id: int
    status: str
    done: int
    total: int
    message: str
    automatic: bool
    simulated: bool
    rewritten: int
    unusable: int
    kept: int


class PlantedWriteIn(Schema):
    """The optional body of starting the planted-error writing job: the server and model to ask (default: the
    campaign's first evaluator run's server and model)."""

    model_config = ConfigDict(extra="forbid")

    server: str = ""
    model: str = ""


class PlantedWritingJobOut(Schema):
    """A planted-error writing job: the model it asks, its progress in planted outputs, and what it did so far."""

    id: int
    campaign_id: int
    status: str
    done: int
    total: int
    message: str
    server: str
    model: str
    automatic: bool
    simulated: bool
    rewritten: int
    unusable: int
    kept: int
