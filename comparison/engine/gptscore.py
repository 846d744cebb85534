"""GPTScore's conditioning text: an instruction naming the aspect, then the inputs, then the output's header.

GPTScore (Fu et al. 2023) scores an output by the average log-probability of its tokens given such an
instruction; the backend supplies the log-probabilities, this module only writes the context before them."""

from __future__ import annotations

from collections.abc import Mapping


def gptscore_context(
    *, task: str, output_noun: str, aspect: str, definition: str, inputs: Mapping[str, str], output_header: str
) -> str:
    """The text the output is scored after: the output itself follows the last line directly."""
    meaning = f" ({definition.strip()})" if definition.strip() else ""
    lines = [
        f"Task: {task.strip()}" if task.strip() else "",
        f"Write a {output_noun or 'text'} for the input below that is excellent in {aspect}{meaning}.",
        "",
    ]
    for header, text in inputs.items():
        lines += [f"{header}:", str(text), ""]
    lines.append(f"{output_header or 'Output'}:")
    return "\n".join(line for i, line in enumerate(lines) if line or i) + "\n"
