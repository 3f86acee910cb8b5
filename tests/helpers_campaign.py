"""Helpers for campaign tests: small campaign files written by hand."""

from __future__ import annotations


def tiny_green(deltas: str = "[0, 10, 20, 30, 40, 50]", load: float = 0.3) -> str:
    """The text of a green-heuristic campaign ``tiny``: green-easy (label EASY) and green-heft
    (label HEFT) at each of ``deltas`` (a TOML array) on 10 jobs of the green-nantes generator at
    offered load ``load``, one core a host, one seed: 2 x len(deltas) runs of a few ms each."""
    return ('name = "tiny"\nseeds = 1\nenergy = true\ncompute_sharing = true\nmetrics = ["green-energy"]\n'
            '[[policy]]\nname = "green-easy"\nlabel = "EASY"\n[[policy]]\nname = "green-heft"\nlabel = "HEFT"\n'
            '[[scenario]]\nname = "nantes"\ngenerator = "green-nantes"\n'
            f'params = {{ job_count = 10, offered_load = {load}, host_cores = 1 }}\n[axes]\ndelta = {deltas}\n')
