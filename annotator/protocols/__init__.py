"""What the annotator side asks of a campaign's protocol, and the registry that finds its answers.

The item screen, finishing, undo and added spans are shared by every protocol; where one differs (its first open
pre-fills, its screen has other parts, its item needs a score before it can finish) the shared code asks the
campaign's `Hooks` here, as the judging flow asks `annotator.checks` for quality, and never tests a protocol's
name. Each protocol's hooks live in a module of this package (opennlgauge, mqm, esa) that registers them when
Django starts (annotator.apps); a protocol declared elsewhere registers its own.

Protocol modules - the only code that may name a protocol or compare a campaign's protocol with one - are
corpus/protocols/ and this package (tests/test_protocol_names.py counts the rest and expects none).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from django.http import HttpResponse
from django.shortcuts import render
from django.template.loader import render_to_string

from corpus import protocols
from errors import Conflict

if TYPE_CHECKING:
    from accounts.models import User
    from annotator.models import Assignment, Campaign
    from annotator.views.common import AppRequest


class OtherProtocol(Conflict):
    """A step of one protocol sent for an item of another (ESA's score on an OpeNLGauge item)."""


class Hooks:
    """One protocol's answers to the annotator side; the defaults are those of a protocol that needs nothing."""

    name: str = ""
    parts: tuple[str, ...] = ()
    """The parts of the screen an action changes: swapped out of band, and re-read after Back or a 409."""

    @property
    def declared(self) -> protocols.Protocol:
        return protocols.get(self.name)

    def first_open(self, assignment: Assignment, user: User) -> None:
        """Called once per assignment, by whoever claimed its first open (pre-fill goes here)."""

    def context(self, request: AppRequest, assignment: Assignment) -> dict:
        """What the screen's parts show."""
        raise NotImplementedError

    def page(self, request: AppRequest, assignment: Assignment) -> HttpResponse:
        """The whole item screen."""
        context = self.context(request, assignment)
        context.update(self.page_context(request, assignment, context))
        return render(request, self.declared.template, context)

    def page_context(self, request: AppRequest, assignment: Assignment, context: dict) -> dict:
        """What the whole page shows beyond its parts (inputs, neighbours, shortcuts)."""
        return {}

    def oob(self, request: AppRequest, assignment: Assignment) -> str:
        """The parts of the screen an htmx answer updates, as out-of-band swaps (undo and redo use them too)."""
        context = self.context(request, assignment)
        context["oob"] = True
        return "".join(render_to_string(f"{self.declared.template}#{part}", context, request=request)
                       for part in self.parts)

    def unfinished(self, assignment: Assignment) -> str | None:
        """What the item still needs before it can finish, beyond the shared checks (None: nothing)."""
        return None

    def spans_closed(self, assignment: Assignment) -> str | None:
        """Why the annotator's own spans may not change now (None while they may)."""
        return None

    def span_renumbered(self, assignment: Assignment, old: int, new: int) -> None:
        """An undone delete recreated one of the annotator's spans under a new id."""


_registry: dict[str, Hooks] = {}


def register(hooks: Hooks) -> Hooks:
    """Install a protocol's hooks under its declared name (a later registration replaces an earlier one)."""
    protocols.get(hooks.name)  # a ProtocolError for a name nobody declared
    _registry[hooks.name] = hooks
    return hooks


def unregister(name: str) -> None:
    _registry.pop(name, None)


def hooks_for(campaign: Campaign) -> Hooks:
    """The hooks of the campaign's protocol; a declared protocol without hooks is a set-up error, not a default."""
    try:
        return _registry[campaign.protocol]
    except KeyError:
        raise LookupError(f"protocol {campaign.protocol!r} has no annotator hooks registered") from None


def check_protocol(assignment: Assignment, name: str) -> None:
    """A protocol's own steps (ESA's spans done and score, MQM's errors) apply to its campaigns' items only."""
    if not protocols.step_applies(assignment.campaign.protocol, name):
        theirs, asked = (protocols.get(n).label.split(" (")[0] for n in (assignment.campaign.protocol, name))
        raise OtherProtocol(f"Item {assignment.order} is judged under {theirs}, not {asked}: this step is not part of "
                            "its screen.")
