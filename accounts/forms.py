"""The account page's form for a new API token."""

from __future__ import annotations

from django import forms

from accounts.models import TokenScope
from accounts.services.tokens import MAX_EXPIRY_DAYS


class TokenForm(forms.Form):
    name = forms.CharField(max_length=100, initial="script", help_text="What the token is for.")
    scope = forms.ChoiceField(choices=TokenScope.choices, initial=TokenScope.READ)
    expires_in_days = forms.IntegerField(min_value=1, max_value=MAX_EXPIRY_DAYS, required=False,
                                         label="Expires in (days)", help_text="Empty: never.")
