"""The Django-free part of DHP: the perturbation vocabulary, perturbation functions, prompts, statistics."""
