"""The decoy audit, Django-free: could a classifier tell decoys from real machine spans by their cards alone?

If a logistic regression reading only what an annotator's card shows (the explanation, the marked words, the
evaluator label, severity, category, the location tags) separates decoys from real spans, an attentive annotator
can learn to do the same, and decoys stop measuring vigilance. The audit estimates how well it separates them:
ROC AUC of out-of-fold scores under stratified 5-fold cross-validation (0.5 = chance), a percentile bootstrap
interval over cards, and the features that weigh most towards "decoy".
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from quality.engine.decoys import span_kind

WARN_AUC = 0.65  # the decoys page warns above this
BLOCK_AUC = 0.75  # opening the campaign needs an explicit acceptance above this
MIN_PER_CLASS = 10  # fewer decoys (or real cards) than this: no audit, too few to cross-validate


@dataclass(frozen=True)
class Card:
    """What one card shows an annotator, and whether it is a decoy (the label the classifier must recover)."""

    explanation: str
    text: str  # the marked words
    label: str  # the evaluator label
    severity: int | None
    category: str
    ambiguous: bool
    match: str
    position: float  # where the span starts, as a share of the output's length
    decoy: bool


@dataclass
class AuditResult:
    """The audit's figures; `auc` is None when there are too few cards of a class to cross-validate."""

    decoys: int
    real: int
    auc: float | None = None
    ci_low: float | None = None
    ci_high: float | None = None
    features: list[tuple[str, float]] = field(default_factory=list)  # (feature, weight towards "decoy")
    folds: int = 0
    resamples: int = 0
    seconds: float = 0.0
    reason: str = ""

    @property
    def level(self) -> str:
        """"block" above BLOCK_AUC, "warn" above WARN_AUC, else "ok" ("none" without an audit)."""
        if self.auc is None:
            return "none"
        if self.auc > BLOCK_AUC:
            return "block"
        return "warn" if self.auc > WARN_AUC else "ok"

    def as_dict(self) -> dict:
        return {
            "decoys": self.decoys, "real": self.real, "auc": self.auc, "ci_low": self.ci_low,
            "ci_high": self.ci_high, "level": self.level, "warn_above": WARN_AUC, "block_above": BLOCK_AUC,
            "features": [{"feature": name, "weight": weight} for name, weight in self.features],
            "folds": self.folds, "resamples": self.resamples, "seconds": self.seconds, "reason": self.reason,
        }


def _structured(cards: Sequence[Card]) -> list[dict[str, object]]:
    """Each card's non-text fields as a feature dict (one-hot for categories, numbers as they are)."""
    rows = []
    for card in cards:
        words = len(card.text.split())
        rows.append({
            f"label={card.label}": 1.0, f"severity={card.severity}": 1.0, f"category={card.category or '-'}": 1.0,
            f"match={card.match}": 1.0, f"kind={span_kind(card.text)}": 1.0,
            "ambiguous": float(card.ambiguous), "position": card.position,
            "span words (log)": float(np.log1p(words)),
            "explanation words (log)": float(np.log1p(len(card.explanation.split()))),
            "explanation quotes the span": float(bool(card.text) and card.text in card.explanation),
        })
    return rows


