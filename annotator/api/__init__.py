"""The annotation API, one router per resource; config.api mounts them."""
