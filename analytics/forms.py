"""Forms of the analytics pages: the export form (format and filters)."""

from __future__ import annotations

from django import forms

from analytics.exports.formats import EXPORT_FORMATS
from annotator.models import Assignment
from annotator.services.exporting import ExportFilter
from corpus.models import Dataset


class ExportForm(forms.Form):
    format = forms.ChoiceField(choices=[(f, f) for f in EXPORT_FORMATS], initial="jsonl")
    campaign = forms.TypedChoiceField(required=False, coerce=int, empty_value=None, choices=[])
    aspect = forms.CharField(required=False, max_length=200)
    source = forms.CharField(required=False, max_length=200, help_text="Only annotations by this source.")
    annotator = forms.CharField(required=False, max_length=150, help_text="Only this annotator's judgments.")
    system = forms.CharField(required=False, max_length=200)
    status = forms.ChoiceField(required=False, choices=[("", "any"), *Assignment.Status.choices])

    def __init__(self, *args, dataset: Dataset, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.dataset = dataset
        self.fields["campaign"].choices = [("", "any"), *dataset.campaigns.order_by("name").values_list("pk", "name")]

    def clean(self) -> dict:
        data = super().clean()
        if not self.errors:
            for field, problem in self.export_filter().problems(self.dataset):
                self.add_error(field if field in self.fields else None, problem)
        return data

    def export_filter(self) -> ExportFilter:
        data = self.cleaned_data
        return ExportFilter(campaign_id=data["campaign"], aspect=data["aspect"].strip(), source=data["source"].strip(),
                            annotator=data["annotator"].strip(), system=data["system"].strip(),
                            status=data["status"])
