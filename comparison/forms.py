"""The launch form of a comparison job."""

from __future__ import annotations

from django import forms
from django.conf import settings

from comparison.engine.hf_plan import PRECISIONS
from comparison.engine.metrics import MODEL_METRIC_FORMS, plain_metric_names
from corpus.models import Dataset
from evaluation.runs.backends import server_choices


def _names(text: str) -> list[str]:
    return [name.strip() for name in text.split(",") if name.strip()]


class MetricNamesField(forms.MultipleChoiceField):
    """The checked metrics; a posted value may also list names comma-separated (as scripts post them). Which
    names exist is the job's to say (`comparison_create` parses them), so the error names every accepted form."""

    widget = forms.CheckboxSelectMultiple

    def to_python(self, value: object) -> list[str]:
        values = [value] if isinstance(value, str) else super().to_python(value)
        return [name for each in values for name in _names(each)]

    def valid_value(self, value: str) -> bool:
        return True


class ComparisonLaunchForm(forms.Form):
    dataset = forms.ModelChoiceField(queryset=Dataset.objects.order_by("name"), to_field_name="name")
    metrics = MetricNamesField(
        required=False, choices=[(name, name) for name in plain_metric_names()],
        help_text="@input: compared with the input instead of a reference.",
    )
    model_metrics = forms.CharField(max_length=2000, required=False, label="Metrics with a model",
                                    help_text=f"Comma-separated: {', '.join(MODEL_METRIC_FORMS)}.")
    aspects = forms.CharField(max_length=2000, required=False,
                              help_text="Comma-separated human-score aspects; empty = all of the dataset's.")
    server = forms.ChoiceField(required=False, label="LLM server",
                               help_text="For ensemble / annotator / distilled metrics; a URL below wins.")
    ollama_url = forms.CharField(max_length=300, required=False, label="Ollama URL",
                                 help_text="For ensemble / annotator / distilled metrics (default: OLLAMA_URL).")
    gptscore_url = forms.CharField(max_length=300, required=False, label="GPTScore server URL",
                                   help_text="An OpenAI-compatible server with echo + logprobs on /v1/completions "
                                             "(vLLM >= 0.5.2; the llama.cpp server and TGI give none); Ollama "
                                             "cannot score a given text. gptscore-hf:MODEL needs no server.")

    precision = forms.ChoiceField(
        required=False, label="gptscore-hf precision",
        choices=[("", f"default ({settings.GPTSCORE_HF_PRECISION})"), *((p, p) for p in PRECISIONS)],
        help_text="What gptscore-hf:MODEL computes in: auto = the checkpoint's on the CPU, bf16 for decoder "
                  "models on a GPU that has it.")

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)
        self.fields["server"].choices = [("", f"default ({settings.OLLAMA_URL})"), *server_choices()]

    def clean(self) -> dict:
        data = super().clean()
        data["metrics"] = [*data.get("metrics", []), *_names(data.get("model_metrics", ""))]
        if not data.get("ollama_url") and data.get("server"):
            data["ollama_url"] = data["server"]
        return data

    def aspect_list(self) -> list[str] | None:
        return _names(self.cleaned_data["aspects"]) or None
