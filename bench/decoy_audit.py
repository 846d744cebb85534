"""Benchmark: can a classifier tell the product's decoys from real LLM error spans? (target: AUC <= 0.60, the
bootstrap interval's upper end <= 0.65, with at least 200 decoy and 200 real cards)

Real spans: the public LLM span annotations of quintd-1 (Kasner & Dušek 2024, "Beyond Traditional Benchmarks",
github.com/kasnerz/quintd, MIT licence): GPT-4 (gpt-4-1106-preview) and Llama 3 annotating the data-to-text
outputs of four systems (Llama 2, Mistral, Zephyr, GPT-3.5) on four domains (ice hockey, GSMArena phones,
OpenWeather forecasts, Wikidata entities), each span with the model's own explanation ("reason"). The two
annotator models become two evaluator runs of one campaign with decoys 0.3; the campaign's decoy audit
(quality.campaign_audit, as `manage.py decoy_audit` computes it) is printed with its figures beside the targets.

    git clone https://github.com/kasnerz/quintd /path/to/quintd   # any checkout with data/quintd-1
    DATABASE_URL=postgres://postgres@127.0.0.1:5432/spanjudge_bench python bench/decoy_audit.py \
        --quintd /path/to/quintd [--per 10] [--decoys 0.3] [--seed 7]

Nothing is copied into the repository: the bench reads the checkout given.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
os.environ.setdefault("DJANGO_SECRET_KEY", "bench-only-key-" + "x" * 50)

from bench.pgdb import ensure_postgres_database  # noqa: E402

DOMAINS = ("ice_hockey", "gsmarena", "openweather", "wikidata")
SYSTEMS = ("llama2", "mistral", "zephyr", "gpt-3.5")
ANNOTATORS = {"gpt-4": "annotations/gpt-4", "llama3": "annotations/other/llama3"}
CATEGORIES = {0: "Incorrect", 1: "Not checkable", 2: "Misleading", 3: "Other"}  # quintd's span types
AUC_TARGET, UPPER_TARGET, MIN_CARDS = 0.60, 0.65, 200


def _annotation_rows(root: Path, who: str, domain: str, system: str) -> dict[int, list[dict]]:
    """table_idx -> that annotator's spans on the system's output (the newest file when several runs exist)."""
    files = sorted((root / ANNOTATORS[who]).glob(f"{who}-{domain}-test-{system}-direct-*.jsonl"))
    if not files:
        return {}
    rows: dict[int, list[dict]] = {}
    for line in files[-1].read_text(encoding="utf-8").splitlines():
        if line.strip():
            record = json.loads(line)
            rows[int(record["table_idx"])] = record.get("annotations") or []
    return rows


def _offsets(output: str, span: dict) -> tuple[int, int] | None:
    """The span's offsets: its own `start` where the text is there, else its first occurrence."""
    text, start = span.get("text") or "", span.get("start")
    if not text:
        return None
    if isinstance(start, int) and output[start:start + len(text)] == text:
        return start, start + len(text)
    found = output.find(text)
    return (found, found + len(text)) if found >= 0 else None


def load(root: Path, per: int) -> list[dict]:
    """Outputs with their input data and both annotators' spans: {external_id, inputs, output, spans{who: [...]}}."""
    outputs = []
    for domain in DOMAINS:
        if not (root / "data" / domain / "test.json").exists():
            continue
        data = json.loads((root / "data" / domain / "test.json").read_text(encoding="utf-8"))
        if isinstance(data, dict):  # openweather: {"forecasts": [...]}
            data = next(iter(data.values()))
        for system in SYSTEMS:
            path = root / "outputs" / "test" / domain / "default" / f"{system}.json"
            if not path.exists():
                continue
            generated = json.loads(path.read_text(encoding="utf-8"))["generated"]
            spans = {who: _annotation_rows(root, who, domain, system) for who in ANNOTATORS}
            for idx in range(min(per, len(generated))):
                output = generated[idx]["out"]
                if not output.strip():
                    continue
                outputs.append({"external_id": f"{domain}-{system}-{idx}", "inputs": json.dumps(data[idx]),
                                "output": output, "spans": {who: spans[who].get(idx, []) for who in ANNOTATORS}})
    return outputs


