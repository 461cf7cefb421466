"""Step kinds that read the whole output or its last line: option text, a standalone letter, tags."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Final, Literal, TypeAlias

import attrs

from choicebox._errors import ParameterError
from choicebox._letters import match_option_text
from choicebox.find._features import norm_text
from choicebox.find._payload import ANSWER_MARKS, Payload, read_payload
from choicebox.find._readable import has_readable_letter

from ._api import (
    Candidate,
    Context,
    Extraction,
    Leniency,
    Origin,
    _from_payload,
    candidate_of,
    payload_candidate,
    register_step_kind,
)

# --- whole-output readings -----------------------------------------------------------------------

Scope: TypeAlias = Literal["whole", "last_line"]


def _scoped(text: str, scope: Scope) -> tuple[str, int]:
    stripped = text.rstrip()
    if stripped.endswith("```"):
        # a closing code fence is markup: "```\nH\n```" ends in the line inside it
        fence = stripped.rfind("\n")
        if stripped[fence + 1 :].strip() == "```":
            stripped = stripped[: max(fence, 0)].rstrip()
    if scope == "whole":
        return stripped.strip(), len(stripped) - len(stripped.lstrip())
    cut = stripped.rfind("\n")
    return stripped[cut + 1 :].strip(), cut + 1


def _line_before(text: str, position: int) -> str:
    """The last non-blank line that ends before ``position``, stripped."""
    before = text[max(0, position - 4096) : position].rstrip()
    return before[before.rfind("\n") + 1 :].strip()


def _listed(letter: str, other: str | None, position: int) -> Extraction | None:
    """A one-per-line list (``A`` / ``B`` / ``C``, or option texts) is no single answer."""
    if other is None or other == letter:
        return None
    return Extraction(
        None,
        failure="ambiguous",
        detail=f"the last lines list several choices: {other}, {letter}",
        position=position,
    )


_LISTING_RE: Final = re.compile(r"^\(?(?P<L>[A-Za-z])[):.]\s+\S")


def _restates_option(line: str, item: re.Match[str], context: Context) -> bool:
    """The listing line ``item`` matched gives its letter's own option text, whole."""
    own = context.options.get(item["L"].upper())
    return own is not None and norm_text(line[item.end() - 1 :]) == norm_text(own)


@register_step_kind("option_text")
@attrs.frozen(kw_only=True)
class OptionTextStep:
    """The whole output, or its last line, is exactly one option's text.

    ``punctuation`` ignores punctuation and ``numeric`` compares numbers by value (``12.0`` is
    ``12``, ``120`` is not). Two options with the same normalised text match nothing.
    """

    scope: Scope = "last_line"
    punctuation: bool = True
    numeric: bool = True

    def __call__(self, context: Context) -> Extraction | None:
        # An output far longer than every option's text cannot be one of them once normalised
        # (normalising folds blanks and case only): skip the normalisation of a long text.
        longest = max(map(len, context.options.values()), default=0)
        if self.scope == "whole" and (len(context.text) > 1.5 * longest + 16 or "\n" in context.text.strip()):
            return None  # an output of several lines is no option's text (the options are one-line)
        line, position = _scoped(context.text, self.scope)
        if not line or len(line) > 2000 or len(line) > 2 * longest + 64:
            return None
        letter = match_option_text(
            line, context.options, punctuation=self.punctuation, numeric=self.numeric
        )
        if letter is None:
            return None
        if self.scope == "last_line":
            previous = match_option_text(
                _line_before(context.text, position),
                context.options,
                punctuation=self.punctuation,
                numeric=self.numeric,
            )
            listed = _listed(letter, previous, position)
            if listed is not None:
                return listed
        return Extraction(letter, position=position, detail="the output is an option's text")

    def find(self, context: Context) -> Sequence[Candidate]:
        found = self(context)
        if found is None:
            return []
        end = len(context.text.rstrip())
        return [candidate_of(found, context.step_id)._replace(end=end)]


