"""Forms of the DHP pages: creating a survey, launching a run."""

from __future__ import annotations

from django import forms

from accounts.models import User
from corpus.cleaning import INT32_MAX
from corpus.models import Dataset, TaskType
from dhp.engine.kinds import BASE_KINDS, KINDS
from dhp.services.runs import MAX_SAMPLES


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
    dataset = forms.ModelChoiceField(queryset=Dataset.objects.all())
    evaluator = forms.CharField(max_length=200, help_text="An Ollama model, 'ensemble' or 'distilled:MODEL'.")
    metrics = forms.CharField(help_text="Comma-separated aspects of the dataset's task.")
    kinds = forms.MultipleChoiceField(choices=[(k, k) for k in KINDS], required=False,
                                      help_text="Default: every rule-based kind.")
    samples = forms.IntegerField(min_value=1, max_value=MAX_SAMPLES, initial=5)
    seed = forms.IntegerField(min_value=0, max_value=INT32_MAX, initial=0)
    ollama_url = forms.CharField(required=False)
    parallel = forms.IntegerField(min_value=1, max_value=64, required=False)
