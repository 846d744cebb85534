"""People and their roles; API tokens for scripts."""

from __future__ import annotations

from django.contrib.auth.models import AbstractUser
from django.db import models


class Role(models.TextChoices):
    ADMIN = "admin", "Admin"
    RESEARCHER = "researcher", "Researcher"
    ANNOTATOR = "annotator", "Annotator"


class User(AbstractUser):
    """A person with one role; admins and researchers see everything, annotators only their work."""

    role = models.CharField(max_length=16, choices=Role.choices, default=Role.ANNOTATOR)
    auto_advance = models.BooleanField(
        default=False, help_text="On the item screen, move to the next open error once both verdicts are set.",
    )
    imported_name = models.CharField(
        max_length=200, blank=True, default="",
        help_text="Set on import identities only: the annotator name an imported file used. Such an account "
                  "holds imported judgments and cannot log in; it is never a real annotator's account.",
    )

    class Meta(AbstractUser.Meta):
        constraints = [
            models.UniqueConstraint(fields=["imported_name"], condition=~models.Q(imported_name=""),
                                    name="user_one_identity_per_imported_name"),
        ]

    @property
    def export_name(self) -> str:
        """The annotator name written in exports: an import identity's original name, else the username."""
        return self.imported_name or self.username

    @property
    def is_admin_role(self) -> bool:
        return self.role == Role.ADMIN or self.is_superuser

    @property
    def sees_everything(self) -> bool:
        return self.is_admin_role or self.role == Role.RESEARCHER


class TokenScope(models.TextChoices):
    READ = "read", "Read only (GET)"
    WRITE = "write", "Read and write"


class ApiToken(models.Model):
    """A bearer token for scripts; only its sha256 is stored. A read token may only look (GET, HEAD, OPTIONS).

    A revoked token, or one past its expiry, is refused (401); the row stays so the list shows what it was."""

    user = models.ForeignKey(User, on_delete=models.CASCADE, related_name="api_tokens")
    name = models.CharField(max_length=100, default="script")
    scope = models.CharField(max_length=5, choices=TokenScope.choices, default=TokenScope.WRITE)
    key_hash = models.CharField(max_length=64, unique=True)
    prefix = models.CharField(max_length=8, blank=True, default="",
                              help_text="The token's first characters, to tell tokens apart ('' for older tokens).")
    created_at = models.DateTimeField(auto_now_add=True)
    last_used_at = models.DateTimeField(null=True, blank=True)
    expires_at = models.DateTimeField(null=True, blank=True, help_text="Refused after this moment; empty: never.")
    revoked_at = models.DateTimeField(null=True, blank=True, help_text="Refused since this moment.")

    def __str__(self) -> str:
        return f"{self.user} / {self.name}"

    def is_usable(self, now) -> bool:
        """Neither revoked nor expired at `now`."""
        return self.revoked_at is None and (self.expires_at is None or self.expires_at > now)
