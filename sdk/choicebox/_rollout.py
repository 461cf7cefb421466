"""A rollout is a sample plus the model's response; this module finds the text to grade.

Three response shapes are accepted: a plain string, an OpenAI Responses object (what NeMo Gym
records: ``output[]`` items, message items holding ``output_text`` parts) and a Chat Completions
object (``choices[0].message.content``). For a Responses object the graded text is the last
assistant message's text, as Gym's README says; reasoning items never count.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, TypeAlias

import attrs

from ._errors import WireFormatError
from ._samples import MCQASample

__all__ = ["ModelOutput", "Rollout", "response_excerpt", "response_text"]

ModelOutput: TypeAlias = str | Mapping[str, Any]


def response_text(output: object) -> str:
    """The text to grade in ``output``; raises ``WireFormatError`` naming the path if unreadable."""
    if isinstance(output, str):
        return output
    if type(output) is dict and type(items := output.get("output")) is list:
        # The common case, decoded JSON in NeMo Gym's shape, without ABC isinstance checks.
        fast = _responses_text_fast(items)
        if fast is not None:
            return fast
    if not isinstance(output, Mapping):
        raise WireFormatError(
            [f"expected a string or a response object, got {type(output).__name__} @ $.response"]
        )
    if "output" in output:
        return _responses_text(output["output"])
    if "choices" in output:
        return _chat_text(output["choices"])
    if isinstance(output.get("output_text"), str):
        return str(output["output_text"])
    raise WireFormatError(
        [
            "not a Responses object (no `output`) nor a Chat Completions object (no `choices`) @ $.response"
        ]
    )


def response_excerpt(output: object, chars: int, *, end: bool = False) -> str | None:
    """What a person is shown of a response: its first ``chars`` characters, or with ``end`` its
    last (trailing blanks dropped, "…" where it was cut: the end is where a model answers).
    ``None`` when ``output`` is no readable response. The one trimming rule of previews
    (metrics' failure exemplars) and tails (``choicebox compare``'s exemplars)."""
    try:
        text = response_text(output)
    except WireFormatError:
        return None
    if not end:
        return text[:chars]
    text = text.rstrip()
    return text if len(text) <= chars else "…" + text[-chars:]


def _responses_text_fast(items: list[Any]) -> str | None:
    """``_responses_text`` for plain dicts and lists; ``None`` when anything else turns up."""
    for item in reversed(items):
        if type(item) is not dict:
            return None
        if item.get("type", "message") != "message" or item.get("role", "assistant") != "assistant":
            continue
        content = item.get("content")
        if type(content) is str:
            return content
        if type(content) is not list:
            return None
        texts = []
        for part in content:
            if type(part) is not dict:
                return None
            if part.get("type", "output_text") == "output_text":
                text = part.get("text")
                if type(text) is str:
                    texts.append(text)
        return "".join(texts)
    return ""


def _responses_text(items: object) -> str:
    if not isinstance(items, Sequence) or isinstance(items, str):
        raise WireFormatError([f"expected a list, got {type(items).__name__} @ $.response.output"])
    for item in reversed(items):
        if not isinstance(item, Mapping) or item.get("type", "message") != "message":
            continue  # reasoning, tool calls and the like never carry the answer
        if item.get("role", "assistant") != "assistant":
            continue
        content = item.get("content")
        if isinstance(content, str):
            return content
        if isinstance(content, Sequence):
            return "".join(
                part["text"]
                for part in content
                if isinstance(part, Mapping)
                and part.get("type", "output_text") == "output_text"
                and isinstance(part.get("text"), str)
            )
    return ""


def _chat_text(choices: object) -> str:
    if not isinstance(choices, Sequence) or isinstance(choices, str) or not choices:
        raise WireFormatError(["expected a non-empty list @ $.response.choices"])
    first = choices[0]
    message = first.get("message") if isinstance(first, Mapping) else None
    if not isinstance(message, Mapping):
        raise WireFormatError(["expected a message object @ $.response.choices[0].message"])
    content = message.get("content")
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, Sequence):
        return "".join(
            p["text"] for p in content if isinstance(p, Mapping) and isinstance(p.get("text"), str)
        )
    raise WireFormatError(
        [f"expected text, got {type(content).__name__} @ $.response.choices[0].message.content"]
    )


@attrs.frozen(kw_only=True)
class Rollout:
    """A sample and the model's response to it."""

    sample: MCQASample
    response: ModelOutput

    @property
    def text(self) -> str:
        """The text that is graded."""
        return response_text(self.response)
