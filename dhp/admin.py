"""Admin pages of the DHP app (perturbation sizes are edited here)."""

from __future__ import annotations

from django.contrib import admin

from dhp.models import DhpRun, PerturbationSizes, Survey, SurveyWeights

admin.site.register(PerturbationSizes)
admin.site.register(Survey)
admin.site.register(SurveyWeights)
admin.site.register(DhpRun)
