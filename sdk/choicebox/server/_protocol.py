"""What NeMo Gym's resources-server protocol asks of ``/verify`` and the session routes,
beyond the verdict itself.

* **Verify responses** carry Gym's ``mask_sample``, ``failure_kind`` and ``failure_reason``. Those
  name failures where the reward is not a valid measurement of the policy (Gym 0.7.0's
  ``BaseVerifyResponse``), so a graded row has ``mask_sample: false`` and no failure kind; why an
  answer earned nothing is the verdict's own ``grading_failure``.
* **Bad task data is masked, not refused.** Gym aborts a whole collection on any 4xx from
  ``/verify``. A body that is a verify request (an object with ``responses_create_params`` and a
  readable ``response``) whose task data cannot be used (options that cannot be read, an
  ``output_regex`` that is no pattern, an unknown grading mode) gets 200 with reward 0,
  ``mask_sample: true``, ``failure_kind: "choicebox:invalid_row"`` and every problem, with the
  field it is about, in ``failure_reason``. Anything else keeps its 400/413/422.
* **Sessions.** ``/seed_session`` answers a ``ResourcesSeedSessionRequest`` (what Gym's
  environment servers send) with its ``resources_session_id`` and any other body with ``{}``, as
  Gym's default does; ``/close_session`` takes a ``ResourcesCloseSessionRequest`` and confirms it.
  Both set the session cookie, which environment servers require. choicebox keeps no per-episode
  state, so closing an unknown or closed session succeeds and a late seed recreates nothing.
"""

from __future__ import annotations

import re
import secrets
from collections.abc import Mapping, Sequence
from typing import Any, Final

from choicebox._problems import Problem

__all__ = [
    "SessionCookie",
    "close_session_reply",
    "request_problems",
    "seed_session_reply",
]

# The parts of a body that make it a verify request at all; problems anywhere else are about
# the task's data.
_REQUEST_PATHS: Final = re.compile(r"\$(?:\Z|\.(?:response|responses_create_params)(?:\Z|[.\[]))")


def request_problems(problems: Sequence[Problem]) -> list[Problem]:
    """The problems that make a body no verify request: about the body itself (path ``$``),
    its ``response`` or its ``responses_create_params``."""
    return [problem for problem in problems if _REQUEST_PATHS.match(problem.path)]


# --- sessions ----------------------------------------------------------------------------------

# nemo_gym/episode_types.py: EpisodeId.rollout_id (pydantic's Rust regex: `$` is the very end).
_ROLLOUT_ID: Final = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")
_RESERVED_SUFFIX: Final = re.compile(r"-a[1-9][0-9]*\Z")
_COOKIE_VALUE: Final = re.compile(r"[A-Za-z0-9_-]{16,128}")
_INT_TEXT: Final = re.compile(r"\s*[+-]?[0-9]+\s*")
_NOT_TOKEN: Final = re.compile(r"[^A-Za-z0-9_.-]")


def _exact_keys(
    value: Mapping[str, Any], path: str, required: Sequence[str], optional: Sequence[str] = ()
) -> list[str]:
    problems = [f"required field missing @ {path}.{key}" for key in required if key not in value]
    allowed = {*required, *optional}
    problems += [f"unknown field @ {path}.{key}" for key in value if key not in allowed]
    return problems


def _text(value: Any, path: str, *, min_length: int = 0) -> list[str]:
    if not isinstance(value, str):
        return [f"expected a string @ {path}"]
    if len(value) < min_length:
        return [f"must not be empty @ {path}"]
    return []


def _episode_problems(value: Any, path: str) -> list[str]:
    """``EpisodeId``: ``rollout_id`` (a name, not ending in ``-a<N>``) and ``attempt`` >= 0."""
    if not isinstance(value, dict):
        return [f"expected an object @ {path}"]
    problems = _exact_keys(value, path, ("rollout_id",), ("attempt",))
    rollout = value.get("rollout_id")
    if "rollout_id" in value:
        if not isinstance(rollout, str) or not _ROLLOUT_ID.fullmatch(rollout):
            problems.append(f"expected a rollout id matching {_ROLLOUT_ID.pattern} @ {path}")
        elif _RESERVED_SUFFIX.search(rollout):
            problems.append(f"must not end with the reserved suffix '-a<N>' @ {path}.rollout_id")
    attempt = _lax_int(value.get("attempt", 0))
    if attempt is None or attempt < 0:
        problems.append(f"expected an integer >= 0 @ {path}.attempt")
    return problems


