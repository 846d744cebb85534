"""The launch form of a comparison job."""

from __future__ import annotations

from django import forms
from django.conf import settings

from comparison.engine.metrics import metric_names_help
from corpus.models import Dataset
from evaluation.runs.backends import server_choices


class ComparisonLaunchForm(forms.Form):
    dataset = forms.ModelChoiceField(queryset=Dataset.objects.order_by("name"), to_field_name="name")
    metrics = forms.CharField(max_length=2000, help_text=f"Comma-separated: {metric_names_help()}.")
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

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)
        self.fields["server"].choices = [("", f"default ({settings.OLLAMA_URL})"), *server_choices()]

    def clean(self) -> dict:
        data = super().clean()
        if not data.get("ollama_url") and data.get("server"):
            data["ollama_url"] = data["server"]
        return data

    def aspect_list(self) -> list[str] | None:
        return [a.strip() for a in self.cleaned_data["aspects"].split(",") if a.strip()] or None
