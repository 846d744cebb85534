"""`manage.py preannotate --dataset NAME --aspect ASPECT [--preset NAME] [...] [--wait | --sync]` (docs)."""

from __future__ import annotations

from django.core.management.base import CommandError, CommandParser

from corpus.models import Dataset
from errors.commands import BaseCommand
from evaluation.engine.ensemble import DEFAULT_OUTLIER_RULE, OUTLIER_RULES
from evaluation.engine.presets import PRESETS
from evaluation.models import EvaluatorRun
from evaluation.runs.launch import run_create
from evaluation.runs.modes import DEFAULT_MODE, MODES, modes_help
from evaluation.selectors import run_problems, unchecked_problems
from jobs.models import JobStatus
from jobs.waiting import add_job_arguments, job_follow


class Command(BaseCommand):
    help = "Run the OpeNLGauge ensemble (or one model) over a dataset as a Celery job, or in-process with --sync."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--dataset", required=True, help="Dataset name, as import_items was given it.")
        parser.add_argument("--aspect", required=True,
                            help="An aspect of the dataset's task; `manage.py list_aspects --task TASK` lists them.")
        parser.add_argument("--preset", choices=list(PRESETS), default=None, help=presets_help())
        parser.add_argument("--annotators", default="", help="Comma-separated Ollama model tags (default: preset).")
        parser.add_argument("--supervisor", default="", help="Supervisor model tag (default: preset).")
        parser.add_argument(
            "--ollama-url", default="",
            help="LLM server(s), comma-separated: http://HOST:PORT (Ollama) or openai+http://HOST:PORT "
            "(an OpenAI-compatible server such as vLLM); the job spreads its models over them (default: OLLAMA_URLS).",
        )
        parser.add_argument("--parallel", type=int, default=0, help="Requests in flight per model.")
        parser.add_argument("--answer-format", choices=["text", "json"], default=None,
                            help="json: ask for a schema-constrained JSON answer (Ollama `format`, OpenAI-compatible "
                                 "`response_format`); a departure from the paper's free text. Default: the preset's "
                                 "(text, except the `tiny` preset's json), text for models given by name.")
        parser.add_argument("--no-repair", action="store_true",
                            help="Do not send an unreadable answer back once to be restated in our format.")
        parser.add_argument("--outlier-rule", default=DEFAULT_OUTLIER_RULE, choices=list(OUTLIER_RULES),
                            help="Which annotators' scores count as outliers, left out of the supervisor's input.")
        parser.add_argument("--mode", default=DEFAULT_MODE.value, choices=[mode.value for mode in MODES],
                            help=modes_help())
        add_job_arguments(parser)

    def handle(self, *args: object, **options: object) -> None:
        dataset = Dataset.objects.filter(name=options["dataset"]).first()
        if dataset is None:
            names = ", ".join(repr(n) for n in Dataset.objects.values_list("name", flat=True)[:20]) or "none yet"
            raise CommandError(f"no dataset named {options['dataset']!r} (datasets: {names})")
        annotators = [m.strip() for m in str(options["annotators"]).split(",") if m.strip()] or None
        run = run_create(
            dataset=dataset, aspect_name=options["aspect"], annotators=annotators,
            supervisor=options["supervisor"] or None, ollama_url=options["ollama_url"] or None,
            parallel=options["parallel"] or None, outlier_rule=options["outlier_rule"], mode=options["mode"],
            preset=options["preset"], repair=False if options["no_repair"] else None,
            answer_format=options["answer_format"],
        )
        self.stdout.write(describe_run(run))
        for entry in run.placement.get("servers", []):
            models = ", ".join(entry["models"]) or "nothing"
            guess = ("simulated server: no model runs, so no real time estimate" if run.simulated else
                     f"about {entry['expected_seconds']:.0f} s on a real server at the preset's speeds")
            self.stdout.write(f"  {entry['server']}: {models} ({guess})")
        ended = job_follow(run, options, line=_line, write=self.stdout.write,
                           queued=f"Queued; follow it on its page or with the API (GET /api/runs/{run.pk}).")
        return None if ended is None else self._report(ended, ended.status)

    def _report(self, run: EvaluatorRun, status: str | None) -> None:
        self.stdout.write(
            f"{run.label}: {status}; {run.done}/{run.total} steps, {run.cache_hits} from the cache, "
            f"{run.failed_calls} unparseable."
        )
        problems = run_problems(run.pk)
        for key, count in unchecked_problems(run.config).items():
            self.stdout.write(f"{key} ({count} answer(s): the server cuts over-long prompts silently and its "
                              "counts cannot tell a cut)")
        self.stdout.write(f"prompt_too_long: {problems['prompt_too_long']} pair(s); "
                          f"answer_cut: {problems['answer_cut']} pair(s)")
        if status != JobStatus.DONE:
            raise CommandError(run.message or f"run ended as {status}")


def presets_help() -> str:
    """The presets with their models, for `--help` (the docs' preset table is generated from the same presets)."""
    lines = [
        f"{p.name}: {', '.join(p.annotators)}; supervisor {p.supervisor}" for p in PRESETS.values()
    ]
    return "Models to use when --annotators/--supervisor are not given (default ENSEMBLE_PRESET). " + " | ".join(lines)


def describe_run(run: EvaluatorRun) -> str:
    """The run's first line of output: what it will ask, of which models, where."""
    config = run.config
    models = f"annotators {', '.join(config['annotators'])}"
    if config.get("supervisor"):
        models += f"; supervisor {config['supervisor']}"
    preset = config.get("preset")
    source = f"preset {preset}" if preset else "models as given"
    return (
        f"Run {run.label} (id {run.pk}) on {run.dataset.name!r}, aspect {run.aspect.name}, mode {config['mode']}: "
        f"{source} ({models}); {run.total} steps, parallel {run.parallel}, Ollama at {run.ollama_url}."
    )


def _line(run: EvaluatorRun) -> str:
    return f"{run.status}: {run.done}/{run.total}"
