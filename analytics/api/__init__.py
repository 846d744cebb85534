"""The analytics API, one router per resource; config.api mounts them."""
