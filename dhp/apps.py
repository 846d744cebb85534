"""Django app config of the DHP benchmark."""

from __future__ import annotations

from django.apps import AppConfig


class DhpConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "dhp"
    verbose_name = "DHP discernment benchmark"

    def ready(self) -> None:
        # Campaigns plant errors with the DHP engine's fact-changing rules; annotator sits below dhp, so dhp
        # hands the function down rather than annotator reaching up for it.
        from annotator.services.checks import planter_register  # noqa: PLC0415 - app registry must be ready
        from dhp.engine.planting import plant  # noqa: PLC0415

        planter_register(plant)
