"""The report's sections written out as LaTeX (booktabs), GitHub Markdown or one self-contained HTML page.

Cells are printed by the tables' own formatter (analytics.tables), so a number reads the same in every
format and on the page. Every text that comes from data (run labels, annotator names, aspects) is escaped
for the target format.
"""

from __future__ import annotations

import base64
import re

from django.utils.html import escape

from analytics.report.sections import ReportContext, Section
from analytics.tables import FEW_MARK, Cell, Table

# ---- LaTeX ------------------------------------------------------------------------------------------------

_TEX_SPECIAL = {
    "\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_", "{": r"\{", "}": r"\}",
    "~": r"\textasciitilde{}", "^": r"\textasciicircum{}", "<": r"\textless{}", ">": r"\textgreater{}",
    "|": r"\textbar{}", "—": "---", "–": "--", "…": r"\ldots{}", "±": r"$\pm$", "×": r"$\times$",
    FEW_MARK: r"$^\dagger$", "“": "``", "”": "''", "’": "'", "‘": "`", "\u00a0": "~",
}


def tex_escape(text: str) -> str:
    """Escape text for LaTeX; a character pdflatex cannot typeset without extra fonts becomes [U+XXXX]."""
    out = []
    for ch in text:
        if ch in _TEX_SPECIAL:
            out.append(_TEX_SPECIAL[ch])
        elif ch.isprintable() and ord(ch) < 128:
            out.append(ch)
        elif ch in "\n\t":
            out.append(" ")
        elif 0xA0 <= ord(ch) <= 0xFF and ch.isprintable():  # Latin-1 letters: utf8 inputenc knows them
            out.append(ch)
        else:
            out.append(f"[U+{ord(ch):04X}]")
    return "".join(out)


def _tex_cell(cell: Cell) -> str:
    text = "--" if cell.text == "—" else tex_escape(cell.text)
    if cell.best:
        text = rf"\textbf{{{text}}}"
    if cell.few:
        text += r"$^\dagger$"
    return text


# The page a LaTeX report is set on: A4, 2 cm margins, tables in \small (Computer Modern at 10 pt). A table
# wider than the text is split into column groups instead of being shrunk; widths are measured from the font's
# own character widths (cmr10, points; pdflatex reports the same with \wd of a box), bold about 16% wider.
TEXT_WIDTH_PT = 483.7  # 21 cm - 2 x 2 cm
TABCOLSEP_PT = 4.0  # the space on both sides of a column (LaTeX's default is 6 pt)
_COLUMN_GAP_PT = 2 * TABCOLSEP_PT
_FIT = 0.96  # a table is split before it comes this close to the text width
_CMR10_PT = {
    2.78: "!',.:;[]`il|", 3.06: "fj", 3.33: " -", 3.6: "_", 3.61: "I", 3.89: "()t", 3.92: "r", 3.94: "s",
    4.44: "cez", 4.72: "?", 5.0: "\"$*/0123456789\\^ago{}~", 5.14: "J", 5.28: "kqvxy", 5.56: "Sbdhnpu", 6.11: "Z",
    6.25: "L", 6.53: "F", 6.81: "EP", 7.08: "B", 7.22: "CTw", 7.36: "R", 7.5: "AHNUVXY", 7.64: "D",
    7.78: "&+<=>@KOQ", 7.85: "G", 8.33: "#%m", 9.17: "M", 10.28: "W",
}
_CHAR_PT = {ch: width for width, chars in _CMR10_PT.items() for ch in chars}
_BOLD = 1.2
_DAGGER_PT = 4.2
_HEAD_PT = 45.0  # a header is wrapped onto lines of about this width ("95% CI" over "high")
_WRAP_PT = 230.0  # a text column wider than this is set as a paragraph column
LONG_TABLE_ROWS = 30  # a table with more rows breaks across pages (longtable) instead of floating


def text_pt(text: str, *, bold: bool = False) -> float:
    """The width of `text` set in the tables' font, in points (what tex_escape makes of a character beyond
    Latin-1, [U+XXXX], is counted as such)."""
    width = 0.0
    for ch in "--" if text == "—" else text:
        width += _CHAR_PT.get(ch, 5.0 if ord(ch) < 256 else 40.0)
    return width * (_BOLD if bold else 1.0)


def _head_lines(label: str) -> list[str]:
    lines: list[str] = []
    for word in label.split():
        if lines and text_pt(f"{lines[-1]} {word}") <= _HEAD_PT:
            lines[-1] += " " + word
        else:
            lines.append(word)
    return lines or [""]


def _natural_pt(table: Table, index: int, cells: list[list[Cell]]) -> float:
    """The column's natural width: its widest header line or cell (with its marks)."""
    width = max(text_pt(line) for line in _head_lines(table.columns[index].label))
    for row in cells:
        cell = row[index]
        width = max(width, text_pt(cell.text, bold=cell.best) + (_DAGGER_PT if cell.few else 0.0))
    return width


