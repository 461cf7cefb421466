"""Resolve: statements in, one decision out.

The second room of the grading pipeline (``choicebox.find`` is the first, ``_grading`` builds
the verdict from what comes out here). A mode's YAML names its policy under ``resolve:``; the
policy reads the candidates its chain's steps found and returns a ``Resolution``: the extraction
the verdict is built from, and what it did with every candidate (a ``Ruling``), which
``choicebox explain`` prints. Policies never edit the steps' ``Context``.

* ``_policies``: the registry, ``first_step`` (NeMo Gym's semantics) and ``last_position``;
* ``_conclusion``: the ``conclusion`` policy (``robust``): the letter a response finally commits
  to, read by the ordered stages of ``_stages`` that the mode's YAML names.
"""

from __future__ import annotations

from ._policies import (
    REGEX_FAILURES,
    ChainEntry,
    FirstStep,
    Outcome,
    Policy,
    Resolution,
    Ruling,
    policy_kind,
    policy_kinds,
    register_policy,
    run_step,
)

__all__ = [
    "REGEX_FAILURES",
    "ChainEntry",
    "FirstStep",
    "Outcome",
    "Policy",
    "Resolution",
    "Ruling",
    "policy_kind",
    "policy_kinds",
    "register_policy",
    "run_step",
]
