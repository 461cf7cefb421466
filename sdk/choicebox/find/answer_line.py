"""The ``answer_line`` step kind: a labelled line such as ``Answer: B`` or ``**Answer:** (B)``."""

from __future__ import annotations

import functools
import re
import unicodedata
from collections import Counter
from collections.abc import Iterator, Sequence

import attrs

from choicebox._errors import ParameterError
from choicebox._letters import match_option_text
from choicebox.find._payload import read_payload

from ._api import (
    Candidate,
    Context,
    Extraction,
    Leniency,
    Which,
    _answer,
    _from_payload,
    candidate_of,
    register_step_kind,
)

# --- answer lines --------------------------------------------------------------------------------


def _labels(value: str | Sequence[str]) -> tuple[str, ...]:
    labels = (value,) if isinstance(value, str) else tuple(value)
    if not labels or not all(isinstance(x, str) and x.strip() for x in labels):
        raise ParameterError("labels", "labels must be non-empty strings")
    return labels


def _check_last_capital(instance: AnswerLine, attribute: attrs.Attribute[bool], value: bool) -> None:
    if value and instance.payload == "strict":
        raise ParameterError(
            "last_capital", "last_capital reads lenient payloads only; drop it or use payload: lenient"
        )


@register_step_kind("answer_line")
@attrs.frozen(kw_only=True)
class AnswerLine:
    """An ``Answer: X`` line: a label, a colon, and a payload to the end of the line.

    ``labels`` are literal phrases (data, never regexes: ``Answer``, ``Final answer``, ``答案``);
    ``markdown`` allows ``**Answer:** B`` and ``__Answer__: B`` decorations; ``word_start``
    requires the label to start a word. The payload is read as every payload-reading kind reads
    it: ``payload: lenient`` (the default) accepts ``(B)``, ``$D$``, ``B) text``, ``option B``,
    an option's text, and calls lists such as ``A/B`` ambiguous; ``payload: strict`` accepts only
    a lone letter or an option's exact text (the legacy ``lenient_answer_colon``).
    ``last_capital`` (lenient only) also takes the payload's last standalone capital letter, as
    nemo-gym's markdown reading does. ``which`` picks the first or last line; ``fallback`` walks
    on past lines whose payload names nothing usable; ``lowercase`` accepts ``b`` for ``B``.
    ``sample_prefix`` also reads the payload after the sample's own ``answer_prefix``
    (nemo-gym 0.7.0's localised closing phrases, e.g. ``答えは``), with the text NFKC-normalised.
    """

    labels: tuple[str, ...] = attrs.field(default=("answer",), converter=_labels)
    markdown: bool = False
    word_start: bool = False
    payload: Leniency = "lenient"
    last_capital: bool = attrs.field(default=False, validator=_check_last_capital)
    which: Which = "last"
    fallback: bool = False
    lowercase: bool = True
    sample_prefix: bool = False
    # One pattern per label, each starting with the label's literal lowercase text, run over
    # lowercased text: a literal prefix lets the regex engine skip ahead at C speed, and a label
    # absent from the text (checked with ``in``) costs no regex run at all. The case-insensitive
    # alternation is for the rare text whose length lowercasing changes.
    _per_label: tuple[tuple[str, re.Pattern[str]], ...] = attrs.field(
        init=False, repr=False, eq=False
    )
    _folded: re.Pattern[str] = attrs.field(init=False, repr=False, eq=False)
    _words: tuple[str, ...] = attrs.field(init=False, repr=False, eq=False)
    _ascii_words: tuple[str, ...] = attrs.field(init=False, repr=False, eq=False)

    def __attrs_post_init__(self) -> None:
        deco = r"[*_]{0,2}" if self.markdown else ""
        # The blanks before the colon are possessive: a label followed by 20,000 blank lines
        # and no colon fails in one pass. The run after the colon gives back only what the
        # payload needs, once: linear.
        after = r"[*_\s]*" if self.markdown else r"\s*"
        tail = rf"{deco}\s*+[:：]{after}([^\n]+)"
        lowered = sorted({label.lower() for label in self.labels}, key=len, reverse=True)
        # Each label is looked for by one of its words, chosen so that labels share words
        # ("answer" for "final answer"): one ``in`` test serves them all.
        counts = Counter(word for label in lowered for word in set(label.split()))
        per_label = tuple(
            (
                max(label.split(), key=lambda w: (len(w) >= 4, counts[w], len(w))),
                re.compile(re.escape(label) + tail),
            )
            for label in lowered
        )
        alternatives = "|".join(re.escape(label) for label in lowered)
        object.__setattr__(self, "_per_label", per_label)
        words = tuple(dict.fromkeys(word for word, _ in per_label))
        object.__setattr__(self, "_words", words)
        object.__setattr__(self, "_ascii_words", tuple(w for w in words if w.isascii()))
        object.__setattr__(self, "_folded", re.compile(rf"(?:{alternatives}){tail}", re.IGNORECASE))

    def _starts_word(self, text: str, position: int) -> bool:
        before = position - 1
        if self.markdown:
            while before >= 0 and position - before <= 2 and text[before] in "*_":
                before -= 1
        return before < 0 or not text[before].isalnum()

    def _scan(self, context: Context, start: int, stop: int) -> list[tuple[int, int, str]]:
        """(position, payload end, payload) of every labelled line starting in ``text[start:stop]``."""
        text = context.text
        # Reach past ``stop`` so a label near the end can take its payload from the next lines.
        reach = text.find("\n", min(len(text), stop + 256))
        end = len(text) if reach == -1 else reach
        whole = start == 0 and end == len(text)
        chunk = text if whole else text[start:end]
        lowered = context.lowered() if whole else chunk.lower()
        if len(lowered) == len(chunk):
            # Words in another script cannot occur in ASCII text: skip their tests there.
            words = self._ascii_words if lowered.isascii() else self._words
            present = dict.fromkeys(self._words, False)
            for word in words:
                present[word] = context.contains(word) if whole else word in lowered
            matches = [
                match
                for word, pattern in self._per_label
                if present[word]
                for match in pattern.finditer(lowered)
            ]
            if len(self._per_label) > 1:
                matches.sort(key=lambda m: m.start())
        else:
            matches = list(self._folded.finditer(chunk))
        found: list[tuple[int, int, str]] = []
        taken = -1
        for match in matches:
            position = start + match.start()
            if position >= stop:
                break
            if match.start() < taken:
                continue  # a shorter label inside a longer one's match ("answer" in "final answer")
            if self.word_start and not self._starts_word(text, position):
                continue
            taken = match.end(1)
            found.append((position, start + match.end(1), chunk[match.start(1) : match.end(1)]))
        return found

    def _payloads(self, context: Context, prefix: str | None) -> Iterator[tuple[int, int, str]]:
        """Labelled payloads in reading order: from the end backwards when ``which`` is last.

        Scanning backwards in growing chunks of whole lines makes the common case (the answer
        near the end) cost the same for a 2 KB and a 1 MB output, and the worst case linear.
        """
        text = context.text
        if prefix:
            found = self._scan(context, 0, len(text))
            found += [(m.start(), m.end(1), m.group(1)) for m in _prefix_regex(prefix).finditer(text)]
            found.sort()
            yield from (reversed(found) if self.which == "last" else found)
            return
        if self.which == "first":
            yield from self._scan(context, 0, len(text))
            return
        stop, size = len(text), 4096
        while stop > 0:
            start = max(0, stop - size)
            if start > 0:
                start = text.rfind("\n", 0, start) + 1
            yield from reversed(self._scan(context, start, stop))
            stop, size = start, size * 4

    def _prefixed(self, context: Context) -> tuple[Context, str | None]:
        prefix = context.answer_prefix if self.sample_prefix else None
        if prefix:
            context = Context(
                unicodedata.normalize("NFKC", context.text),
                context.options,
                regex_timeout=context.regex_timeout,
            )
        return context, prefix

    def _read(self, payload: str, context: Context, position: int) -> Extraction | None:
        if self.payload == "strict":
            return self._strict(payload, context, position)
        return _from_payload(
            read_payload(
                payload,
                context.options,
                last_letter=self.last_capital,
                lowercase=self.lowercase,
            ),
            position=position,
            clean=True,
            detail="answer line",
        )

    def __call__(self, context: Context) -> Extraction | None:
        context, prefix = self._prefixed(context)
        kept: Extraction | None = None
        for position, _, payload in self._payloads(context, prefix):
            found = self._read(payload, context, position)
            if not self.fallback:
                return found
            if found is None:
                continue
            if found.letter is not None:
                return found
            kept = kept or attrs.evolve(found, final=False)
        return kept

    def find(self, context: Context) -> Sequence[Candidate]:
        """Every labelled line that names something, in text order."""
        step = context.step_id
        read, prefix = self._prefixed(context)
        lines = self._scan(read, 0, len(read.text)) if not prefix else sorted(self._payloads(read, prefix))
        found = []
        for position, end, payload in lines:
            extraction = self._read(payload, read, position)
            if extraction is not None:
                found.append(candidate_of(extraction, step)._replace(end=end))
        return found

    def _strict(self, payload: str, context: Context, position: int) -> Extraction | None:
        candidate = payload.strip()
        while candidate.startswith("\\text{") and candidate.endswith("}"):
            candidate = candidate[6:-1].strip()
        if len(candidate) == 1 and candidate.isalpha():
            if candidate.islower() and not self.lowercase:
                return None
            return _answer(
                context, candidate.upper(), position=position, clean=True, detail="answer line"
            )
        letter = match_option_text(candidate, context.options, punctuation=False, numeric=False)
        if letter is not None:
            return Extraction(
                letter, position=position, clean=True, detail="answer line (option text)"
            )
        return None


@functools.lru_cache(maxsize=256)
def _prefix_regex(prefix: str) -> re.Pattern[str]:
    # The prefix is row data: escaped, so it is matched literally and can never be a pattern.
    # The optional colon's blanks are possessive so a prefix followed only by blank lines fails
    # in one pass (``\s*[:：]?\s*`` tries every split of them).
    literal = re.escape(unicodedata.normalize("NFKC", prefix).strip())
    return re.compile(rf"{literal}(?:\s*+[:：])?\s*+([^\n]+)", re.IGNORECASE)
