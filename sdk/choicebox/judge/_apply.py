"""A judgement written into a verdict: the judge's fields always, the reward only on a flagged row.

The one place where a judge changes a reward. A row the mode flagged (``needs_judge``) on which the
judge read a letter earns what that letter earns under the mode's weights (correct or not,
answered, never in the mode's own format); every other row keeps its reward whatever the judge
said, so a calibration row, a failure or a NONE changes nothing but the judge's own fields.
"""

from __future__ import annotations

import attrs

from choicebox._grading import judged_components, weighted_reward
from choicebox._modes import GradingMode
from choicebox.render import Verdict

from ._judge import Judgement

__all__ = ["apply_judgement"]


def apply_judgement(verdict: Verdict, judgement: Judgement, mode: GradingMode) -> Verdict:
    """``verdict`` with ``judgement`` recorded (``judge_letter``, ``judge_model``,
    ``judge_failure``) and, on a flagged verdict the judge read a letter of, the reward it earns.
    The rules' reading (``extracted_answer``, ``failure``, ``detail``) is kept as it was."""
    if mode.id != verdict.mode:
        raise ValueError(f"the verdict is of mode {verdict.mode!r}, not {mode.id!r}")
    judged = attrs.evolve(
        verdict,
        judge_letter=judgement.letter,
        judge_model=judgement.model,
        judge_failure=judgement.failure,
    )
    if not verdict.needs_judge:
        return judged
    # From the letter alone, not from the verdict's reward: a row judged before gets the same
    # reward again, or its rule reward back (a flagged verdict has no letter: all zeros).
    components = judged_components(judgement.letter, verdict.expected_answer)
    return attrs.evolve(judged, reward_components=components, reward=weighted_reward(mode, components))