def _lax_int(value: Any) -> int | None:
    """An int as pydantic's lax mode reads one: booleans, integral floats and digit strings
    count."""
    if isinstance(value, bool | int):
        return int(value)
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str) and _INT_TEXT.fullmatch(value):
        return int(value)
    return None


def _task_problems(value: Any, path: str) -> list[str]:
    """``TaskId``: non-empty ``taskset`` and ``task_id``."""
    if not isinstance(value, dict):
        return [f"expected an object @ {path}"]
    problems = _exact_keys(value, path, ("taskset", "task_id"))
    for key in ("taskset", "task_id"):
        if key in value:
            problems += _text(value[key], f"{path}.{key}", min_length=1)
    return problems


def seed_problems(body: Any) -> list[str]:
    """Why ``body`` is no ``ResourcesSeedSessionRequest`` (empty when it is one)."""
    if not isinstance(body, dict):
        return ["expected an object @ $"]
    keys = ("resources_session_id", "episode_id", "task_id", "task_data")
    problems = _exact_keys(body, "$", keys)
    if "resources_session_id" in body:
        problems += _text(body["resources_session_id"], "$.resources_session_id", min_length=1)
    if "episode_id" in body:
        problems += _episode_problems(body["episode_id"], "$.episode_id")
    if "task_id" in body:
        problems += _task_problems(body["task_id"], "$.task_id")
    if "task_data" in body and not isinstance(body["task_data"], dict):
        problems.append("expected an object @ $.task_data")
    return problems


def close_problems(body: Any) -> list[str]:
    """Why ``body`` is no ``ResourcesCloseSessionRequest`` (empty when it is one)."""
    if not isinstance(body, dict):
        return ["expected an object @ $"]
    problems = _exact_keys(body, "$", ("resources_session_id", "episode_id"))
    if "resources_session_id" in body:
        problems += _text(body["resources_session_id"], "$.resources_session_id")
    if "episode_id" in body:
        problems += _episode_problems(body["episode_id"], "$.episode_id")
    return problems


def seed_session_reply(body: Any) -> dict[str, Any]:
    """``ResourcesSeedSessionResponse`` for a typed seed; ``{}`` for anything else (an agent's
    legacy run body, an empty body), as Gym's ``BaseSeedSessionRequest`` fallback answers."""
    if seed_problems(body):
        return {}
    return {
        "resources_session_id": body["resources_session_id"],
        "resources_tools": None,
        "sandbox_access": None,
    }


def close_session_reply(body: Any) -> tuple[dict[str, Any] | None, list[str]]:
    """``(ResourcesCloseSessionResponse, [])``, or ``(None, problems)`` for a body that is no
    close request (Gym answers those 422)."""
    problems = close_problems(body)
    if problems:
        return None, problems
    return {"resources_session_id": body["resources_session_id"]}, []


class SessionCookie:
    """The session cookie, named as Gym names it (``<server class>___<instance name>``).

    Gym's agents and environment servers carry it from ``/seed_session`` to ``/verify`` and
    ``/close_session``; the single-agent-turn environment server refuses a seed that sets none.
    A request that brings one keeps it.
    """

    __slots__ = ("name",)

    def __init__(self, server_name: str) -> None:
        # A cookie name is a token: anything else in an instance name becomes "_".
        safe = _NOT_TOKEN.sub("_", server_name) or "choicebox"
        self.name = f"ChoiceboxResourcesServer___{safe}"

    def value(self, cookies: Mapping[str, str]) -> str:
        current = cookies.get(self.name)
        if current is not None and _COOKIE_VALUE.fullmatch(current):
            return current
        return secrets.token_urlsafe(24)

    def header(self, value: str) -> str:
        # What Starlette's SessionMiddleware sends (14 days, HttpOnly, SameSite=lax).
        return f"{self.name}={value}; Path=/; Max-Age=1209600; HttpOnly; SameSite=lax"