class CardFeatures:
    """Cards -> one sparse matrix: TF-IDF of the explanation's words and of the marked words' characters beside
    the structured fields. A scikit-learn transformer (fit on the training fold only)."""

    def get_params(self, deep: bool = True) -> dict:
        return {}

    def set_params(self, **params) -> CardFeatures:
        return self

    def fit(self, cards: Sequence[Card], y=None) -> CardFeatures:
        from sklearn.feature_extraction import DictVectorizer
        from sklearn.feature_extraction.text import TfidfVectorizer

        self.explanation_ = TfidfVectorizer(ngram_range=(1, 2), min_df=2, sublinear_tf=True)
        self.span_ = TfidfVectorizer(analyzer="char_wb", ngram_range=(2, 3), min_df=2, sublinear_tf=True)
        self.fields_ = DictVectorizer()
        self.explanation_ = _fitted(self.explanation_, [c.explanation for c in cards])
        self.span_ = _fitted(self.span_, [c.text for c in cards])
        self.fields_.fit(_structured(cards))
        return self

    def transform(self, cards: Sequence[Card]):
        from scipy.sparse import csr_matrix, hstack

        def text(vectorizer, values: list[str]):
            return vectorizer.transform(values) if vectorizer is not None else csr_matrix((len(values), 0))

        return hstack([text(self.explanation_, [c.explanation for c in cards]),
                       text(self.span_, [c.text for c in cards]),
                       self.fields_.transform(_structured(cards))]).tocsr()

    def fit_transform(self, cards: Sequence[Card], y=None):
        return self.fit(cards).transform(cards)

    def names(self) -> list[str]:
        def text(vectorizer, what: str) -> list[str]:
            return [] if vectorizer is None else [f'{what}: "{n}"' for n in vectorizer.get_feature_names_out()]

        return (text(self.explanation_, "explanation") + text(self.span_, "marked words")
                + list(self.fields_.get_feature_names_out()))


def _fitted(vectorizer, values: list[str]):
    """The vectorizer fitted on the values, or None when they hold no term (e.g. runs that explain nothing)."""
    try:
        return vectorizer.fit(values)
    except ValueError:  # scikit-learn's "empty vocabulary"
        return None


def card_model():
    """A regularised logistic regression over the card's features. scikit-learn is imported lazily: it is
    heavy and only the audit needs it."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import Pipeline

    return Pipeline([("features", CardFeatures()), ("classifier", LogisticRegression(C=1.0, max_iter=2000))])


def _auc(y: np.ndarray, scores: np.ndarray) -> float:
    from sklearn.metrics import roc_auc_score

    return float(roc_auc_score(y, scores))


def decoy_audit(cards: Sequence[Card], *, seed: int = 0, folds: int = 5, resamples: int = 1000,
                budget_s: float = 20.0, top: int = 10) -> AuditResult:
    """Cross-validated ROC AUC of telling decoys from real cards, its bootstrap interval, and the top features.

    Resampling stops early when the time budget is spent (the result says how many resamples it used).
    """
    started = time.monotonic()
    y = np.array([c.decoy for c in cards], dtype=int)
    result = AuditResult(decoys=int(y.sum()), real=int(len(y) - y.sum()))
    if min(result.decoys, result.real) < max(MIN_PER_CLASS, folds):
        result.reason = (f"needs at least {max(MIN_PER_CLASS, folds)} decoys and as many real cards "
                         f"(has {result.decoys} and {result.real})")
        return result
    from sklearn.model_selection import StratifiedKFold, cross_val_predict

    table = list(cards)
    splitter = StratifiedKFold(n_splits=folds, shuffle=True, random_state=seed)
    scores = cross_val_predict(card_model(), table, y, cv=splitter, method="predict_proba")[:, 1]
    result.auc, result.folds = _auc(y, scores), folds
    rng = np.random.default_rng(seed)
    boots: list[float] = []
    for _ in range(resamples):
        if time.monotonic() - started > budget_s:
            break
        pick = rng.integers(0, len(y), len(y))
        if 0 < y[pick].sum() < len(pick):
            boots.append(_auc(y[pick], scores[pick]))
    if boots:
        result.ci_low, result.ci_high = (float(v) for v in np.percentile(boots, [2.5, 97.5]))
    result.resamples = len(boots)
    result.features = _top_features(table, y, top)
    result.seconds = round(time.monotonic() - started, 3)
    return result


def _top_features(table, y: np.ndarray, top: int) -> list[tuple[str, float]]:
    """The features weighing most towards "decoy" in a model fitted on every card."""
    model = card_model().fit(table, y)
    names = model.named_steps["features"].names()
    weights = model.named_steps["classifier"].coef_[0]
    order = np.argsort(weights)[::-1][:top]
    return [(names[i], round(float(weights[i]), 3)) for i in order if weights[i] > 0]
