"""How a reply of choicebox's is held against NeMo Gym's."""

from __future__ import annotations

import math
from typing import Any


def assert_same_as_gym(gym: Any, ours: Any, path: str = "$") -> None:
    """Same keys in the same order, same values and types; t-interval bounds to 1e-12."""
    if isinstance(gym, dict):
        assert isinstance(ours, dict), path
        assert list(ours) == list(gym), f"{path}: keys differ"
        for key in gym:
            assert_same_as_gym(gym[key], ours[key], f"{path}.{key}")
    elif isinstance(gym, list):
        assert isinstance(ours, list), path
        assert len(ours) == len(gym), f"{path}: lengths differ"
        for i, (g, o) in enumerate(zip(gym, ours, strict=True)):
            assert_same_as_gym(g, o, f"{path}[{i}]")
    elif "ci_low_95" in path or "ci_high_95" in path:
        assert math.isclose(ours, gym, rel_tol=1e-12, abs_tol=1e-12), (path, gym, ours)
    else:
        assert type(ours) is type(gym), (path, gym, ours)
        assert ours == gym, (path, gym, ours)
