"""Assemble a campaign's report files (path -> bytes) in one format, and write them to a folder or a zip."""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

from django.utils import timezone

from analytics.formatting import simulated_name
from analytics.report import render
from analytics.report.sections import (
    CONSENSUS_TEXT,
    ReportContext,
    design_text,
    plots_module,
    report_context,
    report_sections,
    simulated_banner,
)
from annotator.models import Campaign
from corpus import protocols

REPORT_FORMATS: tuple[str, ...] = ("latex", "markdown", "html")
MAIN_FILE = {"latex": "report.tex", "markdown": "report.md", "html": "report.html"}


def _header(context: ReportContext) -> list[str]:
    campaign = context.campaign
    when = timezone.localtime(context.generated_at).strftime("%Y-%m-%d %H:%M %Z")
    runs = ", ".join(f"{simulated_name(r.label, r.simulated)} ({r.evaluator}; {r.aspect})"
                     for r in context.data.runs) or "none"
    lines = [
        f"Campaign '{campaign.name}' (id {campaign.pk}) on dataset '{campaign.dataset.name}'; report generated "
        f"{when}. Evaluator runs: {runs}.",
        "Sample design: " + design_text(context),
        "Quality checks: " + context.exclusion.sentence(),
    ]
    if not protocols.get(campaign.protocol).judges_machine_spans:  # its figures say their own method
        return lines + [f"Protocol: {protocols.get(campaign.protocol).label}; its figures follow the quality "
                        "checks, each with how it is computed."]
    return lines + [
        "Consensus rule: " + CONSENSUS_TEXT,
        "Figures are percentages of judged spans; 95% intervals are percentile bootstrap intervals over items "
        "(1,000 resamples, seed 0), the API's defaults.",
    ]


def report_files(campaign: Campaign, fmt: str, *, exclude_flagged: bool | None = None) -> dict[str, bytes]:
    """Return every file of the report in `fmt` by its relative path: the main file, one file per table
    (LaTeX and Markdown) and each figure as PDF and SVG. `exclude_flagged`: None follows the campaign's
    setting; the header says which was used."""
    if fmt not in REPORT_FORMATS:
        raise ValueError(f"format must be one of {', '.join(REPORT_FORMATS)}, not {fmt!r}")
    context = report_context(campaign, exclude_flagged=exclude_flagged)
    sections = report_sections(context)
    header = _header(context)
    banner = simulated_banner(context)
    plots = plots_module()
    files: dict[str, bytes] = {}
    svgs: dict[str, bytes] = {}
    for section in sections:
        for fig in section.figures:
            svgs[fig.name] = plots.render(fig.figure, "svg")
            files[f"figures/{fig.name}.svg"] = svgs[fig.name]
            files[f"figures/{fig.name}.pdf"] = plots.render(fig.figure, "pdf")
    tables = [t for section in sections for t in section.tables]
    if fmt == "latex":
        files |= {f"tables/{t.key}.tex": render.tex_table(t).encode() for t in tables}
        files[MAIN_FILE[fmt]] = render.tex_document(context, sections, header, banner).encode()
    elif fmt == "markdown":
        files |= {f"tables/{t.key}.md": render.md_table(t).encode() for t in tables}
        files[MAIN_FILE[fmt]] = render.md_document(context, sections, header, banner).encode()
    else:
        files[MAIN_FILE[fmt]] = render.html_document(context, sections, header, svgs, banner).encode()
    return files


def report_write(files: dict[str, bytes], folder: Path) -> list[Path]:
    written = []
    for name, content in sorted(files.items()):
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content)
        written.append(path)
    return written


def report_zip(campaign: Campaign, fmt: str, *, exclude_flagged: bool | None = None) -> bytes:
    """The same files as `export_report`, in one zip under a folder named after the campaign."""
    buffer = io.BytesIO()
    root = f"campaign-{campaign.pk}-report"
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, content in sorted(report_files(campaign, fmt, exclude_flagged=exclude_flagged).items()):
            archive.writestr(f"{root}/{name}", content)
    return buffer.getvalue()