@register_step_kind("standalone_letter")
@attrs.frozen(kw_only=True)
class StandaloneLetter:
    """A letter standing alone: the whole output or its last line is ``B``, ``(B)``, ``**B.**``.

    With ``anywhere`` the last standalone capital option letter anywhere in the text counts
    (lm-eval's flexible fallback); it can be fooled by an echoed question, so no built-in mode
    uses it. A line that lists an option (``A: text``) is never read as an answer, except, with
    ``own_text`` and ``scope: whole``, a whole output that is a letter followed by that option's
    own text (``B) beta``, ``B: beta``). ``lowercase`` accepts ``b`` for ``B``.
    """

    scope: Scope = "last_line"
    anywhere: bool = False
    own_text: bool = False
    lowercase: bool = True

    def find(self, context: Context) -> Sequence[Candidate]:
        found = self(context)
        if found is None:
            return []
        candidate = candidate_of(found, context.step_id)
        end = len(context.text.rstrip())
        origin: Origin = "labelled" if self.scope == "whole" and not self.anywhere else "evaluation"
        return [candidate._replace(end=end if not self.anywhere else candidate.start + 1, origin=origin)]

    def __call__(self, context: Context) -> Extraction | None:
        if self.own_text and self.scope == "whole":
            whole = _whole_letter(context, lowercase=self.lowercase)
            if whole is not None:
                return whole
        if self.anywhere:
            for match in reversed(list(_STANDALONE_CAPITAL_RE.finditer(context.text))):
                if match.group(1) in context.options:
                    return Extraction(
                        match.group(1), position=match.start(), detail="last standalone letter"
                    )
            return None
        # The folded text: special tokens blanked ("D.<|im_end|>"), full-width letters folded.
        line, position = _scoped(context.folded, self.scope)
        payload = self._lone(line, context)
        if payload is None:
            return None
        if payload.kind == "letter" and payload.letter is not None and self.scope == "last_line":
            before = _line_before(context.folded, position)
            item = _LISTING_RE.match(before)
            if item is not None and ord(payload.letter) == ord(item["L"].upper()) + 1:
                # "B: no mitochondria ...\nC:", "(F) means ...\n(G)": the options listed one a
                # line and cut off at the next letter, not an answer.
                return None
            if item is not None and _restates_option(before, item, context) and item["L"].upper() != payload.letter:
                # "J. Session layer\n\nE. Application layer\n\nJ. Session layer\n\nE.": a loop of
                # restated options, cut off at the next one's letter.
                return None
            previous = self._lone(before, context)
            listed = _listed(
                payload.letter, previous.letter if previous is not None else None, position
            )
            if listed is not None:
                return listed
        return _from_payload(payload, position=position, clean=False, detail="a lone letter")

    def _lone(self, line: str, context: Context) -> Payload | None:
        """The payload of a line that is a lone letter (or a letter list), else ``None``."""
        end = line.rstrip(" \t")[-1:]
        ticked = bool(end) and end in ANSWER_MARKS  # "Option (B) ✔" ("" is in every string)
        line = line.strip(_MARKS_AND_BLANKS)  # "👉 **J**", "✅ B"
        if line.startswith("#### "):
            line = line[5:].lstrip()  # "#### C": the final-answer marker of GSM8K-style outputs
        repeated = _REPEATED_LETTER.fullmatch(line)
        if repeated is not None:
            line = repeated.group(1)  # "H H H H": one letter said again and again is that letter
        if not line or len(line) > 24 or _LISTING_RE.match(line):
            return None
        named = _NAMED_LETTER.fullmatch(line) if ticked else None
        if named is not None:
            # "Option (B) ✔": the letter named as an option and ticked ("**Option A**" alone
            # heads the review of A, cut off)
            line = named.group(1)
        payload = read_payload(
            line, context.options, option_text=False, last_letter=False, lowercase=self.lowercase
        )
        if payload.kind == "hedge" or (
            payload.kind == "letter" and len(line.strip("*_`$()[]{}.:!\\ \t")) == 1
        ):
            return payload
        return None


# One capital repeated, blanks between: a degenerate output's "C C C C".
_REPEATED_LETTER: Final = re.compile(r"([A-Z])(?:\s++\1){1,500}")
_STANDALONE_CAPITAL_RE: Final = re.compile(r"(?<![A-Za-z0-9])([A-Z])(?![A-Za-z0-9])")
_MARKS_AND_BLANKS: Final = ANSWER_MARKS + " \t"
_NAMED_LETTER: Final = re.compile(r"[*_]*+(?i:option|choice)[ \t]++([*_]*+(?:\([A-Z]\)|[A-Z])[*_]*+)[*_.]*+")
_WHOLE_MAX: Final = 300
_WHOLE_LETTER: Final = re.compile(
    r"[\s*_`$\"'(\[]*+(?:(?:option|choice|answer)\s*+[:#]?\s*+)?(?P<opened>[(\[])?(?P<letter>[A-Za-z])"
    r"(?:[.:]|(?P<joint>[)\]]|\s*+[-–—]))?[*_`$\"')\]]*+\s*+(?P<rest>.*)",
    re.IGNORECASE | re.DOTALL,
)