def second_opinion(cards, seed: int = 7) -> float:
    """Cross-validated ROC AUC of a classifier the decoy drawing never consulted: gradient-boosted trees over a
    100-dimensional reduction of different text features (the explanation's character 3-5-grams, the marked words'
    word 1-2-grams, the card's other fields as tokens) beside the span's place and lengths. The drawing redraws
    decoys against a logistic regression of the audit's kind, so the audit alone could flatter it."""
    import numpy as np
    from scipy.sparse import csr_matrix, hstack
    from sklearn.decomposition import TruncatedSVD
    from sklearn.ensemble import HistGradientBoostingClassifier
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.metrics import roc_auc_score
    from sklearn.model_selection import StratifiedKFold

    y = np.array([c.decoy for c in cards], dtype=int)
    columns = {
        "explanation": ([c.explanation for c in cards], dict(analyzer="char_wb", ngram_range=(3, 5), min_df=2)),
        "marked": ([c.text for c in cards], dict(ngram_range=(1, 2), min_df=2)),
        "fields": ([f"label:{c.label} severity:{c.severity} category:{c.category} ambiguous:{c.ambiguous}"
                    for c in cards], dict(token_pattern=r"\S+")),
    }
    numbers = csr_matrix(np.array([[c.position, len(c.text.split()), len(c.explanation.split())] for c in cards]))
    scores = np.zeros(len(cards))
    for train, test in StratifiedKFold(n_splits=5, shuffle=True, random_state=seed).split(np.zeros(len(y)), y):
        parts_train, parts_test = [numbers[train]], [numbers[test]]
        for values, options in columns.values():
            vectorizer = TfidfVectorizer(sublinear_tf=True, **options).fit([values[i] for i in train])
            parts_train.append(vectorizer.transform([values[i] for i in train]))
            parts_test.append(vectorizer.transform([values[i] for i in test]))
        reduce = TruncatedSVD(100, random_state=seed).fit(hstack(parts_train).tocsr())
        model = HistGradientBoostingClassifier(random_state=seed).fit(reduce.transform(hstack(parts_train).tocsr()),
                                                                      y[train])
        scores[test] = model.predict_proba(reduce.transform(hstack(parts_test).tocsr()))[:, 1]
    return float(roc_auc_score(y, scores))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quintd", required=True, help="A checkout of github.com/kasnerz/quintd.")
    parser.add_argument("--per", type=int, default=10, help="Outputs per (domain, system) (default 10).")
    parser.add_argument("--decoys", type=float, default=0.3)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    root = Path(args.quintd).expanduser() / "data" / "quintd-1"
    if not (root / "outputs").is_dir():
        print(f"needs a quintd checkout with data/quintd-1; {root} is not one: nothing was run.")
        return 0
    rows = load(root, args.per)
    ensure_postgres_database("bench/decoy_audit.py")
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    from accounts.models import User
    from corpus.models import Annotation, AnnotationKind, Dataset, ErrorSpan, Item, MatchKind, TaskType
    from evaluation.models import Aspect, Evaluator, EvaluatorRun
    from quality.campaign_audit import campaign_audit
    from quality.services import CheckSettings
    from studies.setup import CampaignSpec, campaign_create

    nonce = uuid.uuid4().hex[:8]
    task = TaskType.objects.get(slug="data-to-text")
    dataset = Dataset.objects.create(name=f"bench-decoy-audit-{nonce}", task=task, input_headers=["Data"],
                                     output_header="Text")
    aspect = Aspect.objects.get(task=task, name="accuracy")
    runs = {}
    for who in ANNOTATORS:
        evaluator, _ = Evaluator.objects.get_or_create(name=f"quintd-{who}", defaults={"kind": Evaluator.Kind.SINGLE})
        runs[who] = EvaluatorRun.objects.create(evaluator=evaluator, dataset=dataset, aspect=aspect,
                                                label=f"quintd-{who}-{nonce}", status="done")
    n_real = 0
    for position, row in enumerate(rows):
        item = Item.objects.create(dataset=dataset, position=position, external_id=row["external_id"],
                                   inputs={"Data": row["inputs"]}, output=row["output"])
        for who, spans in row["spans"].items():
            answer = Annotation.objects.create(item=item, source=runs[who], kind=AnnotationKind.ANNOTATOR,
                                               aspect="accuracy", model=who)
            made = []
            for k, span in enumerate(spans):
                where = _offsets(row["output"], span)
                if where is None:
                    continue
                made.append(ErrorSpan(annotation=answer, position=k, text=row["output"][where[0]:where[1]],
                                      start=where[0], end=where[1], match=MatchKind.EXACT,
                                      ambiguous=row["output"].count(row["output"][where[0]:where[1]]) > 1,
                                      explanation=span.get("reason") or "",
                                      category=CATEGORIES.get(span.get("type"), "")))
            ErrorSpan.objects.bulk_create(made)
            n_real += len(made)
    judge = User.objects.create_user(username=f"judge-{nonce}", password="x" * 12, role="annotator")
    campaign = campaign_create(CampaignSpec(
        name=f"decoy audit {nonce}", dataset=dataset, runs=list(runs.values()), annotators=[judge],
        aspects=["accuracy"], seed=args.seed, checks=CheckSettings(decoys=args.decoys)))
    audit = campaign_audit(campaign)
    report = campaign.setup_report
    print(f"quintd-1: {len(rows)} outputs, {n_real} real LLM spans (GPT-4, Llama 3), decoys {args.decoys}")
    print(f"cards: {audit.decoys} decoys, {audit.real} real (each needs >= {MIN_CARDS}); the share asked for "
          f"{report.decoys_asked} decoys, {report.decoys_made} were made: {report.decoys_why or 'all'}")
    if audit.auc is None:
        print(f"no audit: {audit.reason}")
        return 1
    print(f"ROC AUC {audit.auc:.3f} (target <= {AUC_TARGET}); 95% interval {audit.ci_low:.3f}-{audit.ci_high:.3f} "
          f"(upper end target <= {UPPER_TARGET}); {audit.resamples} resamples, {audit.seconds:.1f} s")
    from quality.campaign_audit import campaign_cards

    print(f"a classifier the drawing never saw (gradient-boosted trees, other features): ROC AUC "
          f"{second_opinion(campaign_cards(campaign), args.seed):.3f}")
    print("features weighing most towards 'decoy':")
    for name, weight in audit.features:
        print(f"  {weight:+.3f}  {name}")
    decoy = campaign.check_spans.filter(role="decoy").select_related("span", "campaign_run").first()
    if decoy is not None:
        print(f'a decoy: [{decoy.campaign_run.label}] "{decoy.span.text}" - {decoy.span.explanation}')
    met = (audit.auc <= AUC_TARGET and audit.ci_high <= UPPER_TARGET
           and min(audit.decoys, audit.real) >= MIN_CARDS)
    print("targets met" if met else "targets NOT met")
    return 0


if __name__ == "__main__":
    sys.exit(main())