def column_parts(table: Table) -> list[list[int]]:
    """The table's columns split into parts that each fit the text width: the first column (what a row is
    about) starts every part, and columns of one group (a figure and its interval) stay together."""
    cells = table.display_cells()
    widths = [min(_natural_pt(table, i, cells), _WRAP_PT) + _COLUMN_GAP_PT for i in range(len(table.columns))]
    blocks: list[list[int]] = []
    for i, column in enumerate(table.columns[1:], start=1):
        if blocks and column.group and table.columns[blocks[-1][-1]].group == column.group:
            blocks[-1].append(i)
        else:
            blocks.append([i])
    parts: list[list[int]] = []
    current = [0]
    for block in blocks:
        if len(current) > 1 and sum(widths[i] for i in current + block) > _FIT * TEXT_WIDTH_PT:
            parts.append(current)
            current = [0]
        current = current + block
    parts.append(current)
    return parts


def _tex_head(label: str, align: str) -> str:
    lines = [tex_escape(line) for line in _head_lines(label)]
    if len(lines) == 1:
        return lines[0]
    return rf"\begin{{tabular}}[b]{{@{{}}{align}@{{}}}}" + r" \\ ".join(lines) + r"\end{tabular}"


def _tex_align(table: Table, index: int, cells: list[list[Cell]]) -> str:
    column = table.columns[index]
    if column.kind != "text":
        return "r"
    if _natural_pt(table, index, cells) > _WRAP_PT:
        return rf">{{\raggedright\arraybackslash}}p{{{_WRAP_PT:.0f}pt}}"
    return "l"


def _tex_tabular(table: Table, columns: list[int], cells: list[list[Cell]], *, long: bool, caption: str,
                 label: str) -> str:
    aligns = [_tex_align(table, i, cells) for i in columns]
    head = " & ".join(_tex_head(table.columns[i].label, "l" if a != "r" else "r") for i, a in zip(columns, aligns,
                                                                                                     strict=True))
    body = "\n".join(" & ".join(_tex_cell(row[i]) for i in columns) + r" \\" for row in cells)
    spec = "".join(aligns)
    size = f"\\small\\setlength{{\\tabcolsep}}{{{TABCOLSEP_PT:g}pt}}"  # in the table's group: a paper's own stays
    if long:
        return (f"{{{size}\n\\begin{{longtable}}{{{spec}}}\n\\caption{{{caption}}}{label} \\\\\n\\toprule\n"
                f"{head} \\\\\n\\midrule\n\\endfirsthead\n\\toprule\n{head} \\\\\n\\midrule\n\\endhead\n"
                f"{body}{chr(10) if body else ''}\\bottomrule\n\\end{{longtable}}}}\n")
    return (f"\\begin{{table}}[H]\n\\centering\n{size}\n\\caption{{{caption}}}{label}\n"
            f"\\begin{{tabular}}{{{spec}}}\n\\toprule\n{head} \\\\\n\\midrule\n"
            f"{body}{chr(10) if body else ''}\\bottomrule\n\\end{{tabular}}\n\\end{{table}}\n")


def tex_table(table: Table) -> str:
    """One table as booktabs tabulars at the text's own font size: a table wider than the text is split into
    parts by column groups (each repeating the first column), one with many rows breaks across pages; nothing
    is shrunk. Tables and figures stay where their section puts them ([H])."""
    cells = table.display_cells()
    parts = column_parts(table)
    long = len(cells) > LONG_TABLE_ROWS
    note = table.full_note
    out = [f"% {table.key}: generated by spanjudge export_report\n"]
    for n, columns in enumerate(parts, start=1):
        title = tex_escape(table.title)
        if len(parts) > 1:
            title += f" (part {n} of {len(parts)})"
        caption = title + (f". {tex_escape(note)}" if note and n == len(parts) else "")
        label = rf"\label{{tab:{table.key}}}" if n == 1 else ""
        out.append(_tex_tabular(table, columns, cells, long=long, caption=caption, label=label))
    return "".join(out)


def _tex_banner(banner: str) -> list[str]:
    if not banner:
        return []
    return [r"\noindent\fbox{\parbox{\dimexpr\linewidth-2\fboxsep-2\fboxrule\relax}{\textbf{"
            + tex_escape(banner) + "}}}\n"]


def tex_document(context: ReportContext, sections: list[Section], header: list[str], banner: str = "") -> str:
    parts = [
        r"\documentclass[11pt,a4paper]{article}", r"\usepackage[utf8]{inputenc}", r"\usepackage{booktabs}",
        r"\usepackage{graphicx}", r"\usepackage[margin=2cm]{geometry}", r"\usepackage{float}",
        r"\usepackage{array}", r"\usepackage{longtable}",
        r"\begin{document}", rf"\section*{{Study report: {tex_escape(context.campaign.name)}}}",
    ]
    parts += _tex_banner(banner)
    parts += [tex_escape(line) + "\n" for line in header]
    for section in sections:
        parts.append(rf"\subsection*{{{tex_escape(section.title)}}}")
        if section.text:
            parts.append(tex_escape(section.text) + "\n")
        parts += [rf"\input{{tables/{t.key}}}" for t in section.tables]
        for fig in section.figures:
            parts.append(
                "\\begin{figure}[H]\n\\centering\n"
                f"\\includegraphics[width=0.85\\linewidth,height=0.4\\textheight,keepaspectratio]"
                f"{{figures/{fig.name}.pdf}}\n"
                f"\\caption{{{tex_escape(fig.caption)}}}\n\\label{{fig:{fig.name}}}\n\\end{{figure}}"
            )
    parts.append(r"\end{document}")
    return "\n".join(parts) + "\n"