def _whole_letter(context: Context, *, lowercase: bool) -> Extraction | None:
    """The whole output is a letter, alone or followed by its own option's text ("B) beta")."""
    body = context.folded.strip()
    if len(body) > _WHOLE_MAX:
        return None
    match = _WHOLE_LETTER.fullmatch(body)
    if match is None:
        return None
    letter, rest = match["letter"], match["rest"].strip()
    if letter.islower() and not lowercase:
        return None
    if rest and letter in "aI" and not rest[:1].isupper():
        return None  # "a car", "I think": English words
    upper = letter.upper()
    # A capital closed by a bracket or a dash, then one line that repeats its own option's words
    # in another form, is still the letter: "D) -39.02°" for "-39.02o". Any other text after it
    # may say anything of it ("A) I don't know.", "B) wrong", "(a) ... The answer is (D)"), and
    # "A car ..." was never a letter.
    if (
        rest
        and (upper not in context.options or norm_text(rest) != norm_text(context.options[upper]))
        and not (
            match["joint"]
            and not match["opened"]
            and letter.isupper()
            and "\n" not in rest
            and context.features.echoes(rest, upper)
            and not has_readable_letter(rest, context.options)
        )
    ):
        return None
    if upper not in context.options:
        return Extraction(
            None, failure="not_an_option", detail=f"the output is the letter {upper!r}, which is not an option",
            final=False,
        )  # fmt: skip
    how = "the output is a letter and its option's text" if rest else "the output is a letter"
    return Extraction(upper, position=context.text.find(letter), detail=how)


def _tags(value: str | Sequence[str]) -> tuple[str, ...]:
    tags = (value,) if isinstance(value, str) else tuple(value)
    if not tags or not all(
        isinstance(t, str) and re.fullmatch(r"[A-Za-z_][\w\-]*", t) for t in tags
    ):
        raise ParameterError("tags", "tags must be XML-style names such as answer or final_answer")
    return tuple(t.lower() for t in tags)


@register_step_kind("tagged_answer")
@attrs.frozen(kw_only=True)
class TaggedAnswer:
    """The content of the last ``<answer>...</answer>``-style tag pair: a letter or option text.

    ``tags`` are the element names to read (``answer``, ``solution``, ``choice``); the content is
    read as every payload-reading kind reads it: ``payload: lenient`` (the default) understands
    ``<answer>(B)</answer>``, ``<choice>option text</choice>`` and ``<answer>A or B</answer>``
    (ambiguous); ``strict`` only a lone letter.
    """

    tags: tuple[str, ...] = attrs.field(default=("answer",), converter=_tags)
    payload: Leniency = "lenient"

    def find(self, context: Context) -> Sequence[Candidate]:
        """Every tag pair of ``tags`` that names something, in text order."""
        if "</" not in context.text:
            return []
        lowered = context.lowered()
        if len(lowered) != len(context.text):
            return []
        found = []
        for tag in self.tags:
            opener, closer = f"<{tag}>", f"</{tag}>"
            # Each opener pairs with the next closer after it; a closer is looked for once per
            # run of openers before it, so many unclosed openers cost one pass.
            close = -1
            at = lowered.find(opener)
            while at != -1:
                start = at + len(opener)
                if close < start:
                    close = lowered.find(closer, start)
                    if close == -1:
                        # "<answer>D</answer" closing the output: a closer cut short of its ">"
                        close = len(lowered.rstrip()) - len(closer) + 1
                        if close < start or not lowered.startswith(closer[:-1], close):
                            break
                if close - start <= 2000:
                    content = context.text[start:close]
                    payload = read_payload(content, context.options, last_letter=False)
                    if self.payload == "strict" and not (len(content.strip()) == 1 and content.strip().isalpha()):
                        payload = Payload("empty")
                    candidate = payload_candidate(
                        context, payload, start=at, end=min(len(lowered), close + len(closer)), clean=True,
                        detail="a tagged answer",
                    )
                    if candidate is not None:
                        found.append(candidate)
                at = lowered.find(opener, start)
        found.sort(key=lambda c: c.start)
        return found

    def __call__(self, context: Context) -> Extraction | None:
        if "</" not in context.text:
            return None
        lowered = context.lowered()
        if len(lowered) != len(context.text):
            return None
        best: tuple[int, int, int] | None = None
        for tag in self.tags:
            close = lowered.rfind(f"</{tag}>")
            if close == -1:
                continue
            open_at = lowered.rfind(f"<{tag}>", 0, close)
            if open_at == -1:
                continue
            if best is None or open_at > best[0]:
                best = (open_at, open_at + len(tag) + 2, close)
        if best is None:
            return None
        position, start, end = best
        content = context.text[start:end]
        if len(content) > 2000:
            return None
        if self.payload == "strict" and not (len(content.strip()) == 1 and content.strip().isalpha()):
            return None
        return _from_payload(
            read_payload(content, context.options, last_letter=False),
            position=position,
            clean=True,
            detail="a tagged answer",
        )
