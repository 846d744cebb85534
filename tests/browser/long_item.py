"""A made-up long data-to-text item (a RotoWire-sized box score and a long summary) for browser tests.

Everything is invented here, so the tests run without the shared RotoWire file; the shape (a JSON box score
of 26 players x 20 columns and a ~4,000-character game summary with errors far down) is what made the real
screen hard to use.
"""

from __future__ import annotations

import json

from studies.setup import CampaignSpec, campaign_create
from tests.factories import annotation, dataset, item, run, span_at

COLUMNS = ["PLAYER_NAME", "TEAM_CITY", "START_POSITION", "MIN", "PTS", "REB", "AST", "STL", "BLK", "TO", "FGM",
           "FGA", "FG3M", "FG3A", "FTM", "FTA", "PF", "OREB", "DREB", "FG_PCT"]
PARAGRAPH = ("The Harbor City Gulls beat the Pinecrest Owls 112 - 104 on Saturday at the Lakeside Arena. "
             "Marcus Feldway led the Gulls with 31 points, nine rebounds and seven assists in 36 minutes, while "
             "Devin Oakridge added 18 points off the bench. The Owls shot 44 percent from the field and were "
             "outrebounded 49 - 38, and they turned the ball over 17 times. ")
ENDING = "Next up, the Gulls host the Riverside Foxes on Monday, while the Owls visit the Summit Hawks on Tuesday."


def long_output() -> str:
    return PARAGRAPH * 10 + ENDING


def box_score() -> str:
    players = [
        {c: (f"Player Number{i} Longname" if c == "PLAYER_NAME" else "Harbor City" if c == "TEAM_CITY"
             else str((i * 7 + j) % 40)) for j, c in enumerate(COLUMNS)}
        for i in range(26)
    ]
    lines = {"home_line": {"TEAM-CITY": "Harbor City", "TEAM-NAME": "Gulls", "TEAM-PTS": "112"},
             "vis_line": {"TEAM-CITY": "Pinecrest", "TEAM-NAME": "Owls", "TEAM-PTS": "104"}}
    return json.dumps({"box_score": players, **lines, "day": "Saturday"})


def build_long_campaign(annotators, name: str = "long campaign"):
    """One long item; two runs mark places near the end of the summary (one place both mark)."""
    data = dataset(f"{name} data", input_headers=["Data"], output_header="Summary")
    output = long_output()
    long = item(data, "game-1", output, position=1, system="sys-long", inputs={"Data": box_score()})
    alpha, beta = run(data, "long-alpha"), run(data, "long-beta")
    a, b = annotation(long, alpha), annotation(long, beta)
    spans = {
        "first": span_at(a, 1, "Marcus Feldway led the Gulls", explanation="Early in the text.", severity=2),
        "late": span_at(a, 2, "Riverside Foxes", explanation="Not in the data.", severity=3),
        "late_b": span_at(b, 1, "host the Riverside Foxes", explanation="The data names no next game.",
                          severity=4),
        "last": span_at(b, 2, "Summit Hawks", explanation="Not in the data.", severity=2),
    }
    made = campaign_create(CampaignSpec(name=name, dataset=data, runs=[alpha, beta], annotators=annotators,
                           aspects=["accuracy"], annotators_per_item=1, seed=1))
    return made, long, spans
