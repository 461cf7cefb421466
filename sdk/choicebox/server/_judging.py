"""The verify server's model judge (off unless configured): a ``/verify`` whose verdict the mode
flags (``needs_judge``) waits for the judge, within a deadline, and is answered with the judge's
reading written in (``choicebox.judge.apply_judgement``: the reward follows the judge's letter).

A judge that is late or down costs a request at most the deadline: the reply is then the rule
verdict, with ``judge_failure`` saying why (``timeout`` past the deadline; ``unreachable`` and the
others as the judge reports them). The judge's own call goes on in its thread after a deadline
passes, and its reply lands in the judge's cache (in memory), so the same request made again (a
reverify, a retried rollout) gets it at once. Replies whose verdict is not flagged are passed
through untouched, unparsed: the verify path of every other row costs one substring search.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Final

import orjson

from choicebox._modes import ModeRegistry

if TYPE_CHECKING:
    from choicebox.judge import Judge, JudgeEndpoint, JudgePrompt

__all__ = ["DEFAULT_JUDGE_DEADLINE", "ServeJudge"]

# Seconds a flagged /verify may wait for its judge: a rollout's verify is on the training loop's
# path, and a judge slower than this is answered for by the rules.
DEFAULT_JUDGE_DEADLINE: Final = 10.0
# How a flagged verdict reads in a reply (the replies are compact JSON, orjson's or the standard
# library's with the same separators).
_FLAGGED: Final = b'"needs_judge":true'


class ServeJudge:
    """The judge of one server process (see the module docstring)."""

    def __init__(
        self,
        endpoint: JudgeEndpoint,
        registry: ModeRegistry,
        *,
        deadline: float = DEFAULT_JUDGE_DEADLINE,
        prompt: JudgePrompt | None = None,
    ) -> None:
        from choicebox.judge import Judge  # noqa: PLC0415  the judge extra: only a server configured with a judge loads it

        self.endpoint = endpoint
        self.deadline = deadline
        self._registry = registry
        self._judge: Judge = Judge(endpoint, prompt=prompt)

    async def judged(self, reply: bytes) -> bytes:
        """``reply`` (a verify response's JSON) with the judge's reading, when its verdict is flagged."""
        if _FLAGGED not in reply:
            return reply
        from choicebox.judge import Judgement, apply_judgement, judged_row  # noqa: PLC0415  see __init__; imported by then

        try:
            row = orjson.loads(reply)
        except orjson.JSONDecodeError:
            return reply
        if not isinstance(row, dict) or row.get("needs_judge") is not True:
            return reply
        seen = judged_row(row, self._registry)
        if seen is None:
            return reply
        try:
            judgement = await asyncio.wait_for(asyncio.to_thread(self._judge.judge, seen.request), self.deadline)
        except TimeoutError:
            judgement = Judgement(
                letter=None, failure="timeout", model=self.endpoint.model,
                detail=f"no judgement within the server's deadline of {self.deadline:g} s",
            )  # fmt: skip
        row.update(apply_judgement(seen.verdict, judgement, seen.mode).wire_fields())
        try:
            return orjson.dumps(row)
        except orjson.JSONEncodeError:  # a request nested past orjson's depth: the rule verdict
            return reply

    def close(self) -> None:
        self._judge.close()
