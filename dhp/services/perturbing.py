"""Create perturbed items from a dataset's originals: rule-based ones in-process, LLM-based ones through
an LLM server (cached and audited). Idempotent: a (original, kind, seed, k) is made once, as an item whose
`external_id` names all four; what did not fit is recorded as a skip with its reason."""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass, field

from django.conf import settings
from django.db import transaction
from django.db.models import Max

from corpus.models import Dataset, Item
from dhp.engine.errors import DhpError
from dhp.engine.kinds import Kind, default_k
from dhp.engine.perturb import Skip, llm_answer_text, llm_prompt, rule_perturb, seed_for
from dhp.models import PerturbationSizes, PerturbationSkip
from evaluation.engine.parsing import ParsedAnswer
from evaluation.llm.base import LLMBackend
from evaluation.runs.asking import Answered, Ask, ask_many
from evaluation.runs.backends import connect


@dataclass
class KindReport:
    kind: str
    k: int | None
    made: int = 0
    existing: int = 0
    skipped: int = 0
    calls: int = 0  # LLM requests sent (not from the cache)
    reasons: dict[str, int] = field(default_factory=dict)

    def line(self) -> str:
        size = f" (k={'all' if self.k == 0 else self.k})" if self.k is not None else ""
        text = f"{self.kind}{size}: {self.made} made, {self.existing} already there, {self.skipped} skipped"
        if self.reasons:
            text += " - " + "; ".join(f"{reason} ({n}x)" for reason, n in self.reasons.items())
        return text


def sizes_for(dataset: Dataset, kinds: Sequence[Kind]) -> dict[str, int | None]:
    """k per kind: the admin's override for the task if any, else the paper's default."""
    override = PerturbationSizes.objects.filter(task=dataset.task).values_list("sizes", flat=True).first() or {}
    return {kind.name: override.get(kind.name, default_k(dataset.task.slug, kind)) for kind in kinds}


def perturbed_id(original: Item, kind: str, seed: int, k: int | None) -> str:
    return f"{original.external_id}~{kind}~s{seed}" + (f"~k{k}" if k is not None else "")


def originals(dataset: Dataset) -> list[Item]:
    return list(Item.objects.filter(dataset=dataset, derived_from__isnull=True).order_by("position"))


def perturbed_items(dataset: Dataset, kind: str, seed: int, k: int | None) -> list[Item]:
    """The perturbed items of one (kind, seed, k), in their originals' order."""
    qs = Item.objects.filter(
        dataset=dataset, derived_from__isnull=False, perturbation__kind=kind, perturbation__seed=seed,
        perturbation__k=k,
    )
    return list(qs.select_related("derived_from").order_by("derived_from__position"))


