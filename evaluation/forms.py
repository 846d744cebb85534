"""Forms of the evaluation app: launching a run (the ensemble or one model)."""

from __future__ import annotations

from django import forms
from django.conf import settings
from django.urls import reverse_lazy

from corpus.models import Dataset
from errors import UserError
from evaluation.engine.presets import PRESETS
from evaluation.models import Aspect
from evaluation.runs.backends import allowed_server_names, server_choices
from evaluation.runs.launch import servers_given
from evaluation.runs.modes import DEFAULT_MODE, mode_choices, mode_spec


class RunLaunchForm(forms.Form):
    # Picking a dataset (or asking for every task's aspects) swaps in the aspect select for it alone, so what is
    # typed in the other fields while the answer comes is kept (hx-include sends the form's values along).
    RECHOOSE = {"hx-get": reverse_lazy("run_new"), "hx-target": "#id_aspect", "hx-select": "#id_aspect",
                "hx-swap": "outerHTML", "hx-include": "closest form"}
    dataset = forms.ModelChoiceField(queryset=Dataset.objects.order_by("name"), widget=forms.Select(attrs=RECHOOSE))
    aspect = forms.ChoiceField(help_text="An aspect of the dataset's task.")
    all_aspects = forms.BooleanField(required=False, label="Show every task's aspects",
                                     widget=forms.CheckboxInput(attrs={**RECHOOSE, "hx-trigger": "change"}),
                                     help_text="Only the dataset's task's aspects are offered unless this is on.")
    preset = forms.ChoiceField(
        choices=[(name, f"{name}: {p.note}") for name, p in PRESETS.items()], required=False, initial="laptop",
        help_text="Used when the model fields are left empty.",
    )
    annotators = forms.CharField(required=False, help_text="Comma-separated Ollama tags; overrides the preset.")
    supervisor = forms.CharField(required=False, help_text="Overrides the preset's supervisor.")
    server = forms.ChoiceField(
        required=False, label="LLM server", help_text="One of the allowed servers; the field below, if filled, wins.",
    )
    ollama_url = forms.CharField(
        required=False, label="LLM servers (several)",
        help_text="Comma-separated: http://HOST:PORT (Ollama) or openai+http://HOST:PORT (OpenAI-compatible); "
        f"the models are spread over them. Default {', '.join(settings.OLLAMA_URLS)}",
    )
    parallel = forms.IntegerField(min_value=1, max_value=64, initial=settings.OLLAMA_PARALLEL)
    mode = forms.ChoiceField(choices=mode_choices, initial=DEFAULT_MODE)
    answer_format = forms.ChoiceField(
        required=False, label="Answer format",
        choices=[("", "the preset's (text; json for the tiny preset)"), ("text", "text (the paper's free-text format)"),
                 ("json", "json (a schema-constrained answer, where the server takes one)")],
        help_text="json asks the server to keep the answer to our error list's JSON schema: a departure from the "
                  "paper, which small models follow far better.")
    outlier_rule = forms.ChoiceField(choices=[("leave_one_out", "leave-one-out (default)"), ("literal", "literal")])

    def __init__(self, *args: object, dataset: Dataset | None = None, show_all: bool = False,
                 **kwargs: object) -> None:
        super().__init__(*args, **kwargs)
        self.fields["ollama_url"].help_text = (
            "Comma-separated: http://HOST:PORT (Ollama) or openai+http://HOST:PORT (OpenAI-compatible); the models "
            f"are spread over them. Allowed: {', '.join(sorted(allowed_server_names()))}. Default: "
            f"{', '.join(settings.OLLAMA_URLS)}."
        )
        self.fields["server"].choices = [("", f"default ({', '.join(settings.OLLAMA_URLS)})"), *server_choices()]
        self.fields["aspect"].choices = aspect_choices(dataset, show_all=show_all)

    def clean_ollama_url(self) -> str:
        """Each server an http(s) address with a host, optionally `openai+` for an OpenAI-compatible one, and
        one of the allowed servers (OLLAMA_URL, OLLAMA_URLS)."""
        value = self.cleaned_data["ollama_url"].strip()
        if not value:
            return ""
        try:
            servers_given(value)  # well-formed, and each one a server the admin allowed
        except UserError as exc:
            raise forms.ValidationError(str(exc)) from None
        return value

    def clean(self) -> dict:
        data = super().clean()
        if not data.get("ollama_url") and data.get("server"):
            data["ollama_url"] = data["server"]  # a choice, so already one of the allowed servers
        dataset, aspect = data.get("dataset"), data.get("aspect")
        if dataset is not None and aspect and not Aspect.objects.filter(task=dataset.task, name=aspect).exists():
            self.add_error("aspect", f"{aspect!r} is not an aspect of {dataset.task.slug} (the dataset's task).")
        return data

    def models(self) -> tuple[list[str] | None, str | None]:
        """Return the models typed in; None where the field is empty, so that run_create takes the preset's."""
        annotators = [m.strip() for m in self.cleaned_data["annotators"].split(",") if m.strip()]
        spec = mode_spec(self.cleaned_data.get("mode") or DEFAULT_MODE)
        if spec.n_models is not None:
            annotators = annotators[: spec.n_models]  # e.g. single and distilled runs use the first model
        return annotators or None, self.cleaned_data["supervisor"].strip() or None


def aspect_choices(dataset: Dataset | None, *, show_all: bool = False) -> list[tuple[str, object]]:
    """The aspect select's choices: once a dataset is picked, its task's aspects alone (every task has its own
    fluency, so a list of all of them offers the same name several times); every task's, grouped, before a
    dataset is picked or when asked for."""
    rows = Aspect.objects.order_by("task__slug", "name")
    if dataset is not None and not show_all:
        own = [(name, name) for name in rows.filter(task=dataset.task).values_list("name", flat=True)]
        return [("", f"— an aspect of {dataset.task.slug} —"), *own]
    groups: dict[str, list[tuple[str, str]]] = {}
    for slug, name in rows.values_list("task__slug", "name"):
        groups.setdefault(slug, []).append((name, name))
    if dataset is not None:  # the dataset's task first
        groups = {dataset.task.slug: groups.pop(dataset.task.slug, []), **groups}
    return [("", "— choose an aspect —"), *groups.items()]
