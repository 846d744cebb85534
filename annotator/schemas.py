"""Ninja schemas of the annotation API (inputs and outputs kept separate)."""

from __future__ import annotations

from ninja import Schema


class DatasetOut(Schema):
    id: int
    name: str
    task: str
    input_headers: list[str]
    output_header: str
    score_aspects: list[str]
    n_items: int


class ItemOut(Schema):
    id: int
    external_id: str
    system: str
    inputs: dict[str, str]
    output: str
    human_scores: dict[str, float]
