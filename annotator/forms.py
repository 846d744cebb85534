"""Forms of the annotation app: campaign creation, control keys, added spans."""

from __future__ import annotations

from django import forms

from corpus.formats import FormatError
from corpus.interop import ANNOTATION_FILE_FORMATS
from corpus.models import TaskType
from corpus.protocols import opennlgauge as protocol
from corpus.services.annotation_import import annotator_map


class AddedSpanForm(forms.Form):
    start = forms.IntegerField(min_value=0)
    end = forms.IntegerField(min_value=1)
    aspect = forms.CharField(required=False, max_length=200)
    category = forms.CharField(required=False, max_length=100)
    severity = forms.TypedChoiceField(
        required=False, coerce=int, empty_value=None, choices=[("", "—"), *((i, str(i)) for i in protocol.SEVERITIES)]
    )
    note = forms.CharField(required=False, max_length=4000, widget=forms.Textarea(attrs={"rows": 2}))


class AddedSpanEditForm(forms.Form):
    category = forms.CharField(required=False, max_length=100)
    severity = forms.TypedChoiceField(
        required=False, coerce=int, empty_value=None, choices=[("", "—"), *((i, str(i)) for i in protocol.SEVERITIES)]
    )
    note = forms.CharField(required=False, max_length=4000, widget=forms.Textarea(attrs={"rows": 2}))


# The control-key page offers every protocol verdict, and "not set" for a span without a known verdict.
SPAN_VERDICT_CHOICES = [("", "— not set —"), *protocol.choices(protocol.SPAN_VERDICTS)]
EXPLANATION_VERDICT_CHOICES = [("", "— not set —"), *protocol.choices(protocol.EXPLANATION_VERDICTS)]


class DatasetImportForm(forms.Form):
    """Upload of an item file: the browser twin of `manage.py import_items`."""

    file = forms.FileField(help_text="JSON list or JSONL in the meta-evaluation format (or an export of this tool).")
    dataset = forms.CharField(max_length=200, help_text="A new name, or an existing dataset to add to.")
    task = forms.ModelChoiceField(queryset=None, to_field_name="slug")
    source = forms.CharField(max_length=200, initial="gold", help_text="Source name of the spans in the file.")
    aspect = forms.CharField(max_length=200, required=False, help_text="The aspect those spans are about (optional).")

    def __init__(self, *args: object, **kwargs: object) -> None:

        super().__init__(*args, **kwargs)
        self.fields["task"].queryset = TaskType.objects.order_by("slug")


class AnnotationImportForm(forms.Form):
    """Another tool's annotations of a dataset's items (the form of `manage.py import_annotations`)."""

    file = forms.FileField(help_text="Our JSONL, a factgenie campaign file (JSONL) or a Label Studio JSON export.")
    source = forms.CharField(max_length=200, help_text="Name of the new annotation source.")
    format = forms.ChoiceField(choices=[(f, f) for f in ANNOTATION_FILE_FORMATS], initial="jsonl")
    skip_bad_spans = forms.BooleanField(
        required=False, help_text="Import the good spans of a file with empty or impossible ones (each is reported)."
    )
    split = forms.CharField(
        max_length=200, required=False,
        help_text="factgenie: only the lines of this split (lines of other datasets are always left aside).",
    )
    map_annotator = forms.CharField(
        required=False, strip=False, widget=forms.Textarea(attrs={"rows": 3}), label="Map annotators",
        help_text="Label Studio: one ID=NAME per line, the annotator a Label Studio user id stands for "
                  "(ID= for an annotation by nobody named).",
    )

    def clean_split(self) -> str:
        return self.cleaned_data["split"].strip()

    def clean_map_annotator(self) -> dict[str, str]:
        """The lines as the mapping `manage.py import_annotations --map-annotator` builds (same rules)."""
        try:
            return annotator_map(self.cleaned_data["map_annotator"].splitlines(), place="line", skip_blank=True)
        except FormatError as exc:
            raise forms.ValidationError(str(exc)) from None
