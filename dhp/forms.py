"""Forms of the DHP pages: creating a survey, launching a run."""

from __future__ import annotations

from django import forms
from django.conf import settings

from accounts.models import User
from corpus.cleaning import INT32_MAX
from corpus.models import Dataset, TaskType
from dhp.engine.kinds import BASE_KINDS, KINDS
from dhp.models import Survey
from dhp.services.runs import MAX_SAMPLES
from evaluation.engine.presets import PRESETS
from evaluation.models import Aspect
from evaluation.runs.backends import server_choices


class SurveyForm(forms.Form):
    task = forms.ModelChoiceField(queryset=TaskType.objects.all(), to_field_name="slug")
    title = forms.CharField(max_length=200, required=False)
    metrics = forms.CharField(help_text="Comma-separated aspects of the task, e.g. coherence,consistency,fluency")
    issues = forms.MultipleChoiceField(choices=[(k, v.title) for k, v in BASE_KINDS.items()], required=False,
                                       help_text="Quality issues to ask about (default: all).")
    experts = forms.ModelMultipleChoiceField(queryset=User.objects.order_by("username"), required=False)

    def metric_list(self) -> list[str]:
        return [m.strip() for m in self.cleaned_data["metrics"].split(",") if m.strip()]


class InviteForm(forms.Form):
    experts = forms.ModelMultipleChoiceField(queryset=User.objects.order_by("username"))


class RunForm(forms.Form):
    dataset = forms.ModelChoiceField(queryset=Dataset.objects.order_by("name"))
    evaluator = forms.CharField(
        max_length=200, widget=forms.TextInput(attrs={"list": "dhp-evaluators"}),
        help_text="Pick 'ensemble', 'distilled:MODEL' or a preset's model from the list, or type any model name.",
    )
    metrics = forms.MultipleChoiceField(widget=forms.CheckboxSelectMultiple,
                                        help_text="Aspects of the dataset's task (grouped by task).")
    kinds = forms.MultipleChoiceField(
        choices=[(f"{level} level", [(name, name) for name, kind in KINDS.items() if kind.level == level])
                 for level in dict.fromkeys(kind.level for kind in KINDS.values())],
        widget=forms.CheckboxSelectMultiple, required=False, help_text="Default: every rule-based kind.",
    )
    samples = forms.IntegerField(min_value=1, max_value=MAX_SAMPLES, initial=5)
    seed = forms.IntegerField(min_value=0, max_value=INT32_MAX, initial=0)
    survey = forms.ModelChoiceField(
        queryset=Survey.objects.select_related("task").order_by("-pk"), required=False,
        help_text="Expert weights (EW) from this survey's votes; its task must be the dataset's. Empty: no EW.",
    )
    preset = forms.ChoiceField(
        required=False, help_text="The ensemble preset: its models for evaluator 'ensemble', and its supervisor "
        "writes the LLM-based perturbations (unless DHP_PERTURB_MODEL is set).",
    )
    ollama_url = forms.ChoiceField(label="LLM server", required=False,
                                   help_text="One of the servers the admin allowed (OLLAMA_URL, OLLAMA_URLS).")
    parallel = forms.IntegerField(min_value=1, max_value=64, required=False)

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)
        self.fields["preset"].choices = [
            ("", f"default ({settings.ENSEMBLE_PRESET})"),
            *((name, f"{name}: {p.note}") for name, p in PRESETS.items()),
        ]
        self.fields["preset"].initial = "laptop"
        servers = [(name, label) for name, label in server_choices() if name != settings.OLLAMA_URL]
        self.fields["ollama_url"].choices = [("", f"default ({settings.OLLAMA_URL})"), *servers]
        self.fields["survey"].label_from_instance = lambda s: f"{s.title or 'survey'} #{s.pk} ({s.task.slug})"
        groups: dict[str, list[tuple[str, str]]] = {}
        for slug, name in Aspect.objects.order_by("task__slug", "name").values_list("task__slug", "name"):
            groups.setdefault(slug, []).append((name, name))
        self.fields["metrics"].choices = list(groups.items())
        models = [m for p in PRESETS.values() for m in (*p.annotators, p.supervisor)]
        # What the presets offer; the field still takes any model name typed in.
        self.evaluator_suggestions = ["ensemble", *(f"distilled:{m}" for m in dict.fromkeys(models)),
                                      *dict.fromkeys(models)]

    def clean_metrics(self) -> str:
        """The chosen aspects as the comma-separated list the service takes."""
        return ",".join(self.cleaned_data["metrics"])
