"""Formatting of the priming figures on the campaign dashboard (shares, intervals, n)."""

from __future__ import annotations

from django import template

from stats.priming import PerOutput, Share

register = template.Library()


@register.filter
def share(value: float | None) -> str:
    return "—" if value is None else f"{100 * value:.0f}%"


@register.filter
def num(value: float | None, digits: int = 1) -> str:
    return "—" if value is None else f"{value:.{int(digits)}f}"


@register.filter
def share_ci(figure: Share) -> str:
    """"50.0% [0.0–66.7] n=6": the share, its 95% interval in points, and its n."""
    if figure.value is None:
        return f"— (n={figure.n})"
    interval = "" if figure.ci_low is None else f" [{100 * figure.ci_low:.1f}–{100 * figure.ci_high:.1f}]"
    return f"{100 * figure.value:.1f}%{interval} n={figure.n}"


@register.filter
def difference_ci(figure: PerOutput) -> str:
    if figure.difference is None:
        return f"— ({figure.n_outputs} crossed outputs)"
    interval = "" if figure.ci_low is None else f" [{figure.ci_low:+.2f}, {figure.ci_high:+.2f}]"
    return f"{figure.difference:+.2f}{interval} over {figure.n_outputs}"
