"""Modes built the way a user builds one: a rule file written to a test's ``tmp_path``, read by
``ModeRegistry.with_builtins`` and graded by ``choicebox.grade``.

``one_kind`` builds a mode whose chain is one step of one kind, with that step's parameters;
``chain`` one of several steps; ``robust_with_stages`` the built-in ``robust`` with its
``stages:`` list replaced, every other rule as shipped. Each returns a ``Built`` mode whose
``grade`` reads an output on a sample without a template (so no template regex runs first).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Final

import attrs
import yaml

import choicebox
from choicebox import Candidate, ModeRegistry, Verdict
from choicebox._resources import builtin_rule_files
from choicebox.resolve._stages import DEFAULT_STAGES
from choicebox.testing import mcqa_sample

FOUR: Final = {"A": "optA", "B": "optB", "C": "optC", "D": "optD"}
TEN: Final = {letter: f"opt{letter}" for letter in "ABCDEFGHIJ"}
QUESTION: Final = "Which option is right?"
# ``resolve: conclusion`` needs its vocabularies: these are robust's, as shipped.
CONCLUSION: Final = "conclusion"


def _robust_text() -> str:
    return next(f for f in builtin_rule_files() if f.name == "robust.yaml").read_text(encoding="utf-8")


def robust_policy() -> dict[str, Any]:
    """The ``resolve:`` mapping of the shipped ``robust`` (the ``conclusion`` policy, configured)."""
    resolve = yaml.safe_load(_robust_text())["resolve"]
    assert isinstance(resolve, dict)
    return resolve


def robust_step(entry_id: str) -> dict[str, Any]:
    """The parameters of the shipped ``robust``'s chain entry ``entry_id`` (its vocabularies),
    without ``kind``, ``id``, ``primary`` and ``when``: a base to change one parameter of."""
    entry = next(e for e in yaml.safe_load(_robust_text())["chain"] if e["id"] == entry_id)
    return {key: value for key, value in entry.items() if key not in ("kind", "id", "primary", "when")}


@attrs.frozen
class Built:
    """A mode in a registry of its own, graded through the public API."""

    registry: ModeRegistry
    name: str

    def grade(
        self,
        output: str,
        *,
        options: Mapping[str, str] = FOUR,
        expected: str | None = None,
        question: str = QUESTION,
        answer_prefix: str | None = None,
    ) -> Verdict:
        sample = mcqa_sample(
            options=dict(options),
            expected=expected or next(iter(options)),
            question=question,
            answer_prefix=answer_prefix,
        )
        return choicebox.grade(sample, output, mode=self.name, registry=self.registry)

    def read(self, output: str, **kw: Any) -> str | None:
        """The letter the mode reads from ``output`` (``None``: no answer)."""
        return self.grade(output, **kw).extracted_answer

    def found(self, output: str, **kw: Any) -> list[Candidate]:
        """The statements the mode's steps found in ``output``, as its verdict lists them."""
        return [ruling.candidate for ruling in self.grade(output, **kw).candidates]

    def outcome(self, output: str, **kw: Any) -> tuple[str | None, str | None]:
        """(letter, failure) of the verdict, a wrong answer counted as no failure: what was read."""
        verdict = self.grade(output, **kw)
        failure = None if verdict.failure == "wrong_answer" else verdict.failure
        return verdict.extracted_answer, failure


def _write(tmp_path: Path, document: Mapping[str, Any]) -> Built:
    # One directory per mode, so a registry reads only its own file.
    name = f"{document['id']}_{sum(1 for _ in tmp_path.iterdir())}"
    directory = tmp_path / name
    directory.mkdir()
    text = yaml.safe_dump({**document, "id": name}, allow_unicode=True, sort_keys=False)
    (directory / f"{name}.yaml").write_text(text, encoding="utf-8")
    registry = ModeRegistry.with_builtins([directory])
    registry.get(name)  # parse now: a bad parameter fails where the mode is built
    return Built(registry, name)


def chain(
    tmp_path: Path, steps: Sequence[Mapping[str, Any]], *, resolve: str | Mapping[str, Any] = "first_step"
) -> Built:
    """A mode of ``steps`` (each a chain entry: ``kind``, its parameters, ``id``, ``when``...).

    ``resolve`` is a policy name or mapping; ``CONCLUSION`` is robust's configured policy."""
    policy: str | Mapping[str, Any] = robust_policy() if resolve == CONCLUSION else resolve
    document = {
        "version": 1,
        "id": "built",
        "description": "a mode built by a test",
        "resolve": policy,
        "chain": [dict(step) for step in steps],
    }
    return _write(tmp_path, document)


def one_kind(
    tmp_path: Path, kind: str, *, resolve: str | Mapping[str, Any] = "first_step", **params: Any
) -> Built:
    """A mode whose chain is one step of ``kind`` with ``params``."""
    return chain(tmp_path, [{"kind": kind, **params}], resolve=resolve)


def robust_with_stages(tmp_path: Path, stages: Sequence[str]) -> Built:
    """The shipped ``robust`` with ``stages:`` set to ``stages``, every other rule as shipped."""
    text = _robust_text()
    listed = f"stages: [{', '.join(DEFAULT_STAGES)}]"
    assert listed in text
    edited = text.replace(listed, f"stages: [{', '.join(stages)}]")
    name = f"edited_{sum(1 for _ in tmp_path.iterdir())}"
    directory = tmp_path / name
    directory.mkdir()
    (directory / f"{name}.yaml").write_text(edited.replace("id: robust", f"id: {name}", 1), encoding="utf-8")
    return Built(ModeRegistry.with_builtins([directory]), name)


def robust_without(tmp_path: Path, stage: str) -> Built:
    """``robust`` without ``stage``, the other stages in their shipped order."""
    assert stage in DEFAULT_STAGES
    return robust_with_stages(tmp_path, [name for name in DEFAULT_STAGES if name != stage])


ROBUST: Final = Built(ModeRegistry.with_builtins(), "robust")
