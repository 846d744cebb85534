"""The decoy audit of a campaign: its cards as annotators see them, audited once per state of the cards.

The cards are the campaign's real machine spans on its real outputs and its decoys, each with what its card shows
(quality.engine.audit). The result is kept in the results cache (shared by web processes and workers) under a
fingerprint of the cards, so an edited or dropped decoy gives a new audit and an unchanged campaign none.
"""

from __future__ import annotations

import hashlib
import json

from django.conf import settings
from django.core.cache import caches

from accounts.access import AccessError
from accounts.models import User
from annotator.models import Assignment, Campaign
from annotator.selectors.spans import campaign_run_labels, judged_spans_by_item
from annotator.services.campaigns import campaign_open
from corpus.models import ErrorSpan, Item
from quality.decoy_explaining import decoy_job_refusal
from quality.engine.audit import BLOCK_AUC, AuditResult, Card, decoy_audit
from quality.models import CheckSpan
from quality.planted_writing import planted_job_refusal

AUDIT_BUDGET_S = 20.0  # the bootstrap stops when the audit has run this long (the result says how far it got)
_CACHE_SECONDS = 7 * 24 * 3600


def _card(span: ErrorSpan, label: str, output: str, *, decoy: bool) -> Card:
    return Card(explanation=span.explanation or "", text=span.text or "", label=label, severity=span.severity,
                category=span.category or "", ambiguous=bool(span.ambiguous), match=span.match,
                position=(span.start or 0) / max(len(output), 1), decoy=decoy)


def campaign_cards(campaign: Campaign) -> list[Card]:
    """Every real machine-span card of the campaign's real outputs, and every decoy card."""
    item_ids = sorted(set(
        Assignment.objects.filter(campaign=campaign, is_training=False, is_control=False)
        .exclude(item__derived_from__isnull=False).values_list("item_id", flat=True)))
    # A link-only campaign has no assignments until people join: its items are the link's pool.
    pool = getattr(getattr(campaign, "study_link", None), "items", None) or []
    item_ids = sorted({*item_ids, *pool})
    outputs = dict(Item.objects.filter(pk__in=item_ids).values_list("pk", "output"))
    labels = campaign_run_labels(campaign.pk)
    cards = [
        _card(span, label, outputs[item_id], decoy=False)
        for item_id, pairs in judged_spans_by_item(campaign, item_ids, labels).items() for span, label in pairs
    ]
    decoys = (CheckSpan.objects.filter(campaign=campaign, role=CheckSpan.Role.DECOY)
              .select_related("span__annotation__item", "campaign_run").order_by("pk"))
    cards += [_card(d.span, d.campaign_run.label, d.span.annotation.item.output, decoy=True) for d in decoys]
    return cards


def _fingerprint(cards: list[Card]) -> str:
    payload = json.dumps([list(card.__dict__.values()) for card in cards], default=str)
    return hashlib.sha256(payload.encode()).hexdigest()[:32]


def campaign_audit(campaign: Campaign, *, seed: int | None = None) -> AuditResult:
    """The audit of the campaign's current cards (cached per state of the cards)."""
    cards = campaign_cards(campaign)
    seed = campaign.seed if seed is None else seed
    key = f"decoy-audit:{campaign.pk}:{seed}:{_fingerprint(cards)}"
    cache = caches[settings.RESULTS_CACHE]
    if (stored := cache.get(key)) is not None:
        return stored
    result = decoy_audit(cards, seed=seed, budget_s=AUDIT_BUDGET_S)
    cache.set(key, result, _CACHE_SECONDS)
    return result


class AuditBlocked(AccessError):
    """Opening refused because the decoy audit tells decoys apart too well (409)."""

    def __init__(self, message: str) -> None:
        super().__init__(409, message)


def campaign_open_audited(*, campaign: Campaign, user: User, accept_audit: bool = False) -> Campaign:
    """Open a draft campaign unless its decoys' explanations or its planted errors are still being written (409
    saying so) or its decoys are too easy to tell apart (AUC above BLOCK_AUC): then a 409 that names the AUC, unless
    the researcher accepts the audit's finding."""
    if not user.sees_everything:
        raise AccessError.forbidden("Only researchers and admins open a campaign.")
    if campaign.status == Campaign.Status.DRAFT:
        decoy_job_refusal(campaign)  # the decoys' explanations are still being written
        planted_job_refusal(campaign)  # so are the planted errors
    if campaign.decoys and campaign.status == Campaign.Status.DRAFT and not accept_audit:
        audit = campaign_audit(campaign)
        if audit.auc is not None and audit.auc > BLOCK_AUC:
            raise AuditBlocked(
                f"The decoy audit tells decoys from real spans with ROC AUC {audit.auc:.2f} (above {BLOCK_AUC}): "
                "annotators could learn to spot them. Edit or drop the decoys the audit's features point at, or "
                'open anyway with {"accept_audit": true}.')
    return campaign_open(campaign=campaign, user=user)
