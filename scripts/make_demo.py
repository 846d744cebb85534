"""Regenerate demo/restaurants.jsonl from the hand-written records below (offsets computed, never typed)."""

from __future__ import annotations

import json
from pathlib import Path

SOURCE = "sample-ensemble"
RESTAURANTS = [
    {
        "id": "r01",
        "data": "name[The Copper Kettle] | eatType[coffee shop] | food[English] | priceRange[cheap] | "
        "customerRating[4 out of 5] | area[city centre] | familyFriendly[yes] | near[St Mary's Church]",
        "outputs": {
            "template": "The Copper Kettle is a coffee shop serving English food. It is cheap, rated 4 out of 5, "
            "located in the city centre near St Mary's Church, and family friendly.",
            "seq2seq": "The Copper Kettle is a cheap coffee shop in the city centre near St Mary's Church. "
            "It serves English food and is not family-friendly.",
            "llm-small": "Near St Mary's Church in the city centre, The Copper Kettle offers affordable English "
            "breakfasts in a cosy coffee-shop setting; customers rate it 5 out of 5 and children are welcome.",
        },
        "errors": {
            "seq2seq": [("is not family-friendly", "The data says the shop is family friendly.", 4)],
            "llm-small": [
                ("5 out of 5", "The rating in the data is 4 out of 5, not 5.", 4),
                ("breakfasts", "Breakfast is not mentioned in the data; only English food is.", 2),
                ("cosy", "The atmosphere is not given in the data.", 1),
            ],
        },
    },
    {
        "id": "r02",
        "data": "name[Blue Lantern] | eatType[restaurant] | food[Japanese] | priceRange[more than £30] | "
        "area[riverside] | familyFriendly[no]",
        "outputs": {
            "template": "Blue Lantern is a restaurant serving Japanese food. It costs more than £30, is located "
            "in the riverside area, and is not family friendly.",
            "seq2seq": "Blue Lantern is a Japanese restaurant restaurant in the riverside area with a price "
            "range of more than £30 .",
            "llm-small": "Blue Lantern, a riverside Japanese restaurant, is a lovely spot for families, with "
            "dishes from £30 and beautiful views of the water.",
        },
        "errors": {
            "seq2seq": [("restaurant restaurant", "The word is repeated.", 2)],
            "llm-small": [
                ("a lovely spot for families", "The data says it is not family friendly.", 5),
                ("from £30", "The price range is more than £30; 'from £30' changes the meaning.", 2),
                ("beautiful views of the water", "Views are not in the data.", 2),
            ],
        },
    },
    {
        "id": "r03",
        "data": "name[Olive Grove] | eatType[pub] | food[Italian] | priceRange[moderate] | "
        "customerRating[3 out of 5] | area[city centre] | near[Riverside Market]",
        "outputs": {
            "template": "Olive Grove is a pub serving Italian food. It is moderately priced, rated 3 out of 5, "
            "and located in the city centre near Riverside Market.",
            "seq2seq": "Olive Grove is a moderately priced pub near Riverside Market in the riverside area . "
            "It has a customer rating of 3 out of 5 .",
            "llm-small": "Olive Grove is a moderately priced Italian pub in the city centre, close to Riverside "
            "Market, with an average customer rating of 3 out of 5.",
        },
        "errors": {
            "seq2seq": [
                ("in the riverside area", "The pub is in the city centre, not the riverside area.", 4),
                ("Olive Grove is a moderately priced pub", "The food type (Italian) is missing.", 2),
            ],
        },
    },
    {
        "id": "r04",
        "data": "name[The Rice Boat] | eatType[restaurant] | food[Indian] | priceRange[high] | "
        "customerRating[1 out of 5] | area[riverside] | familyFriendly[yes] | near[Express by Holiday Inn]",
        "outputs": {
            "template": "The Rice Boat is a restaurant serving Indian food. It is expensive, rated 1 out of 5, "
            "located in the riverside area near Express by Holiday Inn, and family friendly.",
            "seq2seq": "The Rice Boat is an Indian restaurant near Express by Holiday Inn . It has a high "
            "price range and a customer rating of 1 out of 5 and is family friendly .",
            "llm-small": "Highly rated by locals, The Rice Boat serves pricey Indian cuisine by the river, "
            "just a short walk from the Express by Holiday Inn; families are welcome.",
        },
        "errors": {
            "llm-small": [
                ("Highly rated by locals", "The customer rating is 1 out of 5, so it is not highly rated.", 5),
                ("just a short walk", "The distance is not in the data.", 1),
            ],
            "seq2seq": [("near Express by Holiday Inn", "Correct, but the area (riverside) is missing.", 2)],
        },
    },
    {
        "id": "r05",
        "data": "name[Zizzi] | eatType[coffee shop] | food[French] | priceRange[less than £20] | "
        "area[city centre] | familyFriendly[no]",
        "outputs": {
            "template": "Zizzi is a coffee shop serving French food. It costs less than £20, is located in the "
            "city centre, and is not family friendly.",
            "seq2seq": "Zizzi is a French coffee shop in the city centre . It is not family friendly and has a "
            "price range of less than £20 .",
            "llm-small": "Zizzi, a French coffee shop in the city centre, serves meals for under £20 in an "
            "adults-only setting <b>perfect</b> for a quiet lunch.",
        },
        "errors": {
            "llm-small": [
                ("<b>perfect</b> for a quiet lunch", "An opinion not supported by the data (and stray markup).", 2),
            ],
        },
    },
    {
        "id": "r06",
        "data": "name[Green Man] | eatType[pub] | food[Fast food] | priceRange[£20-25] | "
        "customerRating[high] | area[riverside] | near[All Bar One]",
        "outputs": {
            "template": "Green Man is a pub serving fast food. It costs £20-25, has a high customer rating, and "
            "is located in the riverside area near All Bar One.",
            "seq2seq": "Green Man is a fast food pub near All Bar One in the riverside area . It has a high "
            "customer rating and a price range of £20-25 . Green Man is a pub .",
            "llm-small": "By the river near All Bar One, the Green Man pub serves fast food for £20-25 a head "
            "and boasts a loyal following and a five-star rating.",
        },
        "errors": {
            "seq2seq": [("Green Man is a pub .", "The last sentence repeats what was already said.", 2)],
            "llm-small": [
                ("a five-star rating", "The data gives a 'high' rating, not a number of stars.", 3),
                ("a loyal following", "Not in the data.", 2),
            ],
        },
    },
]


