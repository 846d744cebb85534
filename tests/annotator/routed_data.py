"""The routed campaigns' data, shared by the routing tests: box scores with an ensemble's answers of known k."""

from __future__ import annotations

from corpus.models import Dataset, ErrorSpan, Item
from evaluation.models import EvaluatorRun
from tests import factories as make
from tests.quality.conftest import box


def build_routed_data() -> tuple[Dataset, EvaluatorRun, list[Item], dict[int, dict[str, ErrorSpan]]]:
    """10 box-score outputs; an ensemble of three models marks the wrong score (k 3), the points (k 2) and the
    assists (k 1) on each. Returns the dataset, the run, the items and item id -> name -> merged span."""
    data = make.dataset("Routed data", input_headers=["Data"], output_header="Summary")
    run = make.run(data, "routed-ensemble")
    items, spans = [], {}
    for i in range(10):
        inputs, output, lost, won = box(i)
        item = make.item(data, f"r{i}", output, position=i + 1, inputs=inputs)
        items.append(item)
        score, points, assists = make.ensemble_answer(
            item, run, [(f"{won}-{lost}", 3), (f"{20 + i} points", 2), (f"{i + 3} assists", 1)], severity=3)
        spans[item.pk] = {"score": score, "points": points, "assists": assists}
    return data, run, items, spans
