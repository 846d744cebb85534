"""The study report's sections, in order: each turns a campaign's numbers into titled tables and figures.

A section builder takes the report's context and returns a Section, or None when the campaign has nothing
for it. The tables are the dashboard's and the ranking API's own (analytics.tables, analytics.selectors.
ranking), so every printed number is the API's at the printed precision. A topic adds one builder to
REPORT_SECTIONS; a protocol's own figures come from analytics.protocols.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING

from django.utils import timezone
from django.utils.text import slugify

from analytics.confidence_figures import CONFIDENCE_NOTE, confidence_table, plot_module, routing_table
from analytics.formatting import SIMULATED_MARK
from analytics.protocols import FIGURE_SETS, FigureSet, declared_figure_sets, register_figures
from analytics.report.esa import esa_report
from analytics.report.mqm import mqm_report
from analytics.selectors import DEFAULT_RESAMPLES, DashboardData, Scope
from analytics.selectors.cache import cached_dashboard_data
from analytics.selectors.confidence import campaign_confidence
from analytics.selectors.design import design_paragraph, study_design
from analytics.selectors.exclusion import Exclusion, exclusion_for
from analytics.selectors.priming import has_control_arm, priming_paragraph, priming_report
from analytics.selectors.quality import quality_summary
from analytics.selectors.ranking import BY_CHOICES, Ranking, campaign_aspects, campaign_ranking
from analytics.selectors.routing import routing_report
from analytics.tables import (
    TABLE_BUILDERS,
    Column,
    Table,
    empty_state,
    power_table,
    priming_tables,
    quality_tables,
)
from annotator.models import Campaign
from corpus import protocols
from corpus.consensus import MAJORITY_SHARE

if TYPE_CHECKING:
    from matplotlib.figure import Figure


@dataclass
class ReportFigure:
    name: str  # file stem under figures/
    caption: str
    figure: Figure


@dataclass
class Section:
    key: str
    title: str
    text: str = ""
    tables: list[Table] = field(default_factory=list)
    figures: list[ReportFigure] = field(default_factory=list)


@dataclass
class ReportContext:
    campaign: Campaign
    data: DashboardData
    rankings: list[Ranking]
    generated_at: datetime
    exclusion: Exclusion
    simulated: frozenset[str] = frozenset()  # run labels the simulated server answered

    @property
    def judged(self) -> int:
        return self.data.accuracy.pooled.matrix.total


SectionBuilder = Callable[[ReportContext], Section | list[Section] | None]


def report_context(campaign: Campaign, *, exclude_flagged: bool | None = None) -> ReportContext:
    """Every number of the report, computed as the API computes it by default (1,000 resamples, seed 0), with the
    flagged annotators left out or counted as `exclude_flagged` says (None: the campaign's setting)."""
    exclusion = exclusion_for(campaign, exclude_flagged)
    scope = Scope(campaign_id=campaign.pk, exclude_flagged=exclusion.exclude)
    data = cached_dashboard_data(scope, reference="", n_resamples=DEFAULT_RESAMPLES, seed=0)
    rankings = [campaign_ranking(campaign, aspect=a, by=by, exclude_flagged=exclusion.exclude)
                for a in campaign_aspects(campaign) for by in BY_CHOICES]
    return ReportContext(campaign=campaign, data=data, rankings=rankings, generated_at=timezone.now(),
                         exclusion=exclusion, simulated=frozenset(data.simulated_runs))


def design_text(context: ReportContext) -> str:
    """The sample design in one paragraph, counted from the campaign's data (analytics.selectors.design)."""
    return design_paragraph(study_design(context.campaign, excluded=context.exclusion.excluded_ids))


def simulated_banner(context: ReportContext) -> str:
    """The warning every report format opens with when a simulated server answered a run ("" otherwise)."""
    if not context.simulated:
        return ""
    names = ", ".join(f"{label} {SIMULATED_MARK}" for label in sorted(context.simulated))
    one = len(context.simulated) == 1
    return (f"SIMULATED: {names} {'was' if one else 'were'} answered by the simulated server, not by a model. "
            f"Every figure naming {'it' if one else 'them'} is marked and is no result.")


CONSENSUS_TEXT = (
    "Table 4's figures count every judgment of the annotators counted, as in the OpeNLGauge paper. Where one "
    "label per span is needed (the labeled set), a reviewer's decision wins, else the value given by more than "
    f"{MAJORITY_SHARE:.0%} of the span's judges; a tie leaves the span unresolved."
)


def plots_module():
    """matplotlib is imported when a report is drawn, not by every process that loads the URLs (views)."""
    from analytics import plots

    return plots


def _accuracy_figures(context: ReportContext) -> list[ReportFigure]:
    fig = plots_module().accuracy_plot(context.data)
    if fig is None:
        return []
    return [ReportFigure("accuracy", "Span OK % and Exp. correct % per evaluator with 95% bootstrap intervals.", fig)]


def overview_section(context: ReportContext) -> Section:
    data = context.data
    section = Section("overview", "Overview",
                      tables=[TABLE_BUILDERS["overview"](data), TABLE_BUILDERS["progress"](data)])
    if not protocols.get(context.campaign.protocol).judges_machine_spans:
        section.tables = section.tables[1:]  # how far the work came; the protocol's own section has its figures
        return section
    if not context.judged:
        section.text = empty_state(data) or ""
        section.tables = section.tables[1:]
        return section
    section.figures = _accuracy_figures(context)
    return section


def accuracy_section(context: ReportContext) -> Section | None:
    if not context.judged:
        return None
    return Section("accuracy", "Accuracy per evaluator (Table 4)",
                   tables=[TABLE_BUILDERS["accuracy"](context.data), TABLE_BUILDERS["matrix"](context.data)])


def explanations_section(context: ReportContext) -> Section | None:
    if not context.judged:
        return None
    section = Section("explanations", "Explanation verdicts", tables=[TABLE_BUILDERS["explanations"](context.data)])
    fig = plots_module().explanation_verdicts_plot(context.data)
    if fig is not None:
        section.figures.append(ReportFigure("explanation_verdicts", "Shares of the explanation verdicts.", fig))
    return section


def agreement_section(context: ReportContext) -> Section | None:
    if not context.judged:
        return None
    return Section("agreement", "Agreement between annotators",
                   tables=[TABLE_BUILDERS["agreement"](context.data), TABLE_BUILDERS["pairwise"](context.data)])


BY_TITLES = {"span": "Span OK %", "explanation": "Exp. correct %"}


def ranking_tables(ranking: Ranking) -> list[Table]:
    """The ranking API's answer as tables: evaluators with rank ranges, then the pairwise tests if any."""
    slug = f"ranking_{slugify(ranking.aspect).replace('-', '_') or 'aspect'}_{ranking.by}"
    simulated = frozenset(e.label for e in ranking.evaluators if e.simulated)
    evaluators = Table(slug, f"Evaluators ranked by {BY_TITLES[ranking.by]} ({ranking.aspect})", [
        Column("rank", "Rank"), Column("label", "Run", source=True),
        Column("value", BY_TITLES[ranking.by], "pct", count="n"),
        Column("ci_low", "95% CI low", "pct"), Column("ci_high", "95% CI high", "pct"), Column("n", "n", "int"),
    ], note=f"Evaluators that no test separates at alpha = {ranking.alpha} share a rank range. Tests: "
       f"{ranking.method}, {ranking.resamples:,} resamples, seed {ranking.seed}.", simulated=simulated)
    evaluators.rows = [{"rank": e.rank, "label": e.label, "value": e.value, "ci_low": e.ci_low, "ci_high": e.ci_high,
                        "n": e.n} for e in ranking.evaluators]
    pairs = Table(f"{slug}_pairs", f"Pairwise tests by {BY_TITLES[ranking.by]} ({ranking.aspect})", [
        Column("a", "A", source=True), Column("b", "B", source=True),
        Column("difference", "A - B (points)", "pct", count="n_outputs"),
        Column("p", "p", "p"), Column("p_holm", "p (Holm)", "p"), Column("n_outputs", "Shared outputs", "int"),
    ], note="A - B is taken over the outputs both evaluators were judged on.", simulated=simulated)
    pairs.rows = [{"a": p.a, "b": p.b, "difference": p.difference, "p": p.p, "p_holm": p.p_holm,
                   "n_outputs": p.n_outputs} for p in ranking.pairs]
    if not pairs.rows:  # one evaluator with a figure: nothing to test
        evaluators.note += " With fewer than two evaluators to compare, no pair is tested."
        return [evaluators]
    return [evaluators, pairs]


def ranking_section(context: ReportContext) -> Section | None:
    if not context.judged:
        return None
    section = Section("ranking", "Evaluators ranked with significance", text=(
        "Per aspect, evaluators are ordered by their figure. Each pair is compared over the outputs both were "
        "judged on with a two-sided approximate randomization test (each output's counts swapped between the "
        "two with probability 1/2), and the p-values are Holm-corrected over all pairs. An evaluator's rank "
        "range runs from one plus the number of evaluators significantly better to the number of evaluators "
        "minus those it is significantly better than."))
    for ranking in context.rankings:
        section.tables += ranking_tables(ranking)
    return section


def quality_section(context: ReportContext) -> Section:
    """The checks in force, each annotator's vigilance, who is flagged and why, and whether they count."""
    summary = quality_summary(context.campaign, context.exclusion)
    vigilance, flags = quality_tables(summary)
    strength = [power_table(summary)] if summary.power else []
    text = "Checks in force. " + " ".join(f"{line}." for line in summary.checks) + " " + context.exclusion.sentence()
    if not summary.rows:
        return Section("quality", "Quality checks", text=text + " No annotator has worked yet.", tables=strength)
    return Section("quality", "Quality checks", text=text,
                   tables=strength + [vigilance] + ([flags] if flags.rows else []))


def priming_section(context: ReportContext) -> Section | None:
    """The control arm's figures (analytics.selectors.priming), when the campaign has an arm and its protocol
    judges machine spans (ESA's arms are in its own section)."""
    if not has_control_arm(context.campaign) or not protocols.get(context.campaign.protocol).judges_machine_spans:
        return None
    rows = priming_report(context.campaign, exclude_flagged=context.exclusion.exclude)
    return Section("priming", "Priming: the control arm", text=priming_paragraph(rows, context.simulated),
                   tables=priming_tables(rows, context.simulated))


def confidence_section(context: ReportContext) -> Section | None:
    """The ensemble's confidence calibration (analytics.selectors.confidence), once experts labelled a span."""
    rows = campaign_confidence(context.campaign, exclude_flagged=context.exclusion.exclude)
    if not any(r.calibration.spans for r in rows):
        return None
    fig = plot_module().confidence_plot(rows)
    return Section("confidence", "Confidence calibration", text=CONFIDENCE_NOTE, tables=[confidence_table(rows)],
                   figures=[ReportFigure("confidence", "Share confirmed per level k/n with 95% Wilson intervals.",
                                         fig)] if fig is not None else [])


def routing_section(context: ReportContext) -> Section | None:
    """A routed campaign's design-weighted figures and the expert time it saved (analytics.selectors.routing)."""
    report = routing_report(context.campaign, exclude_flagged=context.exclusion.exclude)
    return None if report is None else Section("routing", "Routed judging", tables=[routing_table(report)])


def _mqm_figures(campaign: Campaign, exclusion: Exclusion) -> Section | None:
    built = mqm_report(campaign, exclude_flagged=exclusion.exclude)
    return Section("mqm", "MQM", text=built[0], tables=built[1]) if built else None


def _esa_figures(campaign: Campaign, exclusion: Exclusion) -> Section | None:
    built = esa_report(campaign, exclude_flagged=exclusion.exclude)
    if built is None:
        return None
    text, tables, figure = built
    figures = [ReportFigure("esa_scores", "Mean ESA score per system with 95% bootstrap intervals (rank range in "
                                          "brackets).", figure)] if figure is not None else []
    return Section("esa", "ESA", text=text, tables=tables, figures=figures)


# A protocol's own figures, by the figure its declaration (corpus.protocols) names first: the analytics page, the
# report and the data card all build them through analytics.protocols, so a protocol's figures are one function
# wherever they are shown. A newer protocol registers its own in a module of analytics.protocols.
register_figures(FigureSet("mqm_scores", _mqm_figures, api_path="mqm"))
register_figures(FigureSet("esa_scores", _esa_figures, api_path="esa"))


def api_path(key: str) -> str:
    """/api/analytics/campaigns/ID/<path>: the figure set's JSON."""
    figures = FIGURE_SETS.get(key)
    if figures is None:
        return ""
    return figures.api_path or (f"figures/{key}" if figures.data is not None else "")


def protocol_sections(campaign: Campaign, exclusion: Exclusion) -> list[tuple[str, Section]]:
    """The (figure key, section) of each figure set the campaign's protocol declares, in declared order."""
    declared = protocols.get(campaign.protocol).figures
    built = ((f.key, f.section(campaign, exclusion)) for f in declared_figure_sets(declared))
    return [(key, section) for key, section in built if section is not None]


def protocol_figure_sections(context: ReportContext) -> list[Section]:
    """Every figure set the campaign's protocol declares, as report sections."""
    return [section for _, section in protocol_sections(context.campaign, context.exclusion)]


# The report, in order; a builder returns None when the campaign has no such figures.
REPORT_SECTIONS: list[SectionBuilder] = [
    overview_section,
    accuracy_section,
    explanations_section,
    agreement_section,
    ranking_section,
    quality_section,
    priming_section,
    confidence_section,
    routing_section,
    protocol_figure_sections,
]


def report_sections(context: ReportContext) -> list[Section]:
    built: list[Section] = []
    for build in REPORT_SECTIONS:
        made = build(context)
        built += made if isinstance(made, list) else [made] if made is not None else []
    return built
