"""The annotation protocols a campaign can run, each a declaration: what the annotator fills, with which keys, how
it is checked, which item-screen template shows it, and which figures and exports it has.

Django-free, like a job kind's declaration: the campaign's `protocol` names one, the item screen renders its
template with its key map, the services check added errors with it, and the analytics and exports ask it which
figures and formats apply. Study machinery (phases, quality checks, participants, adjudication, the report)
stays protocol-agnostic; a protocol says where a concept does not apply (`judges_machine_spans`).
Adding a protocol is its vocabulary module, its declaration here (or `register` for one declared elsewhere), its
annotator hooks (annotator/protocols/) and its template: docs/contributing/protocols.md. These modules and
annotator/protocols/ are the protocol modules, the only code that may test a campaign's protocol by name.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from corpus.protocols import da, esa, mqm, opennlgauge, pairwise, prefill
from corpus.protocols.errors import ProtocolError
from corpus.protocols.mqm import source_text as source_text  # the item source every protocol reads

OPENNLGAUGE = "opennlgauge"
MQM = "mqm"
ESA = "esa"
DA = "da"
PAIRWISE = "pairwise"
SXS_MQM = "sxs-mqm"
CESA = "cesa"
DEFAULT = OPENNLGAUGE


def _no_options(value: Any) -> dict[str, Any]:
    if value not in (None, {}, ""):
        raise ProtocolError("protocol_options: the OpeNLGauge protocol takes none", field="protocol_options")
    return {}


def _mqm_options(value: Any) -> dict[str, Any]:
    """{"tree": a campaign's own error tree, "weights": its scoring weights, "major_from": the machine severity
    from which a pre-filled error is Major (corpus.protocols.prefill)}; all optional."""
    if value in (None, "", {}):
        return {}
    if not isinstance(value, Mapping):
        raise ProtocolError("protocol_options: an object with 'tree' and/or 'weights'", field="protocol_options")
    unknown = sorted(set(value) - {"tree", "weights", prefill.OPTION})
    if unknown:
        raise ProtocolError(f"protocol_options: unknown option(s) {', '.join(unknown)} (known: tree, weights, "
                            f"{prefill.OPTION})", field="protocol_options")
    cleaned: dict[str, Any] = {}
    if value.get("tree") not in (None, []):
        cleaned["tree"] = mqm.tree_as_json(mqm.parse_tree(value["tree"], "protocol_options.tree"))
    if value.get("weights") not in (None, {}):
        cleaned["weights"] = mqm.Weights.from_mapping(value["weights"], "protocol_options.weights").as_mapping()
    if value.get(prefill.OPTION) is not None:
        cleaned[prefill.OPTION] = prefill.clean_major_from(value[prefill.OPTION])
    return cleaned


def mqm_tree(options: Mapping[str, Any] | None) -> tuple[mqm.Category, ...]:
    """A campaign's MQM tree: its own, else the default."""
    tree = (options or {}).get("tree")
    return mqm.parse_tree(tree) if tree else mqm.DEFAULT_TREE


def mqm_weights(options: Mapping[str, Any] | None) -> mqm.Weights:
    weights = (options or {}).get("weights")
    return mqm.Weights.from_mapping(weights) if weights else mqm.DEFAULT


OUTPUT, SOURCE, UNPLACED = "output", "source", "unplaced"
"""Where an annotator's error may lie: in the output, in the source, or nowhere in the text (missing content)."""
MARKED, SCORED_LOWER, PREFERRED = "marked", "scored_lower", "preferred"
"""How a planted copy is caught: its planted stretch marked, or the copy scored below its original."""
ALL_PHASES = ("training", "marking", "judging", "scoring", "done")
"""The phases an assignment can be in (annotator.engine.phases); a protocol declares the ones it goes through."""


