"""`manage.py export_annotations --dataset NAME [--source NAME] --format jsonl|factgenie|labelstudio|mqm-tsv|pearmut
[-o P]`, and `--campaign ID --format mqm-tsv [--rater-names] [--exclude-flagged | --include-flagged]`.

It lives in analytics, not corpus, because an MQM campaign's ratings are read with the campaign's flagged
annotators left out or counted (analytics.selectors.exclusion), which only this layer can ask.
"""

from __future__ import annotations

from pathlib import Path

from django.core.management.base import CommandError, CommandParser

from analytics.management.flagged import add_flagged_arguments
from analytics.selectors.exclusion import exclusion_for
from analytics.selectors.mqm import campaign_mqm_ratings
from annotator.models import Campaign
from corpus import protocols
from corpus.interop import ANNOTATION_FILE_FORMATS, slug
from corpus.interop.mqm import MqmRating, mqm_tsv_lines
from corpus.interop.mqm_sxs import sxs_tsv_lines
from corpus.interop.pearmut import pearmut_lines
from corpus.models import Dataset
from corpus.selectors.mqm import has_units, mqm_ratings, mqm_sources, sxs_file
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
            "ratings (the sources PREFIX:*, or an MQM campaign's finished work) as Google's MQM TSV, or ESA "
            "ratings (PREFIX:*) as Pearmut's annotation log.")

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--dataset", help="The dataset to export (needed unless --campaign names the ratings).")
        parser.add_argument("--source", help="A source of this dataset (looked up in it only); for mqm-tsv and pearmut "
                                             "the PREFIX of the raters' sources PREFIX:RATER (default mqm, pearmut).")
        parser.add_argument("--format", default="jsonl", choices=(*ANNOTATION_FILE_FORMATS, MQM_TSV, PEARMUT))
        parser.add_argument(
            "-o", "--output", type=Path,
            help="File to write (stdout by default); for factgenie a campaign folder named by its campaign id "
            "(default DATASET-SOURCE slugified, in the current folder), for labelstudio also writes the "
            "labeling config beside it (NAME.xml).",
        )
        parser.add_argument("--campaign", type=int, metavar="ID",
                            help="With --format mqm-tsv: the ratings an MQM campaign's annotators made (finished "
                                 "real items only; its dataset is implied).")
        parser.add_argument("--rater-names", action="store_true",
                            help="With --campaign: write each annotator's username as the rater, not rater1, "
                                 "rater2, ... (numbered in the order their accounts were made).")
        add_flagged_arguments(parser, "export (with --campaign)")

    def handle(self, *args: object, **options: object) -> None:
        if options["campaign"] is not None:
            self._campaign(options)
            return
        if options["rater_names"] or options["exclude_flagged"] is not None:
            raise CommandError("--rater-names, --exclude-flagged and --include-flagged apply only with --campaign")
        if not options["dataset"]:
            raise CommandError("--dataset is needed (or --campaign with --format mqm-tsv)")
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
        """Rows sorted by system, doc_id, seg_id, rater and span start: an imported file round-trips. Ratings made
        side by side are written in that layout, each row where the file had it: the file comes back as it was."""
        raters = mqm_sources(dataset, prefix)
        if not has_units(dataset, raters):
            self._write_tsv(mqm_ratings(dataset, raters), out)
            return
        read = sxs_file(dataset, raters)
        if out is None:
            for line in sxs_tsv_lines(read.header, read.ratings):
                self.stdout.write(line, ending="")
            return
        with out.open("w", encoding="utf-8", newline="") as handle:
            handle.writelines(sxs_tsv_lines(read.header, read.ratings))
        self.stdout.write(f"Wrote {len(read.ratings)} side-by-side MQM ratings to {out}")

    def _campaign(self, options: dict[str, object]) -> None:
        """An MQM campaign's finished ratings, the flagged annotators left out or counted as asked (default: the
        campaign's setting); who was left out goes to stderr, beside the TSV, never into it."""
        if options["format"] != MQM_TSV:
            raise CommandError(f"--campaign exports only --format {MQM_TSV} (not {options['format']})")
        if options["source"]:
            raise CommandError("--source names a dataset's imported raters; with --campaign leave it out")
        campaign = Campaign.objects.filter(pk=options["campaign"]).select_related("dataset").first()
        if campaign is None:
            raise CommandError(f"--campaign: no campaign with id {options['campaign']}")
        if MQM_TSV not in protocols.get(campaign.protocol).exports:
            raise CommandError(f"--campaign: campaign {campaign.pk} runs the {campaign.protocol} protocol; "
                               f"--format {MQM_TSV} needs protocol {protocols.MQM!r}")
        if options["dataset"] and options["dataset"] != campaign.dataset.name:
            raise CommandError(f"--dataset: campaign {campaign.pk} rates dataset {campaign.dataset.name!r}, not "
                               f"{options['dataset']!r} (leave --dataset out with --campaign)")
        exclusion = exclusion_for(campaign, options["exclude_flagged"])  # type: ignore[arg-type]
        ratings = campaign_mqm_ratings(campaign, exclude_flagged=exclusion.exclude,
                                       rater_names=bool(options["rater_names"]))
        self._write_tsv(ratings, options["output"])  # type: ignore[arg-type]
        self.stderr.write(exclusion.sentence())

    def _write_tsv(self, ratings: list[MqmRating], out: Path | None) -> None:
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
