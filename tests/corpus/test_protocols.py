"""The protocol registry: each protocol a declaration the screen, the services and the docs ask."""

from __future__ import annotations

from pathlib import Path

import pytest

from corpus import protocols
from corpus.protocols import opennlgauge
from corpus.protocols.errors import ProtocolError

TEMPLATES = Path(__file__).resolve().parents[2] / "templates"


def test_unknown_protocols_are_refused_naming_the_known_ones():
    with pytest.raises(ProtocolError, match="known: opennlgauge, mqm, esa, da"):
        protocols.get("sqm")


@pytest.mark.parametrize("name", list(protocols.PROTOCOLS))
def test_every_protocol_has_its_template_and_keys_free_of_the_screen_keys(name):
    declared = protocols.get(name)
    assert (TEMPLATES / declared.template).is_file()
    keys = declared.keys(None)
    assert keys and not set(keys) & opennlgauge.SCREEN_KEYS


def test_opennlgauge_declares_the_vocabulary_its_screen_uses():
    declared = protocols.get(protocols.OPENNLGAUGE)
    assert set(declared.keys(None)) == set(opennlgauge.key_map())
    assert declared.per_span == opennlgauge.JUDGMENT_FIELDS and declared.judges_machine_spans
    assert protocols.DEFAULT == protocols.OPENNLGAUGE


def test_mqm_keys_follow_the_campaigns_tree():
    own = {"tree": [{"name": "Meaning", "children": ["Wrong", "Missing"]}, "Other"]}
    keys = protocols.get(protocols.MQM).keys(own)
    assert keys["1"].startswith("category: Meaning") and keys["2"] == "category: Other" and "3" not in keys
    assert protocols.get(protocols.MQM).categories(own) == ["Meaning/Wrong", "Meaning/Missing", "Other"]
    assert protocols.get(protocols.MQM).clean_options(own)["tree"][0] == {"name": "Meaning",
                                                                         "children": ["Wrong", "Missing"]}