@dataclass(frozen=True)
class Protocol:
    """One protocol as the rest of the project asks about it.

    The study capabilities follow from what the annotator gives: verdicts on machine spans carry decoys, routing
    and samples; errors the annotator marks carry planted copies; pre-fill makes the control arm "without
    pre-fill"."""

    name: str
    label: str
    per_span: tuple[str, ...]  # what an annotator gives per machine span judged or per error they mark
    keys: Callable[[Mapping[str, Any] | None], dict[str, str]]  # key -> what it does, for the screen and the docs
    template: str  # the item screen's template
    figures: tuple[str, ...]  # the figures analytics and the report compute for it
    exports: tuple[str, ...]  # the formats its annotations export to
    clean_options: Callable[[Any], dict[str, Any]]  # a campaign's protocol_options checked (ProtocolError)
    judges_machine_spans: bool  # annotators give verdicts on machine spans (else machine spans may only pre-fill)
    severities: tuple[int, ...]  # the ErrorSpan.severity codes an annotator's error may carry
    severity_required: bool
    categories: Callable[[Mapping[str, Any] | None], list[str] | None] = field(default=lambda options: None)
    """The categories an annotator's error may carry; None: the campaign's own category set decides."""
    unlocated_category: str = ""
    """The category of an error that has no characters to mark (ESA's missing content); "": every error has."""
    marks: tuple[str, ...] = (OUTPUT,)
    """Where the annotator's own errors lie (OUTPUT, SOURCE, UNPLACED)."""
    per_item: tuple[str, ...] = ()
    """What the annotator gives once per item (ESA's score)."""
    phases: tuple[str, ...] = ("training", "marking", "judging", "done")
    """The phases an item of this protocol goes through, in order (a subset of ALL_PHASES)."""
    prefills: bool = False
    """Machine spans pre-fill the annotator's errors on first open (the control arm then means no pre-fill)."""
    severity_scale: bool = False
    """Severities are a 1..n scale (said as a range); otherwise a set of named codes."""

    control_arm: bool = True
    """Outputs can start without the machine's spans: unprimed before the verdicts, or without pre-fill."""
    score_range: tuple[int, int] | None = None
    """The bounds of the generic per-item score (annotator.services.item_scores), whole numbers; None: the
    protocol gives none there (ESA keeps its own row, annotator.esa_models)."""
    planted_check: str = MARKED
    """How a planted copy counts as caught: its stretch marked (MARKED), the copy scored below its original
    (SCORED_LOWER, Appraise's BAD items), or its original preferred to it on their screen (PREFERRED)."""
    compares: int = 1
    """Outputs of one input shown together on one screen (a comparison unit, annotator.unit_models); 1: one output
    at a time. A comparing protocol deals an input's outputs to the same judges and counterbalances positions."""

    steps_of: str = ""
    """The protocol whose screen steps this one's items take ("mqm": side-by-side MQM marks each output with MQM's
    own endpoints); "": its own."""

    @property
    def comparing(self) -> bool:
        return self.compares > 1

    @property
    def prefers(self) -> bool:
        """A comparison screen asks which output is better (pairwise); otherwise its outputs' own marks compare."""
        return "preference" in self.per_item

    @property
    def marks_errors(self) -> bool:
        """Annotators mark their own errors, so a planted copy's known error can be found (or missed)."""
        return bool(self.marks)

    @property
    def grades_training(self) -> bool:
        """A qualification can be graded: its key is the verdicts on the training items' machine spans, so only a
        protocol that gives verdicts has one (elsewhere training items are practice)."""
        return self.judges_machine_spans

    @property
    def plants(self) -> bool:
        """Planted copies apply: their error can be marked, or their score compared with the original's. Under a
        comparing protocol a copy is shown on a screen of its own input (quality.services: planted screens), so
        it applies where errors are marked, and where a preference between the copy and its original finds it."""
        if self.planted_check == PREFERRED:
            return self.prefers
        return self.marks_errors if self.planted_check == MARKED else self.score_range is not None

    def allows_phase(self, phase: str) -> bool:
        return phase in self.phases


def _opennlgauge_keys(options: Mapping[str, Any] | None) -> dict[str, str]:
    return {t.key: f"{g.name.lower()}: {t.label}" for g in opennlgauge.GROUPS for t in g.terms}


def _mqm_keys(options: Mapping[str, Any] | None) -> dict[str, str]:
    keys = {t.key: f"severity: {t.label}" for t in mqm.SEVERITIES}
    keys[mqm.NON_TRANSLATION_KEY] = "the whole segment is a Non-translation (Major)"
    for number, category in enumerate(mqm_tree(options), 1):
        keys[str(number)] = f"category: {category.name}" + (" (then 1-9 for its subcategory)"
                                                              if category.children else "")
    return keys


def _cesa_keys(options: Mapping[str, Any] | None) -> dict[str, str]:
    return {**esa.KEYS, "c": "move the focus to the next output of this screen"}


