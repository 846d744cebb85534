"""Django-free engine of the annotation study: the designed sample of machine spans and the vigilance checks."""
