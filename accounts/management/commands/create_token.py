"""`manage.py create_token USERNAME [--name NAME] [--scope read|write] [--expires-days N]`: print a new API bearer
token for a user."""

from __future__ import annotations

from django.core.management.base import CommandError, CommandParser

from accounts.models import User
from accounts.services.tokens import expiry_in, token_create
from errors.commands import BaseCommand


class Command(BaseCommand):
    help = "Create an API token for USERNAME and print it (it is shown only this once)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("username")
        parser.add_argument("--name", default="script")
        parser.add_argument("--scope", default="write", choices=["read", "write"],
                            help="read: GET requests only; write: everything the user's role allows (default).")
        parser.add_argument("--expires-days", type=int, default=None,
                            help="Refuse the token after this many days (default: never; revoke it in the admin "
                                 "or on the account page).")

    def handle(self, *args: object, **options: object) -> None:
        user = User.objects.filter(username=options["username"]).first()
        if user is None:
            names = ", ".join(User.objects.order_by("username").values_list("username", flat=True)[:20]) or "none yet"
            raise CommandError(f"no user named {options['username']!r} (users: {names})")
        token = token_create(user=user, name=options["name"], scope=options["scope"],
                             expires_at=expiry_in(options["expires_days"]))
        self.stdout.write(token)
