"""Forms of the evaluation app: launching a run (the ensemble or one model)."""

from __future__ import annotations

from django import forms
from django.conf import settings

from corpus.models import Dataset
from evaluation.engine.presets import PRESETS
from evaluation.runs.modes import DEFAULT_MODE, mode_choices, mode_spec


class RunLaunchForm(forms.Form):
    dataset = forms.ModelChoiceField(queryset=Dataset.objects.order_by("name"))
    aspect = forms.CharField(max_length=200, help_text="An aspect of the dataset's task, e.g. accuracy.")
    preset = forms.ChoiceField(
        choices=[(name, f"{name}: {p.note}") for name, p in PRESETS.items()], required=False,
        help_text="Used when the model fields are left empty.",
    )
    annotators = forms.CharField(required=False, help_text="Comma-separated Ollama tags; overrides the preset.")
    supervisor = forms.CharField(required=False, help_text="Overrides the preset's supervisor.")
    ollama_url = forms.ChoiceField(required=False, help_text="The servers an admin allowed (OLLAMA_URL, OLLAMA_URLS).")
    parallel = forms.IntegerField(min_value=1, max_value=64, initial=settings.OLLAMA_PARALLEL)
    mode = forms.ChoiceField(choices=mode_choices, initial=DEFAULT_MODE)
    outlier_rule = forms.ChoiceField(choices=[("leave_one_out", "leave-one-out (default)"), ("literal", "literal")])

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)
        self.fields["ollama_url"].choices = [(url, url) for url in settings.OLLAMA_URLS]

    def models(self) -> tuple[list[str], str]:
        preset = PRESETS[self.cleaned_data.get("preset") or settings.ENSEMBLE_PRESET]
        annotators = [m.strip() for m in self.cleaned_data["annotators"].split(",") if m.strip()] or list(
            preset.annotators
        )
        spec = mode_spec(self.cleaned_data.get("mode") or DEFAULT_MODE)
        if spec.n_models is not None:
            annotators = annotators[: spec.n_models]  # e.g. single and distilled runs use the first model
        return annotators, self.cleaned_data["supervisor"].strip() or preset.supervisor