def _sxs_mqm_keys(options: Mapping[str, Any] | None) -> dict[str, str]:
    return {**_mqm_keys(options), "x": "switch to the other output of this screen"}


PROTOCOLS: dict[str, Protocol] = {
    OPENNLGAUGE: Protocol(
        name=OPENNLGAUGE, label="OpeNLGauge (verdicts on machine error spans)",
        per_span=opennlgauge.JUDGMENT_FIELDS, keys=_opennlgauge_keys, template="annotator/item.html",
        figures=("table4", "accuracy", "agreement", "ranking", "priming", "overlap"),
        exports=("jsonl", "csv", "parquet", "labelstudio", "factgenie"), clean_options=_no_options,
        judges_machine_spans=True, severities=opennlgauge.SEVERITIES, severity_required=False, severity_scale=True,
    ),
    MQM: Protocol(
        name=MQM, label="MQM (error spans with a category and a severity, scored with weights)",
        per_span=("span", "category", "severity", "note"), keys=_mqm_keys, template="annotator/item_mqm.html",
        figures=("mqm_scores", "mqm_categories", "mqm_agreement"),
        exports=("jsonl", "csv", "parquet", "labelstudio", "factgenie", "mqm-tsv"), clean_options=_mqm_options,
        judges_machine_spans=False, severities=tuple(mqm.SEVERITY_CODES.values()), severity_required=True,
        categories=lambda options: mqm.tree_names(mqm_tree(options)), prefills=True,
        marks=(OUTPUT, SOURCE),  # an omission is marked where the source says what the translation lacks
        control_arm=False,  # its screen has no step without pre-fill: every item opens with the runs' spans
    ),
    ESA: Protocol(
        name=ESA, label="ESA (error spans as Minor or Major, then a 0-100 score; ESA^AI when runs pre-fill them)",
        per_span=("span", "severity"), per_item=("score",), keys=lambda options: dict(esa.KEYS),
        template="annotator/item_esa.html",
        figures=("esa_scores", "esa_ranking", "esa_severities", "esa_agreement", "esa_prefill", "esa_arms"),
        exports=("jsonl", "csv", "parquet", "labelstudio", "factgenie", "pearmut"), clean_options=esa.clean_options,
        judges_machine_spans=False, severities=tuple(esa.SEVERITY_CODES.values()), severity_required=True,
        categories=lambda options: ["", esa.MISSING], unlocated_category=esa.MISSING,
        marks=(OUTPUT, UNPLACED), prefills=True, phases=("training", "marking", "judging", "scoring", "done"),
    ),
    DA: Protocol(
        name=DA, label="DA (Direct Assessment: a 0-100 score per output, compared as per-annotator z-scores)",
        per_span=(), per_item=("score",), keys=da.keys, template="annotator/item_da.html",
        figures=("da_scores",), exports=("appraise-csv",), clean_options=da.clean_options,
        judges_machine_spans=False, severities=(), severity_required=False, marks=(),
        phases=("training", "judging", "done"), control_arm=False, score_range=(da.SCORE_MIN, da.SCORE_MAX),
        planted_check=SCORED_LOWER,  # Appraise's BAD items: a degraded copy must score below its original
    ),
    PAIRWISE: Protocol(
        name=PAIRWISE, label="Pairwise (two outputs side by side: which is better, or a tie, and why)",
        per_span=(), per_item=("preference", "reason"), keys=lambda options: dict(pairwise.KEYS),
        template="annotator/item_pairwise.html", figures=("pairwise",), exports=("units",),
        clean_options=pairwise.clean_options, judges_machine_spans=False, severities=(), severity_required=False,
        categories=lambda options: [""],  # optional spans that back the choice: a stretch, no category or severity
        marks=(OUTPUT,), phases=("training", "judging", "done"), control_arm=False, compares=pairwise.OUTPUTS,
        planted_check=PREFERRED,  # a planted screen shows the copy beside its original: the original must win
    ),
    SXS_MQM: Protocol(
        name=SXS_MQM, label="Side-by-side MQM (two outputs on one screen, MQM errors on either side and in the source)",
        per_span=("span", "category", "severity", "note"), keys=_sxs_mqm_keys, template="annotator/item_mqm.html",
        figures=("pairwise", "mqm_scores", "mqm_categories", "mqm_agreement"),
        exports=("mqm-sxs-tsv", "units", "mqm-tsv"), clean_options=_mqm_options, judges_machine_spans=False,
        severities=tuple(mqm.SEVERITY_CODES.values()), severity_required=True,
        categories=lambda options: mqm.tree_names(mqm_tree(options)), prefills=True, marks=(OUTPUT, SOURCE),
        control_arm=False, compares=2, steps_of=MQM,
    ),
    CESA: Protocol(
        name=CESA, label="Contrastive ESA (an input's outputs stacked on one screen: ESA spans and a score for each)",
        per_span=("span", "severity"), per_item=("score",), keys=_cesa_keys, template="annotator/item_esa.html",
        figures=("pairwise", "esa_scores", "esa_ranking", "esa_severities", "esa_agreement", "esa_prefill",
                 "esa_arms"),
        exports=("pearmut-contrastive", "pearmut-task", "units", "jsonl", "csv", "parquet", "pearmut"),
        clean_options=esa.clean_options,
        judges_machine_spans=False, severities=tuple(esa.SEVERITY_CODES.values()), severity_required=True,
        categories=lambda options: ["", esa.MISSING], unlocated_category=esa.MISSING,
        marks=(OUTPUT, UNPLACED), prefills=True, phases=("training", "marking", "judging", "scoring", "done"),
        compares=6, steps_of=ESA,
    ),
}
CHOICES: list[tuple[str, str]] = [(p.name, p.label) for p in PROTOCOLS.values()]


