"""`manage.py export_annotations --dataset NAME [--source NAME] --format jsonl|factgenie|labelstudio|mqm-tsv|pearmut
[-o P]`."""

from __future__ import annotations

from pathlib import Path

from django.core.management.base import CommandError, CommandParser

from corpus.interop import ANNOTATION_FILE_FORMATS, slug
from corpus.interop.mqm import mqm_tsv_lines
from corpus.interop.pearmut import pearmut_lines
from corpus.models import Dataset
from corpus.selectors.mqm import mqm_ratings, mqm_sources
from corpus.selectors.pearmut import pearmut_ratings, pearmut_sources
from corpus.services.annotation_export import (
    ExportReport,
    campaign_id,
    categories_of,
    dataset_categories,
    export_annotation_lines,
    labelstudio_config,
    source_annotations,
    source_for_export,
    write_factgenie_campaign,
)
from corpus.services.mqm_import import DEFAULT_PREFIX
from corpus.services.pearmut_import import DEFAULT_PREFIX as PEARMUT_PREFIX
from errors.commands import BaseCommand

MQM_TSV = "mqm-tsv"
PEARMUT = "pearmut"


class Command(BaseCommand):
    help = ("Export one source's annotations as our JSONL, a factgenie campaign or Label Studio tasks, or MQM "
            "ratings (the sources PREFIX:*) as Google's MQM TSV, or ESA ratings (PREFIX:*) as Pearmut's "
            "annotation log.")

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--dataset", required=True)
        parser.add_argument("--source", help="A source of this dataset (looked up in it only); for mqm-tsv and pearmut "
                                             "the PREFIX of the raters' sources PREFIX:RATER (default mqm, pearmut).")
        parser.add_argument("--format", default="jsonl", choices=(*ANNOTATION_FILE_FORMATS, MQM_TSV, PEARMUT))
        parser.add_argument(
            "-o", "--output", type=Path,
            help="File to write (stdout by default); for factgenie a campaign folder named by its campaign id "
            "(default DATASET-SOURCE slugified, in the current folder), for labelstudio also writes the "
            "labeling config beside it (NAME.xml).",
        )

    def handle(self, *args: object, **options: object) -> None:
        dataset = Dataset.objects.filter(name=options["dataset"]).first()
        if dataset is None:
            raise CommandError(f"no dataset named {options['dataset']!r}")
        fmt: str = options["format"]  # type: ignore[assignment]
        out: Path | None = options["output"]  # type: ignore[assignment]
        if fmt == MQM_TSV:
            self._mqm(dataset, str(options["source"] or DEFAULT_PREFIX), out)
            return
        if fmt == PEARMUT:
            self._pearmut(dataset, str(options["source"] or PEARMUT_PREFIX), out)
            return
        if not options["source"]:
            raise CommandError("--source is needed: the source whose annotations to export")
        sources = source_for_export(dataset, str(options["source"]))
        annotations = source_annotations(dataset, sources)
        report = ExportReport()
        if fmt == "factgenie":
            out = out or Path(campaign_id(dataset, str(options["source"])))
            if slug(out.name) != out.name:
                raise CommandError(f"{out}: a factgenie campaign folder is named by its campaign id; try "
                                   f"{str(out.with_name(slug(out.name) or 'campaign'))!r}")
            write_factgenie_campaign(annotations, out, dataset=dataset, source=str(options["source"]),
                                     categories=dataset_categories(dataset), report=report)
            self._report(report, f"Wrote {report.annotations} annotations to factgenie campaign {out}")
            return
        lines = export_annotation_lines(annotations, fmt, report)
        if out is None:
            for line in lines:
                self.stdout.write(line, ending="")
            self._report(report, "", stderr=True)
            return
        if fmt == "labelstudio":
            out.with_suffix(".xml").write_text(labelstudio_config(categories_of(annotations)), encoding="utf-8")
        with out.open("w", encoding="utf-8") as handle:
            handle.writelines(lines)
        self._report(report, f"Wrote {report.annotations} annotations to {out}")

    def _mqm(self, dataset: Dataset, prefix: str, out: Path | None) -> None:
        """Rows sorted by system, doc_id, seg_id, rater and span start: an imported file round-trips."""
        ratings = mqm_ratings(dataset, mqm_sources(dataset, prefix))
        if out is None:
            for line in mqm_tsv_lines(ratings):
                self.stdout.write(line, ending="")
            return
        with out.open("w", encoding="utf-8", newline="") as handle:
            handle.writelines(mqm_tsv_lines(ratings))
        self.stdout.write(f"Wrote {len(ratings)} MQM ratings to {out}")

    def _pearmut(self, dataset: Dataset, prefix: str, out: Path | None) -> None:
        """One line per (user, document), sorted by user and item_i: an imported log round-trips."""
        ratings = pearmut_ratings(dataset, pearmut_sources(dataset, prefix))
        if out is None:
            for line in pearmut_lines(ratings):
                self.stdout.write(line, ending="")
            return
        with out.open("w", encoding="utf-8", newline="") as handle:
            handle.writelines(pearmut_lines(ratings))
        self.stdout.write(f"Wrote {len(ratings)} ESA ratings to {out}")

    def _report(self, report: ExportReport, first: str, *, stderr: bool = False) -> None:
        stream = self.stderr if stderr else self.stdout
        for line in ([first] if first else []) + report.lines():
            stream.write(line)
