"""The ``conclusion`` policy's stages (``choicebox.resolve._stages``) as a list a mode names under
``resolve: stages:``. Each stage on its own, the case it decides and the same case read without it,
is tested in its own module, ``tests/resolve/stages/test_<stage>.py``."""

from __future__ import annotations

from pathlib import Path

import pytest

import choicebox
from choicebox.resolve._stages import DEFAULT_STAGES, STAGES
from rule_files import ROBUST, robust_policy, robust_with_stages


def test_every_stage_is_a_default_stage_and_robust_runs_them_in_the_default_order() -> None:
    assert set(STAGES) == set(DEFAULT_STAGES)
    assert tuple(robust_policy()["stages"]) == DEFAULT_STAGES
    assert ROBUST.registry.get("robust").policy.stages == DEFAULT_STAGES  # type: ignore[attr-defined]


def test_an_unknown_stage_is_a_located_error(tmp_path: Path) -> None:
    with pytest.raises(choicebox.RuleFileError, match="unknown stage 'finale'") as raised:
        robust_with_stages(tmp_path, ("finale",)).registry.get("edited_0")
    assert "edited_0.yaml:" in str(raised.value)


def test_a_stage_named_twice_is_a_located_error(tmp_path: Path) -> None:
    with pytest.raises(choicebox.RuleFileError, match="a stage is named twice") as raised:
        robust_with_stages(tmp_path, ("run", "hedge", "run")).registry.get("edited_0")
    assert "edited_0.yaml:" in str(raised.value)


def test_the_stages_run_in_the_order_the_mode_lists_them(tmp_path: Path) -> None:
    # A run of part-scoped answers with different letters: the stage listed first decides it.
    output = "The answer to (a) is (A)\nThe answer to (b) is (C)"
    run_first = robust_with_stages(tmp_path, ("run", "part_scoped")).grade(output)
    scoped_first = robust_with_stages(tmp_path, ("part_scoped", "run")).grade(output)
    assert (run_first.failure, run_first.detail) == ("conflicting", "a run of answers with different letters: A, C")
    assert (scoped_first.failure, scoped_first.detail) == ("conflicting", "one answer per part (A, C), no overall answer")
