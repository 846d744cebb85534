"""The one form layout of the site: `{{ form }}` renders label, field, help and one error beside the field."""

from __future__ import annotations

from django.forms.renderers import TemplatesSetting


class AppFormRenderer(TemplatesSetting):
    """Forms render through the project's templates (templates/forms/), so every page lays them out alike
    and shows an error once: Django's default prints a field's errors as a list above it, and pages added a
    red line of their own."""

    form_template_name = "forms/form.html"
    field_template_name = "forms/field.html"
