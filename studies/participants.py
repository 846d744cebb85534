"""Participants who join a campaign by its link: the link itself, joining, and the completion code at the end
(handing out the pool and releasing abandoned work: studies.pool)."""

from __future__ import annotations

import hmac
import re
import secrets
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from urllib.parse import quote

from django.db import transaction
from django.db.models import Count, Q
from django.utils import timezone

from accounts.models import Role, User
from annotator.models import Assignment, Campaign
from corpus import cleaning
from corpus.cleaning import INT32_MAX
from errors import UserError
from studies.completion import completion_url_problem
from studies.models import Participant, StudyLink
from studies.pool import Prepared, assignments_release, lock_link, places_claim, pool_prepare, share_furnish
from studies.screening import participant_flag_reasons

# Query parameters the platforms append to a study link, and the participant field each is kept in.
PLATFORM_PARAMS: dict[str, str] = {
    "PROLIFIC_PID": "prolific_pid", "STUDY_ID": "study_id", "SESSION_ID": "session_id",  # Prolific
    "workerId": "worker_id", "assignmentId": "mturk_assignment_id", "hitId": "hit_id",  # MTurk
}
# The ids that name a person: one participant per value per campaign.
IDENTITY_FIELDS = ("prolific_pid", "worker_id")
# MTurk opens the task in preview with this assignment id; nobody may start before accepting the HIT.
MTURK_PREVIEW = "ASSIGNMENT_ID_NOT_AVAILABLE"
PLATFORM_ID = re.compile(r"[A-Za-z0-9_-]{1,64}")
CODE = re.compile(r"[A-Za-z0-9_-]{1,64}")
MAX_CONSENT = 100_000
HANDLE_ALPHABET = "abcdefghjkmnpqrstuvwxyz23456789"


class ParticipationError(UserError):
    """Bad link settings or a bad platform id; the message names the field."""


class LinkClosed(Exception):
    """Nobody new may join: `reason` is revoked, expired, full or not_open (a draft campaign)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class NotFinished(Exception):
    """The participant still has items to do: no code yet."""


@dataclass(frozen=True)
class LinkSettings:
    """What a researcher sets for a campaign's participant link (the `link` and study fields of the API)."""

    items_per_participant: int
    pass_code: str
    enabled: bool = True
    cap: int | None = None
    expires: datetime | None = None
    consent: str = ""
    release_after_minutes: int = 30
    time_limit_minutes: int | None = None
    fail_code: str = ""
    completion_url: str | None = None


def link_settings_check(spec: LinkSettings) -> None:
    """Refuse settings the study could not run with, naming the field."""
    if spec.items_per_participant < 1:
        raise ParticipationError("items_per_participant: must be at least 1", field="items_per_participant")
    if spec.release_after_minutes < 1:
        raise ParticipationError("release_after_minutes: must be at least 1", field="release_after_minutes")
    if spec.time_limit_minutes is not None and spec.time_limit_minutes < 1:
        raise ParticipationError("time_limit_minutes: must be at least 1 (or null for no limit)",
                                 field="time_limit_minutes")
    if spec.cap is not None and spec.cap < 1:
        raise ParticipationError("link.cap: must be at least 1 (or null for no cap)", field="link.cap")
    if spec.expires is not None and timezone.is_naive(spec.expires):
        raise ParticipationError("link.expires: give a time zone (e.g. 2026-12-01T12:00:00Z)", field="link.expires")
    try:
        if spec.expires is not None:
            spec.expires.astimezone(UTC)
    except OverflowError:
        raise ParticipationError("link.expires: the moment falls outside the years 1-9999 in UTC",
                                 field="link.expires") from None
    for name, value in (("items_per_participant", spec.items_per_participant), ("link.cap", spec.cap),
                        ("release_after_minutes", spec.release_after_minutes),
                        ("time_limit_minutes", spec.time_limit_minutes)):
        if value is not None and value > INT32_MAX:
            raise ParticipationError(f"{name}: at most {INT32_MAX}", field=name)
    if not CODE.fullmatch(spec.pass_code or ""):
        raise ParticipationError("pass_code: 1-64 letters, digits, '-' or '_'", field="pass_code")
    if spec.fail_code and not CODE.fullmatch(spec.fail_code):
        raise ParticipationError("fail_code: 1-64 letters, digits, '-' or '_' (or empty)", field="fail_code")
    if len(spec.consent) > MAX_CONSENT:
        raise ParticipationError(f"consent: longer than {MAX_CONSENT} characters", field="consent")
    if problem := cleaning.text_problem(spec.consent):
        raise ParticipationError(f"consent: {problem}", field="consent")
    if spec.completion_url and (problem := completion_url_problem(spec.completion_url)):
        raise ParticipationError(f"completion_url: {problem} (or null)", field="completion_url")


