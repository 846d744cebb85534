"""The study report of a campaign: sections of tables and figures written as LaTeX, Markdown or HTML."""
