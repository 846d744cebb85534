"""A protocol's analytics, declared where the protocol's figures are built and found by the declaration's names.

A protocol's `figures` (corpus.protocols) name what the analytics page, the report and the data card show; its
`exports` name the campaign formats `manage.py export_campaign` writes (and `import_campaign` reads). Each name
is registered here once, by the module that builds it: MQM's and ESA's in analytics.report.sections, a newer
protocol's in a module of this package, which analytics.apps imports when Django starts. Nothing outside the
builders tests a protocol's name.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import IO, Any


@dataclass(frozen=True)
class FigureSet:
    """One declared figure set: `section(campaign, exclusion)` builds its report section (None: nothing yet);
    `data(campaign, *, n_resamples, seed, exclude_flagged)` its JSON for /api/analytics/campaigns/ID/figures/KEY
    (None: its numbers have an endpoint of their own, at `api_path`)."""

    key: str
    section: Callable[..., Any]
    data: Callable[..., dict[str, Any]] | None = None
    api_path: str = ""


@dataclass(frozen=True)
class CampaignFormat:
    """A campaign-level export format (and, where `read` is set, import): `write(campaign, handle)` returns how
    many records it wrote; `read(campaign, lines, *, create_annotators)` returns what it stored, by kind."""

    name: str
    suffix: str
    write: Callable[[Any, IO[str]], int]
    read: Callable[..., dict[str, int]] | None = None


FIGURE_SETS: dict[str, FigureSet] = {}
CAMPAIGN_FORMATS: dict[str, CampaignFormat] = {}


def register_figures(figures: FigureSet) -> FigureSet:
    FIGURE_SETS[figures.key] = figures
    return figures


def register_format(fmt: CampaignFormat) -> CampaignFormat:
    CAMPAIGN_FORMATS[fmt.name] = fmt
    return fmt


def declared_figure_sets(names: Iterable[str]) -> list[FigureSet]:
    """The registered figure sets among a protocol's declared figure names, in declared order."""
    return [FIGURE_SETS[name] for name in names if name in FIGURE_SETS]