# ---- Markdown -----------------------------------------------------------------------------------------------


def md_escape(text: str) -> str:
    """Escape text for a GitHub Markdown table cell or paragraph (no HTML, links or emphasis from data)."""
    text = re.sub(r"[\r\n\t]+", " ", text)
    # GitHub renders inline HTML, links and emphasis: data brings none of them
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return re.sub(r"([\\`*_\[\]|~])", r"\\\1", text)


def _md_cell(cell: Cell) -> str:
    text = md_escape(cell.text)
    if cell.best:
        text = f"**{text}**"
    return text + (FEW_MARK if cell.few else "")


def md_table(table: Table) -> str:
    align = ["---" if c.kind == "text" else "---:" for c in table.columns]
    lines = [f"**{md_escape(table.title)}**", ""]
    lines.append("| " + " | ".join(md_escape(c.label) for c in table.columns) + " |")
    lines.append("| " + " | ".join(align) + " |")
    lines += ["| " + " | ".join(_md_cell(cell) for cell in row) + " |" for row in table.display_cells()]
    if note := table.full_note:
        lines += ["", md_escape(note)]
    return "\n".join(lines) + "\n"


def md_document(context: ReportContext, sections: list[Section], header: list[str], banner: str = "") -> str:
    parts = [f"# Study report: {md_escape(context.campaign.name)}", ""]
    if banner:
        parts += [f"> **{md_escape(banner)}**", ""]
    parts += [md_escape(line) + "\n" for line in header]
    for section in sections:
        parts += [f"## {md_escape(section.title)}", ""]
        if section.text:
            parts += [md_escape(section.text), ""]
        parts += [md_table(t) for t in section.tables]
        parts += [f"![{md_escape(f.caption)}](figures/{f.name}.svg)\n" for f in section.figures]
    return "\n".join(parts)


# ---- HTML ---------------------------------------------------------------------------------------------------

_CSS = """body{font:15px/1.45 system-ui,sans-serif;max-width:70rem;margin:2rem auto;padding:0 1rem;color:#222}
.scroll{overflow-x:auto;max-width:100%}table{border-collapse:collapse;margin:.5rem 0 1.5rem;font-size:.9rem}
th,td{padding:.2rem .6rem;border-bottom:1px solid #ddd;text-align:right;white-space:nowrap}
th:first-child,td:first-child{text-align:left;position:sticky;left:0;background:#fff}
thead th{border-bottom:2px solid #444}caption{caption-side:top;text-align:left;font-weight:600;padding:.3rem 0}
.note{color:#555;font-size:.85rem;max-width:60rem}
.simulated-banner{border:2px solid #b00;background:#fee;padding:.6rem 1rem}
figure{margin:1rem 0}figure img{max-width:100%;height:auto}"""


def _html_cell(cell: Cell) -> str:
    text = escape(cell.text)
    if cell.best:
        text = f"<strong>{text}</strong>"
    if cell.few:
        text += f'<sup title="fewer than 10 units">{FEW_MARK}</sup>'
    return text


def html_table(table: Table) -> str:
    head = "".join(f"<th>{escape(c.label)}</th>" for c in table.columns)
    body = "".join(
        "<tr>" + "".join(f"<td>{_html_cell(cell)}</td>" for cell in row) + "</tr>" for row in table.display_cells()
    )
    note = table.full_note
    return (f'<div class="scroll" id="table-{escape(table.key)}"><table><caption>{escape(table.title)}</caption>'
            f"<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table></div>"
            + (f'<p class="note">{escape(note)}</p>' if note else ""))


def html_document(context: ReportContext, sections: list[Section], header: list[str], svgs: dict[str, bytes],
                  banner: str = "") -> str:
    title = f"Study report: {context.campaign.name}"
    parts = [f"<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>{escape(title)}</title>"
             f"<style>{_CSS}</style></head><body><h1>{escape(title)}</h1>"]
    if banner:
        parts.append(f'<p class="simulated-banner" id="simulated-banner" role="alert"><strong>{escape(banner)}'
                     "</strong></p>")
    parts += [f"<p>{escape(line)}</p>" for line in header]
    for section in sections:
        parts.append(f'<section id="{escape(section.key)}"><h2>{escape(section.title)}</h2>')
        if section.text:
            parts.append(f"<p>{escape(section.text)}</p>")
        parts += [html_table(t) for t in section.tables]
        for fig in section.figures:
            uri = "data:image/svg+xml;base64," + base64.b64encode(svgs[fig.name]).decode("ascii")
            parts.append(f'<figure><img src="{uri}" alt="{escape(fig.caption)}">'
                         f"<figcaption>{escape(fig.caption)}</figcaption></figure>")
        parts.append("</section>")
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"
