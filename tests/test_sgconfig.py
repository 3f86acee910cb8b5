"""A platform's ``<config>`` read as SimGrid 3.32 applies it under Batsim 4.2.1
(``schedulers/engine/sgconfig.py``: the rules and their sources). The one-line refusals through
``gridsched run`` are in ``tests/test_bad_inputs.py``; here, the order and skipping rules."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from schedulers.engine.platform import read_platform
from schedulers.engine.sgconfig import DECLARED, read_config
from schedulers.inputs.errors import PlatformError

BATSIM_INPUTS = Path(__file__).resolve().parents[2] / "shared" / "batsim-4.2.1" / "inputs"


def _read(*blocks: dict[str, str]) -> dict[str, str]:
    xml = "".join("<config>" + "".join(f"<prop id='{k}' value='{v}'/>" for k, v in b.items()) + "</config>"
                  for b in blocks)
    return read_config(ET.fromstring(f"<platform version='4.1'>{xml}<zone id='z' routing='Full'/></platform>"),
                       "p.xml")


def test_declared_keys_are_the_98_real_batsim_listed():
    # the list printed by real Batsim 4.2.1 in its "Bad config key" abort (module docstring)
    assert len(DECLARED) == 98
    assert "network/coordinates" not in DECLARED and "network/TCP-gamma" in DECLARED
    assert "msg/debug-multiple-use" not in DECLARED  # declared by MSG_init only


def test_batsims_example_settings_are_applied():
    assert _read({"contexts/stack-size": "16", "contexts/guard-size": "0"}) == {
        "contexts/guard-size": "0", "contexts/stack-size": "16"}


def test_a_value_equal_to_the_default_is_accepted_in_any_spelling():
    # strtod / strtol (base 0) read these as SimGrid's defaults 4194304, 1e-5 and 8192
    assert set(_read({"network/TCP-gamma": "0x400000", "maxmin/precision": "1e-05",
                      "contexts/stack-size": "020000"})) == {"network/TCP-gamma", "maxmin/precision",
                                                             "contexts/stack-size"}


def test_host_model_is_skipped_unread_as_batsim_set_it_first():
    assert _read({"host/model": "not a model"}) == {}


def test_a_key_set_by_an_earlier_config_is_skipped_unread():
    assert _read({"path": "a"}, {"path": "b c"}) == {"path": "a"}
    with pytest.raises(PlatformError, match="commas"):
        _read({"path": "b c"})


def test_keys_are_applied_in_sorted_order_and_an_abort_wins_over_a_refusal():
    # maxmin/precision (unsupported value) sorts before network/coordinates (unknown): SimGrid
    # applies the first, then aborts on the second; the error names the key Batsim aborts on
    with pytest.raises(PlatformError, match="'network/coordinates'.*Bad config key"):
        _read({"network/coordinates": "yes", "maxmin/precision": "1e-9"})
    with pytest.raises(PlatformError, match="'maxmin/precision'.*real Batsim"):
        _read({"maxmin/precision": "1e-9"})


def test_a_repeated_prop_keeps_its_first_value():
    root = ET.fromstring("<platform><config><prop id='network/model' value='CM02'/>"
                         "<prop id='network/model' value='Foo'/></config></platform>")
    assert read_config(root, "p.xml") == {"network/model": "CM02"}


@pytest.mark.skipif(not BATSIM_INPUTS.is_dir(), reason="Batsim 4.2.1 inputs not present")
@pytest.mark.parametrize("name", ["energy_platform_homogeneous_no_net.xml", "energy_6pstates_4hosts.xml"])
def test_batsims_own_platforms_with_config_are_read(name):
    assert read_platform(BATSIM_INPUTS / name).compute
