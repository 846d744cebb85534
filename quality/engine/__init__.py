"""Quality checks of expert work, Django-free: Wilson intervals, the rubber-stamp rule, flags, decoy proposals."""