def _score(errors: list[tuple[str, str, int]]) -> tuple[float, str]:
    worst = max((sev for *_, sev in errors), default=0)
    score = 5.0 if not errors else max(1.0, 5.0 - worst + (1 if len(errors) == 1 else 0))
    return score, ["", "Unacceptable", "Poor", "Fair", "Good", "Excellent"][int(round(score))]


def main() -> None:
    lines = []
    for record in RESTAURANTS:
        for system, output in record["outputs"].items():
            errors = record["errors"].get(system, [])
            spans = []
            for location, explanation, severity in errors:
                start = output.index(location)
                spans.append({"start": start, "end": start + len(location), "text": location,
                              "explanation": explanation, "severity": severity, "category": "", "match": "exact"})
            score, label = _score(errors)
            lines.append({
                "id": record["id"], "system": system, "inputs": {"Data": record["data"]},
                "outputs": {"Text": output}, "aspect": "accuracy",
                "annotations": [{
                    "source": SOURCE, "kind": "ensemble", "model": "", "score": score, "score_label": label,
                    "score_explanation": "Hand-written sample annotation for the demo (not produced by a model).",
                    "spans": spans,
                }],
            })
    path = Path(__file__).resolve().parent.parent / "demo" / "restaurants.jsonl"
    path.write_text("".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines), encoding="utf-8")
    print(f"wrote {len(lines)} items to {path}")


if __name__ == "__main__":
    main()