class Perturber:
    """Makes the perturbations of one dataset for one seed."""

    def __init__(self, dataset: Dataset, *, seed: int, sizes: dict[str, int | None]) -> None:
        self.dataset = dataset
        self.seed = seed
        self.sizes = sizes
        self.items = originals(dataset)
        self.outputs = [item.output for item in self.items]

    def _done(self, kind: Kind) -> tuple[set[int], set[int]]:
        k = self.sizes[kind.name]
        made = {i.derived_from_id for i in perturbed_items(self.dataset, kind.name, self.seed, k)}
        skipped = set(
            PerturbationSkip.objects.filter(original__dataset=self.dataset, kind=kind.name, seed=self.seed, k=k)
            .values_list("original_id", flat=True)
        )
        return made, skipped

    def rule(self, kind: Kind) -> KindReport:
        k = self.sizes[kind.name]
        report = KindReport(kind.name, k)
        made, skipped = self._done(kind)
        new: list[tuple[Item, str, dict]] = []
        skips: list[PerturbationSkip] = []
        for index, item in enumerate(self.items):
            if item.pk in made:
                report.existing += 1
                continue
            rng = random.Random(seed_for(self.seed, kind.name, f"{item.external_id}\x1f{item.system}"))
            others = self.outputs[:index] + self.outputs[index + 1 :]
            try:
                result = rule_perturb(kind, item.output, k=k, rng=rng, others=others)
            except Skip as exc:
                report.skipped += 1
                report.reasons[str(exc)] = report.reasons.get(str(exc), 0) + 1
                if item.pk not in skipped:
                    skips.append(PerturbationSkip(original=item, kind=kind.name, seed=self.seed, k=k, reason=str(exc)))
                continue
            new.append((item, result.text, result.details))
            report.made += 1
        self._save(kind, new, skips)
        return report

    def llm(self, kind: Kind, backend: LLMBackend, model: str, digest: str, parallel: int) -> KindReport:
        k = self.sizes[kind.name]
        report = KindReport(kind.name, None)
        made, skipped = self._done(kind)
        task = self.dataset.task
        options = {"temperature": 0.0, "seed": self.seed, "num_ctx": settings.OLLAMA_NUM_CTX}  # None: sized
        asks = []
        for item in self.items:
            if item.pk in made:
                report.existing += 1
                continue
            prompt = llm_prompt(kind, item.output, task=task.name, noun=task.output_noun or "text")
            asks.append(Ask(item, prompt, options))

        def on_batch(answered: list[Answered], interrupted: bool) -> None:
            new, skips = [], []
            report.calls += sum(a.fresh for a in answered)
            for a in answered:
                item: Item = a.ask.ref
                try:
                    result = llm_answer_text(a.outcome.raw, item.output)
                except Skip as exc:
                    report.skipped += 1
                    report.reasons[str(exc)] = report.reasons.get(str(exc), 0) + 1
                    if item.pk not in skipped:
                        skips.append(PerturbationSkip(original=item, kind=kind.name, seed=self.seed, k=k,
                                                      reason=str(exc), raw_answer=a.outcome.raw))
                    continue
                details = {**result.details, "model": model, "raw_answer": a.outcome.raw, "call_id": a.call_id}
                new.append((item, result.text, details))
                report.made += 1
            self._save(kind, new, skips)

        ask_many(backend, model, digest, asks, parse=lambda text: ParsedAnswer(status="ok"), parallel=parallel,
                 on_batch=on_batch)
        return report

    @transaction.atomic
    def _save(self, kind: Kind, new: list[tuple[Item, str, dict]], skips: list[PerturbationSkip]) -> None:
        PerturbationSkip.objects.bulk_create(skips, ignore_conflicts=True)
        if not new:
            return
        k = self.sizes[kind.name]
        # Lock the dataset row: positions are handed out as max + 1 and must not collide with an import.
        Dataset.objects.select_for_update().filter(pk=self.dataset.pk).first()
        start = (Item.objects.filter(dataset=self.dataset).aggregate(m=Max("position"))["m"] or 0) + 1
        rows = [
            Item(
                dataset=self.dataset, position=start + offset,
                external_id=perturbed_id(original, kind.name, self.seed, k)[:200], system=original.system,
                inputs=original.inputs, output=text, reference=original.reference, derived_from=original,
                perturbation={"kind": kind.name, "level": kind.level, "method": kind.method, "degree": kind.degree,
                              "seed": self.seed, "k": k, **details},
            )
            for offset, (original, text, details) in enumerate(new)
        ]
        Item.objects.bulk_create(rows, ignore_conflicts=True)


def perturb_dataset(
    *, dataset: Dataset, kinds: Sequence[Kind], seed: int, ollama_url: str | None = None, model: str | None = None,
    parallel: int | None = None,
) -> list[KindReport]:
    """Make every kind's perturbations (idempotent); LLM kinds need `model` on the LLM server at `ollama_url`."""
    sizes = sizes_for(dataset, kinds)
    perturber = Perturber(dataset, seed=seed, sizes=sizes)
    if not perturber.items:
        raise DhpError(f"dataset {dataset.name!r} has no items", field="dataset")
    llm_kinds = [kind for kind in kinds if kind.is_llm]
    reports = [perturber.rule(kind) for kind in kinds if not kind.is_llm]
    if llm_kinds:
        if not model:
            raise DhpError(f"LLM-based kinds ({', '.join(k.name for k in llm_kinds)}) need --model and an LLM "
                           "server", field="model")
        with connect(ollama_url or settings.OLLAMA_URL) as backend:
            digest = backend.check([model])[model]
            for kind in llm_kinds:
                reports.append(perturber.llm(kind, backend, model, digest, parallel or settings.OLLAMA_PARALLEL))
    return reports