def link_create(*, campaign: Campaign, spec: LinkSettings, item_ids: Sequence[int],
                controls: Sequence[int] = ()) -> StudyLink:
    """Give the campaign its link; `item_ids` (in item order) is the pool participants draw from, `controls`
    the control items each of them gets."""
    link_settings_check(spec)
    return StudyLink.objects.create(
        campaign=campaign, token=secrets.token_hex(16), enabled=spec.enabled, cap=spec.cap, expires=spec.expires,
        consent=spec.consent, items_per_participant=spec.items_per_participant,
        release_after_minutes=spec.release_after_minutes, time_limit_minutes=spec.time_limit_minutes,
        pass_code=spec.pass_code, fail_code=spec.fail_code, completion_url=spec.completion_url or "",
        items=list(item_ids), controls=list(controls),
    )


@transaction.atomic
def link_revoke(*, link: StudyLink, stop_resumes: bool = False, end_sessions: bool = False,
                now: datetime | None = None) -> StudyLink:
    """Stop new joins for good; participants who joined before keep their work and may finish it, unless
    `stop_resumes`: then nobody comes back through the link either (a link that leaked). `end_sessions` also ends
    the study for everyone still at work: each participant without a code is marked ended now, and their next
    request shows the end page with the code their work and checks earn so far."""
    now = now or timezone.now()
    fields = []
    if link.enabled or link.revoked_at is None:
        link.enabled, link.revoked_at = False, link.revoked_at or now
        fields += ["enabled", "revoked_at"]
    if stop_resumes and not link.resumes_stopped:
        link.resumes_stopped = True
        fields.append("resumes_stopped")
    if end_sessions and link.sessions_ended_at is None:
        link.sessions_ended_at = now
        fields.append("sessions_ended_at")
        link.participants.filter(code_given="", outcome="", ended_at__isnull=True).update(ended_at=now)
    if fields:
        link.save(update_fields=fields)
    return link


def link_closed_reason(link: StudyLink, now: datetime) -> str | None:
    """Why nobody new may join now (revoked, expired, full), or None when the link is open."""
    if not link.enabled:
        return "revoked"
    if link.expires is not None and now >= link.expires:
        return "expired"
    if link.cap is not None and link.participants.count() >= link.cap:
        return "full"
    return None


def platform_ids(query: Mapping[str, str]) -> dict[str, str]:
    """The platform ids of a join request, by participant field; a malformed one is refused by its name."""
    found: dict[str, str] = {}
    for param, field in PLATFORM_PARAMS.items():
        value = (query.get(param) or "").strip()
        if not value:
            continue
        if not PLATFORM_ID.fullmatch(value):
            raise ParticipationError(f"{param}: 1-64 letters, digits, '-' or '_'", field=param)
        found[field] = value
    return found


def is_mturk_preview(ids: Mapping[str, str]) -> bool:
    return ids.get("mturk_assignment_id") == MTURK_PREVIEW