def get(name: str) -> Protocol:
    """The protocol called `name`; ProtocolError naming the known ones otherwise."""
    try:
        return PROTOCOLS[name]
    except KeyError:
        raise ProtocolError(f"protocol: unknown protocol {name!r} (known: {', '.join(PROTOCOLS)})",
                            field="protocol") from None


def step_applies(campaign_protocol: str, step_protocol: str) -> bool:
    """Whether a step that belongs to one protocol's screen (ESA's score, MQM's errors) applies to an item of a
    campaign running `campaign_protocol` (its own, or those of the protocol it takes its steps from): the one
    comparison of protocol names, kept with the declarations."""
    declared, step = get(campaign_protocol), get(step_protocol).name
    return step in (declared.name, declared.steps_of)


def _check(declared: Protocol) -> None:
    """No protocol key may be a key the item screens keep for themselves; its phases and marks are known ones."""
    taken = sorted(opennlgauge.SCREEN_KEYS.intersection(declared.keys(None)))
    if taken:
        raise ValueError(f"protocol {declared.name}: keys {taken} are screen keys")
    if unknown := sorted(set(declared.phases) - set(ALL_PHASES)):
        raise ValueError(f"protocol {declared.name}: unknown phases {unknown}")
    if unknown := sorted(set(declared.marks) - {OUTPUT, SOURCE, UNPLACED}):
        raise ValueError(f"protocol {declared.name}: unknown places {unknown}")
    if declared.planted_check not in (MARKED, SCORED_LOWER, PREFERRED):
        raise ValueError(f"protocol {declared.name}: unknown planted check {declared.planted_check!r}")
    if declared.score_range is not None and ("score" not in declared.per_item
                                             or declared.score_range[0] >= declared.score_range[1]):
        raise ValueError(f"protocol {declared.name}: a score range needs a per-item score and low < high")
    if declared.steps_of and declared.steps_of not in PROTOCOLS:
        raise ValueError(f"protocol {declared.name}: steps_of names no protocol")
    if declared.compares < 1:
        raise ValueError(f"protocol {declared.name}: compares is the number of outputs on a screen, at least 1")
    if bool(declared.unlocated_category) != (UNPLACED in declared.marks):
        raise ValueError(f"protocol {declared.name}: unplaced errors need an unlocated category, and only they")


def register(declared: Protocol) -> Protocol:
    """Add a protocol declared outside this package (a test's, a plug-in's); checked as the built-in ones are."""
    _check(declared)
    PROTOCOLS[declared.name] = declared
    CHOICES[:] = [(p.name, p.label) for p in PROTOCOLS.values()]
    return declared


def unregister(name: str) -> None:
    PROTOCOLS.pop(name, None)
    CHOICES[:] = [(p.name, p.label) for p in PROTOCOLS.values()]


for _declared in PROTOCOLS.values():
    _check(_declared)