def participant_find(*, link: StudyLink, ids: Mapping[str, str]) -> Participant | None:
    """The participant these platform ids already name (PROLIFIC_PID or workerId), proven or not."""
    identity = {f: ids[f] for f in IDENTITY_FIELDS if ids.get(f)}
    if not identity:
        return None
    match = Q()
    for field, value in identity.items():
        match |= Q(**{field: value})
    return Participant.objects.select_related("user", "link").filter(match, link=link).first()


def _same_secret(stored: str, given: str | None) -> bool:
    return bool(stored) and bool(given) and hmac.compare_digest(stored, given or "")


def session_proof(participant: Participant, ids: Mapping[str, str]) -> bool:
    """Whether the ids carry the platform's per-session secret this participant joined with: Prolific's
    SESSION_ID beside their PID, or MTurk's assignmentId beside their workerId. A PID or a worker id alone
    proves nothing: both are shown to researchers of every study the person takes part in."""
    prolific = (ids.get("prolific_pid") == participant.prolific_pid != ""
                and _same_secret(participant.session_id, ids.get("session_id")))
    mturk = (ids.get("worker_id") == participant.worker_id != ""
             and participant.mturk_assignment_id != MTURK_PREVIEW
             and _same_secret(participant.mturk_assignment_id, ids.get("mturk_assignment_id")))
    return prolific or mturk


@dataclass(frozen=True)
class Returning:
    """Someone who joined this link before: `proven` when the browser's signed cookie or the platform's session
    secret shows it is them, not merely someone who knows their platform id."""

    participant: Participant
    proven: bool


def participant_recognise(*, link: StudyLink, ids: Mapping[str, str], known_pk: int | None) -> Returning | None:
    """Who a join request comes back as (read only): the participant the platform ids name, else the one of the
    browser's signed cookie (`known_pk`); None for a newcomer."""
    named = participant_find(link=link, ids=ids)
    if named is not None:
        return Returning(named, proven=named.pk == known_pk or session_proof(named, ids))
    if known_pk is None or any(ids.get(f) for f in IDENTITY_FIELDS):
        return None
    cookie = Participant.objects.select_related("user", "link").filter(pk=known_pk, link=link).first()
    return Returning(cookie, proven=True) if cookie is not None else None


def _new_handle() -> str:
    return "p-" + "".join(secrets.choice(HANDLE_ALPHABET) for _ in range(10))


def participant_join(
    *, link: StudyLink, ids: Mapping[str, str], now: datetime | None = None
) -> tuple[Participant, bool]:
    """The participant for these ids, made now if new: (participant, created).

    The link row is locked while the participant is made and their places claimed, so the cap holds and one
    platform id never makes two accounts even when two requests arrive at once; an existing one is returned
    unproven (the caller asks for proof). Their account is made before the lock and their training items,
    planted copies and control items after it (studies.pool.share_furnish), so joins of one study wait for
    each other only as long as a claim takes. When the pool has nothing left for them nobody is made and
    LinkClosed("full") is raised."""
    now = now or timezone.now()
    prepared = pool_prepare(link)
    user = _new_user()
    try:
        with transaction.atomic():
            participant = _participant_make(link=lock_link(link.pk), ids=ids, user=user, now=now,
                                            prepared=prepared)
    except BaseException:
        user.delete()
        raise
    if participant.user_id != user.pk:  # someone with these ids joined first
        user.delete()
        return participant, False
    share_furnish(participant=participant, now=now)
    return participant, True


def _new_user() -> User:
    """A participant's account: a random handle without a password (they sign in by the link only)."""
    for _ in range(5):
        handle = _new_handle()
        if not User.objects.filter(username=handle).exists():
            break
    user = User(username=handle, role=Role.ANNOTATOR)
    user.set_unusable_password()
    user.save()
    return user


def _participant_make(*, link: StudyLink, ids: Mapping[str, str], user: User, now: datetime,
                      prepared: Prepared) -> Participant:
    """Under the link's lock: the existing participant of these ids, else a new one holding their claimed
    places (LinkClosed when nobody may join, or the pool has nothing for them)."""
    existing = participant_find(link=link, ids=ids)
    if existing is not None:
        return existing
    if is_mturk_preview(ids):
        raise ParticipationError("assignmentId: accept the HIT before starting", field="assignmentId")
    reason = link_closed_reason(link, now)
    if reason:
        raise LinkClosed(reason)
    if link.campaign.status != Campaign.Status.OPEN:
        raise LinkClosed("not_open" if link.campaign.status == Campaign.Status.DRAFT else "revoked")
    deadline = now + timedelta(minutes=link.time_limit_minutes) if link.time_limit_minutes else None
    fields = {f: v for f, v in ids.items() if f in set(PLATFORM_PARAMS.values())}
    participant = Participant.objects.create(link=link, user=user, last_seen_at=now, deadline=deadline, **fields)
    if places_claim(participant=participant, link=link, now=now, prepared=prepared, new=True) == 0:
        raise LinkClosed("full")
    return participant


def participant_touch(*, participant_pk: int, now: datetime | None = None) -> None:
    Participant.objects.filter(pk=participant_pk).update(last_seen_at=now or timezone.now())


def participant_is_finished(participant: Participant, now: datetime | None = None) -> bool:
    """Done when out of time, when the researchers ended the study (link_revoke's end_sessions), or when every
    item they hold is finished (and they hold at least one)."""
    now = now or timezone.now()
    if participant.finished_at is not None or participant.ended_at is not None:
        return True
    if participant.deadline is not None and now >= participant.deadline:
        return True
    rows = Assignment.objects.filter(campaign_id=participant.link.campaign_id, annotator_id=participant.user_id)
    counts = rows.aggregate(total=Count("pk"), open=Count("pk", filter=~Q(status=Assignment.Status.DONE)))
    return counts["total"] > 0 and counts["open"] == 0


def participant_finish(*, participant: Participant, now: datetime | None = None) -> Participant:
    """Give the participant their code (once; the same code every later visit); NotFinished while items remain.

    The fail code when `participant_flag_reasons` names a reason, else the pass code. Unfinished work of a
    participant who ran out of time goes back to the pool. Before that, nothing is written or locked."""
    now = now or timezone.now()
    if participant.code_given or participant.outcome:
        return participant
    if not participant_is_finished(participant, now):
        raise NotFinished("items remain")
    return _finish(participant, now)


@transaction.atomic
def _finish(participant: Participant, now: datetime) -> Participant:
    locked = Participant.objects.select_for_update(of=("self",)).select_related("link", "user").get(pk=participant.pk)
    if locked.code_given or locked.outcome:
        return locked
    if not participant_is_finished(locked, now):
        raise NotFinished("items remain")
    reasons = participant_flag_reasons(locked.link.campaign, locked.user)
    locked.outcome = "fail" if reasons else "pass"
    locked.code_given = locked.link.fail_code if reasons else locked.link.pass_code
    locked.finished_at = now
    locked.save(update_fields=["outcome", "code_given", "finished_at"])
    if locked.deadline is not None and now >= locked.deadline:
        assignments_release(link=lock_link(locked.link_id), now=now)
    return locked


def completion_redirect(link: StudyLink, code: str) -> str | None:
    """The completion URL with `{code}` replaced (URL-quoted), or None without a URL or a code, and for a stored
    URL that the completion rule refuses (set before the rule: the end page then shows the code alone)."""
    if not link.completion_url or not code or completion_url_problem(link.completion_url):
        return None
    return link.completion_url.replace("{code}", quote(code, safe=""))


def participant_flag_set(*, participant: Participant, flagged: bool, note: str = "") -> Participant:
    """A researcher's flag: a flagged participant who has not received a code yet gets the fail code."""
    note = note.strip()
    if len(note) > 500:
        raise ParticipationError("note: longer than 500 characters", field="note")
    if problem := cleaning.text_problem(note):
        raise ParticipationError(f"note: {problem}", field="note")
    participant.flagged = flagged
    participant.flag_note = note if flagged else ""
    participant.save(update_fields=["flagged", "flag_note"])
    return participant
