"""Reading an answer's payload where it stands in the text: after "the answer is", "Answer:",
"I choose", inside a box.

``read_at(text, position, limit)`` reads what follows ``position`` and says what it is: one
letter, several letters (a hedge), a letter withdrawn ("(D) is incorrect"), "no option is right",
a value ("approximately 605 °F"), or nothing readable. It reports where the payload ends, so a
resolution can see what stands between two statements. This is the lenient reading of the finder
step kinds. ``read_payload(payload, options)`` reads a payload that stands alone (what an
``Answer:`` line, a box or a regex group holds), the strict reading NeMo Gym's modes keep. Both say
what they read in one vocabulary, ``PayloadKind``.

Every pattern here runs from a given position up to ``limit`` (at most a few hundred characters
past it), so a reading costs a bounded amount whatever the text around it holds.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Final, Literal, NamedTuple

import attrs

from choicebox._letters import ambiguous_letters, localise_letters, match_option_text

from ._citation import CITED_WORDS, OptionWords, citation_after, citation_before, text_at

__all__ = [
    "COPULA_END",
    "LETTER_SEPARATORS",
    "Payload",
    "PayloadKind",
    "PayloadReading",
    "fills_line",
    "in_listing",
    "letter_token",
    "lists_beside",
    "read_at",
    "read_payload",
]

# What a payload says, for both readers: one letter; several (a hedge); a letter withdrawn
# ("(D) is incorrect"); that no option is right ("none of the above"); a value; a letter that is
# no option; nothing readable.
PayloadKind = Literal["letter", "hedge", "retract", "none", "value", "not_an_option", "empty"]

# The longest payload looked at after a label: a letter stated further away is not its payload.
MAX_PAYLOAD: Final = 400


# --- an isolated payload: read_payload ---------------------------------------------------------


@attrs.frozen
class Payload:
    """What an isolated payload says: one letter, several (a hedge), a letter that is no option,
    or nothing readable (``empty``)."""

    kind: Literal["letter", "hedge", "not_an_option", "empty"]
    letter: str | None = None
    letters: tuple[str, ...] = ()
    how: str = ""


_EMPTY: Final = Payload("empty")
_EDGE_CHARS: Final = "*_`'\" \t\n\r.,;:!?"
# One wrapper around the whole payload. "$...$" is matched as one "$" on each side and the inner
# "$"s are stripped after (``_unwrap``): ``\$+(.*?)\$+`` gives the same inner text but tries
# every split of a run of "$", which is cubic on "$" * 2000 + "x".
_WRAPPER_RE: Final = re.compile(
    r"^(?:\\(?:text|textbf|mathrm|mathbf|textit|boxed|fbox)\s*+\{(.*)\}|\$(.*)\$|\\\((.*)\\\)|\((.*)\)|\[(.*)\]|\{(.*)\})$",
    re.DOTALL,
)
_DOLLAR_GROUP: Final = 2
_OPTION_WORD_RE: Final = re.compile(
    r"^(?:option|choice|letter|answer)\s*+(?:[:#]\s*+)?\(?([A-Za-z])\)?(?![A-Za-z0-9])",
    re.IGNORECASE,
)
_LEADING_RE: Final = re.compile(r"^\(?([A-Za-z])(?:\)|(?![A-Za-z0-9]))")
_WORD_AFTER_RE: Final = re.compile(r"\s+([a-z']+)")
# "A" and "I" are also English words: "A reasonable choice is C", "I think it's B". A leading
# A or I followed by a lowercase word is that word, unless the word says the letter is the answer.
_ANSWER_VERBS: Final = frozenset(
    {"is", "was", "because", "since", "as", "seems", "appears", "fits", "matches", "must",
     "should", "would", "could", "can", "remains", "holds"}
)  # fmt: skip
_LAST_UPPER_RE: Final = re.compile(r"\b([A-Z])\b")


def _unwrap(payload: str) -> str:
    text = payload.strip(_EDGE_CHARS)
    for _ in range(8):  # wrappers nest a few levels at most; the bound keeps this linear
        match = _WRAPPER_RE.match(text)
        if match is None:
            break
        inner = next(g for g in match.groups() if g is not None)
        if match.group(_DOLLAR_GROUP) is not None:
            inner = inner.strip("$")
        text = inner.strip(_EDGE_CHARS)
    return text


def _is_english_word(text: str, letter: str) -> bool:
    if letter not in "AaIi":
        return False
    after = _WORD_AFTER_RE.match(text, 1)
    return after is not None and after.group(1) not in _ANSWER_VERBS


def read_payload(
    payload: str,
    options: Mapping[str, str],
    *,
    option_text: bool = True,
    last_letter: bool = True,
    lowercase: bool = True,
) -> Payload:
    """Read the letter a short answer payload (``B``, ``(b)``, ``$D$``, ``B) text``) names.

    ``options`` maps the allowed letters to their texts. ``option_text`` also accepts a payload
    that is exactly one option's text; ``last_letter`` falls back to the last standalone capital
    letter; ``lowercase`` accepts ``b`` for ``B``.
    """
    localised = localise_letters(payload)
    text = _unwrap(localised)
    if not text:
        return _EMPTY
    # Checked before unwrapping too: "(A) or (B)" unwraps to "A) or (B".
    listed = ambiguous_letters(text, options) or ambiguous_letters(localised, options)
    if listed:
        return Payload("hedge", letters=listed, how="several letters listed")
    candidate: str | None = None
    how = ""
    if len(text) == 1 and text.isalpha():
        candidate, how = text, "a lone letter"
    elif (match := _OPTION_WORD_RE.match(text)) is not None:
        candidate, how = match.group(1), "an 'option X' phrase"
    elif (match := _LEADING_RE.match(text)) is not None and not _is_english_word(
        text, match.group(1)
    ):
        candidate, how = match.group(1), "a leading letter"
    if candidate is not None:
        if candidate.islower() and not lowercase:
            return Payload("empty", how="a lowercase letter")
        letter = candidate.upper()
        if letter in options:
            return Payload("letter", letter=letter, how=how)
        if candidate.isupper() or len(text) == 1:
            return Payload("not_an_option", letter=letter, how=how)
    if option_text:
        matched = match_option_text(text, options)
        if matched is not None:
            return Payload("letter", letter=matched, how="the text of an option")
    if last_letter:
        found = [m.group(1) for m in _LAST_UPPER_RE.finditer(text)]
        if found:
            letter = found[-1]
            if letter in options:
                return Payload("letter", letter=letter, how="the last standalone capital letter")
            return Payload("not_an_option", letter=letter, how="the last standalone capital letter")
    return _EMPTY


class PayloadReading(NamedTuple):
    """What a payload says (see the module docstring) and where it ends."""

    kind: PayloadKind
    letters: tuple[str, ...]
    end: int
    value: str = ""
    part: bool = False  # "(F) for (a) and (J) for (b)": letters scoped to parts
    tail: str = ""  # "B. They possess an exoskeleton": the text after "B." on the same line
    cited: bool = False  # the letter with its own option's text: "D. Vitamin B12 deficiency"
    layout: str = "same line"  # where the payload stood: "same line", "next line", "list item"

    @property
    def form(self) -> str:
        """What the payload was, in words (``choicebox explain``)."""
        if self.kind == "letter":
            return "letter with its option's text" if self.cited else "letter"
        return _FORMS.get(self.kind, self.kind)


_FORMS: Final = {"hedge": "several letters", "retract": "a letter withdrawn", "none": "no option"}


# Marks that point at or tick an answer, decoration around a payload: "👉 **J**", "✅ B",
# "Option (B) ✔" (with the emoji variation selector that often follows them).
ANSWER_MARKS: Final = "✅✔✓☑👉➡▶►\ufe0f"

# Decoration that may stand before the letter: blanks, markdown, quotes, a colon, "=", "$", the
# prompt's "$LETTER" placeholder echoed, LaTeX wrappers, the words option/choice/letter/answer,
# and adverbs ("therefore", "approximately", "closest to").
_PRE: Final = re.compile(
    rf"(?:[ \t\r*_`\"'“”‘’:：=>#~…{ANSWER_MARKS}]|\.{{2,}}|\[(?=\[)|\$++[ \t]*+(?:LETTER\b[ \t]*+\$*+[ \t]*+[:=]?)?|\\[(\[]|"
    # an inline HTML tag: "Final answer: <b>A</b>"
    r"<(?:b|strong|i|em|u|mark|code|span)>|"
    r"\\(?:text|textbf|mathbf|mathrm|boxed|fbox|bf)\s*+\{|\{|"
    # The word for an option before its letter, in the languages the modes read: "Option E",
    # "la letra E", "la lettre E", "a alternativa E", "opsi E", "вариант E", "الخيار C".
    r"\b(?:the\s++)?(?:option|choice|letter|answer|letra|lettre|lettera|opci[oó]n|op[cç][aã]o|alternativa|"
    r"opsi|pilihan|вариант|seçenek|şık|phương\s++án|lựa\s++chọn|opcja|optie|opzione|الخيار|الاختيار|אפשרות|"
    r"varianta|variantă|opțiunea|proposition|wariant|možnost|alternatief|vaihtoehto)"
    r"(?:\s++(?:is|number))?\b\s*+[:#]?|"
    r"\b(?:therefore|thus|then|likely|probably|clearly|definitely|indeed|still|now|simply|"
    r"actually|correctly|most\s++likely|approximately|about|around|roughly|nearly|either|"
    r"(?:closest|close|nearest)(?:\s++to)?|given\s++by|equal\s++to|that)\b)*+",
    re.IGNORECASE,
)
# One letter token: (B) [B] {B} B. B) **B** b); groups o and c are its brackets.
_TOKEN: Final = re.compile(
    # (a closing single quote of a quoted value may follow: {'prediction': 'C', ...}; "A's" is a word)
    r"(?P<o>[(\[{])?[ \t]*+(?P<L>[A-Za-z])[ \t]*(?P<c>[)\]}])?(?![A-Za-z0-9]|['’](?![,}\]]))"
)
# What separates listed letters: "(A) or (B)", "A/B", "B, E, F", "A and C", "A | B". One list,
# for letters read after a cue (``_SEP``) and before a verdict (``verdicts.OptionVerdict``).
# "or" and "and" in the languages the modes read answers in ("Ответ: B или I", "Đáp án: F hoặc G",
# "Respuesta: B o C", "答案：B或C"): between two letters they make a hedge too. Words of scripts
# whose marks are no word characters (Devanagari, Arabic) stand between blanks.
_OTHER_LANGUAGE_SEPARATORS: Final = (
    # The one-letter words lowercase only: an "E" between letters is option E.
    r"\b(?-i:o|u|y|e)\b|\b(?:ou|et|oder|und|или|либо|и|hoặc|và|veya|ve|atau|dan)\b"
    r"|(?<!\S)(?:या|और|أو|و)(?!\S)|或者|或是|或|和|与|及|以及|还是|、|または|か|と|や|및|또는|혹은|이나|와|과"
)
LETTER_SEPARATORS: Final = (
    r",|/|&|;|\+|\||\bor\b|\band(?:/or)?\b|\bvs\.?|\bversus\b|\bnor\b|" + _OTHER_LANGUAGE_SEPARATORS
)
_SEP: Final = re.compile(
    rf"[*_$\s]*+(?:{LETTER_SEPARATORS})[*_$\s]*+"
    r"(?:(?:or|and|also|maybe|possibly|perhaps|either)\b[*_$\s]*+)?(?:options?\s++|choices?\s++)?"
    r"(?:(?:la|el|le|il|lo)[ \t]++(?=[A-Z]\b))?",  # "la B o la C"
    re.IGNORECASE,
)
# After a last listed "I": the list ends ("A or I.", a quoted JSON value "A or I"}) or goes on.
_LIST_GOES_ON: Final = re.compile(r"[*_$ \t\"'”’]*+(?:[.,;:!?)\]}/|&+]|\n|\Z|(?:or|and|nor)\b)", re.IGNORECASE)
_JUXTAPOSED: Final = re.compile(r"[ \t]*+(?=[(\[])")
_JUXTAPOSED_CLOSED: Final = re.compile(r"[ \t]++(?=[A-Za-z][)\]])")
_LETTERS_IN_BRACKETS: Final = re.compile(r"\(([A-Z]{2,6})\)")
# A bracketed aside after a letter, before another: "B (dual therapy) or D (angiography)".
_HEDGED_ASIDE: Final = re.compile(
    r"[*_]*+[ \t]*+\([ \t]*+(?i:or|maybe|possibly|perhaps|probably|alternatively|else)\b[^()\n]{0,24}?"
    r"(?<![\w'’])[(\[]?(?P<L>[A-Z])[)\]]?(?![\w'’])[^()\n]{0,24}\)"
)
_ASIDE: Final = re.compile(r"[ \t]*+\([^()\n]{1,120}\)(?=[ \t,]*+(?:or|veya|oder|ou|o|atau|hoặc|или|либо)[ \t])")
# A separator that is a word ("or", "veya"), after which a capital followed by a word is a letter
# still: "B veya A olabilir" (the article "A" follows a comma: "B, A common slip is ...").
_WORD_SEPARATOR: Final = re.compile(r"[^\W\d_]")
_CAPITAL_THEN_WORD: Final = re.compile(r"[*_]*+([A-HJ-Z])[*_]*+(?=[ \t]++[^\W\d_])")
_WORD_AFTER: Final = re.compile(r"[ \t]++([a-z][a-z']*+)")
# A word after "A" or "I" that says the letter is the answer ("A is correct", "I because ...");
# read in place, "A and" / "A or" / "A with" also start a statement about the letter.
_LETTER_VERBS: Final = _ANSWER_VERBS | {"and", "or", "with"}
# Modal verbs after "I" that make it the pronoun unless "be" follows: "I would need more data".
_MODALS: Final = frozenset({"would", "could", "can", "must", "should"})
_BE_NEXT: Final = re.compile(r"[ \t]++(?:not[ \t]++)?be\b")
_RETRACT_AFTER: Final = re.compile(
    r"[*_\s)]*+(?:is|was|are|seems|would\s++be)\s++(?:incorrect|wrong|false|invalid|a\s++mistake|"
    r"not\b(?!\s++only)|eliminated|ruled\s++out|unlikely)",
    re.IGNORECASE,
)
_NONE_PAYLOAD: Final = re.compile(
    r"(?:not\s++(?:among|in|listed|one\s++of|present|provided|given|available|possible|determinable)|"
    r"none\b|no\s++(?:correct|valid|right|option|answer|such)|neither\b|cannot|can['’]t|unknown|"
    r"undetermin|indetermin|incomplete|n/a\b|impossible|unclear)",
    re.IGNORECASE,
)
_NOT_LETTER: Final = re.compile(r"not\s++\(?([A-Z])\)?(?![\w'’])")
# (not the dots of "i.e." and "e.g.": "number 3, i.e. 0.2" is one value)
_NOT_ABBREVIATION: Final = r"(?<!\bi)(?<!\bi\.e)(?<!\be)(?<!\be\.g)"
_VALUE_END: Final = re.compile(
    rf"(?<!\d){_NOT_ABBREVIATION}\.(?!\d)|{_NOT_ABBREVIATION}\.(?=\s)|[\n;。！？]|,\s++(?:which|so|as|because|since|but)\b"
    # a JSON string's closing quote: {"answer": "1.26e5 J", "work": ...}
    r'|"(?=[ \t]*+(?:[,}\]]|$))'
)
# The copula that closes a Korean or Japanese answer sentence after its value ("정답은 대동법입니다",
# "答えは東京です"), with the emphasis and marks around it.
COPULA_END: Final = re.compile(r"[*_$\"'”’ \t]*+(?:입니다|이에요|예요|이다|です|である)[.!。 \t]*+$")
# ... and Turkish's suffix after an apostrophe, which ASCII values have too ("Doğru cevap 2,45'tir").
_SUFFIXCOPULA_END: Final = re.compile(r"[*_$\"”]*+['’](?:d|t)[iıuü]r[.! \t]*+$")
_PLACEHOLDER: Final = re.compile(r"[\s.…(\[{]*+|\(?x\)?|\.\.\..*", re.IGNORECASE | re.DOTALL)
_FOR_PART: Final = re.compile(
    r"[ \t]++(?:for|in|to)[ \t]++(?:the[ \t]++)?(?:part[ \t]*+)?"
    r"(?:\(?[a-h1-9]\)|(?:first|second|third|1st|2nd)[ \t]++(?:part|question|case))",
    re.IGNORECASE,
)
# "B. Bent", "B) They possess an exoskeleton": option-like text filling the rest of the line.
_TAIL: Final = re.compile(r"[.):][ \t]+((?:[^\n.]|\.(?![ \t\n])){1,160}?)(?=\.?[ \t]*+(?:\n|$))")
# A letter marked as an option inside a line: "A. x", "(B) y", "C) z", after a blank or a sign.
_OPTION_MARK: Final = re.compile(r"(?:^|(?<=[\s;,|*]))\(?([A-Z])(?=[.):])")
# What may stand between two citations of a restated list on one line: "A. x; B. y", "A. x, or B. y".
_CITATION_BESIDE: Final = re.compile(r"[ \t.]*+[,;|/]?[ \t]*+(?:(?:and|or)[ \t]++)?")
_LISTING_START: Final = re.compile(r"[*_]*+(?:(?i:option|choice)[ \t]++)?\(?(?P<L>[A-Za-z])[.):][*_]*+[ \t]++\S")
# A list item's bullet: "- ", "* ", "+ ", "• " ("**D**" is emphasis, not a bullet).
_BULLET: Final = re.compile(r"[-+•*][ \t]++")
_FILLS_LINE: Final = re.compile(rf"[\s*_`'\".!)\]{ANSWER_MARKS}]*+$")
# What excludes another option right after a payload: "(B), not (D)", "B rather than D",
# "Operant conditioning, and not vitamin B12 deficiency". What follows it is a mention (rule 6).
CONTRAST: Final = re.compile(
    r"[*_$)\]]*+(?:,[ \t]*+(?:(?:and|but)[ \t]++)?not|,?[ \t]++(?:(?:and|but)[ \t]++)?not|"
    r",?[ \t]++(?:rather[ \t]++than|instead[ \t]++of|as[ \t]++opposed[ \t]++to))(?=[ \t(*])",
    re.IGNORECASE,
)
# The words a contrast after a bare letter opens with ("A rather than C", "I instead of J").
_CONTRAST_WORDS: Final = frozenset({"not", "rather", "instead", "but"})
_LOWER_END: Final = re.compile(r"[*_$`'\"]*+[.!]?[ \t]*+(?:\n|$)")
# Math after a bare letter ("k = -1", "x^2", "D*2", "T_1", "U.S.", "A's"); "**D**" and "_D_" are
# markdown emphasis, not math: "*" and "_" count only before an operand.
_MATHY_AFTER: Final = re.compile(
    # "A*B", "A_1", "A *x" are algebra; "A **Answer:**" after a blank is markdown opening bold.
    r"[ \t]*+(?:[=<>^+/≈≤≥]|(?<![ \t])[*_]++(?=[A-Za-z0-9{(\\])|[*_](?![*_])(?=[A-Za-z0-9{(\\])"
    r"|-[A-Za-z0-9]|\.[A-Za-z]|['’]s\b"
    r"|\$?\s*+\\(?:cdot|times|in|le|ge)\b)"
)
_ROMAN_AFTER: Final = re.compile(r"[ \t]*+(?:,|and|&|or)[ \t]*+I{1,3}V?\b|[ \t]++only\b")
# What follows a part label: its value ("(a) 1/2", "(a) Paris") or its own answer letter ("(a) E,
# (b) E, (c) J": one answer per part, not option A).
_PART_LABEL_AFTER: Final = re.compile(r"[ \t]++(?:[-+$]?\d|[A-Z][a-z]|\(?[A-Z]\)?(?![\w'’]))")
BRACKETED_LETTER: Final = re.compile(r"(?<![\w\\^_)\]])\(([A-Z])\)")
# The ASCII characters a match of each pattern can start with (a pattern is run only when the
# character at the position is one of them, or not ASCII): a failed ``match`` call costs more
# than the test. Whitespace counts by ``str.isspace``, which is what ``\s`` matches.
_SEP_STARTS: Final = "*_$,/&;+|oOaAvVnNuUyYeEhHdD"
_RETRACT_STARTS: Final = "*_)iIwWaAsS"
_MATHY_STARTS: Final = "=<>^+/*_-.'$\\"


def _opens_words(text: str, token: tuple[int, str, bool, bool], n: int, citations: OptionWords | None) -> bool:
    """A bare capital no option has, opening words: "S phase (the synthesis phase)" is a value."""
    end, letter, opened, closed = token
    bare = citations is not None and letter not in citations and not (opened or closed)
    return bare and _WORD_AFTER.match(text, end, n) is not None


def _bold_letter_cited(text: str, p: int, n: int, citations: OptionWords) -> PayloadReading | None:
    """"**D**(400 kPa)": a bold letter, its option's text in brackets (not a power, "D**(...)")."""
    letter, end = text[p : p + 1], p + 1
    while end < n and text[end] in "*_":
        end += 1
    run = text[p + 1 : end]
    if letter not in citations or not run or text[max(0, p - len(run)) : p] != run or text[end : end + 1] != "(":
        return None
    cited = citation_after(text, p + 1, letter, citations)
    return None if cited == -1 else PayloadReading("letter", (letter,), cited, cited=True)


def _may_start(char: str, starts: str) -> bool:
    """Whether a match of a pattern whose ASCII first characters are ``starts`` (and blanks)
    can start at ``char``."""
    return char in starts or char.isspace() or not char.isascii()


_OPEN_QUOTES: Final = ('"', "“")
# The closing quote of a JSON string value and what may follow it: '"h", ...', '"h"}', '"h"' alone.
_QUOTED_END: Final = re.compile(r'["”][ \t]*+(?:[,}\]\n]|$)')


def letter_token(text: str, position: int, limit: int, *, strict_end: bool) -> tuple[int, str, bool, bool] | None:
    """A letter token at ``position``: (its end, the letter uppercased, opened, closed), or None.

    A lowercase letter needs brackets or the end of its line ("Answer: b"), or ``strict_end``
    false; "a car", "I think", "A reasonable choice" are English words; "k = -1", "U.S.",
    "Y-linked", "A's" are not letters; "I and II", "I only" are roman numerals; "(a) 1/2" is a
    part label.
    """
    match = _TOKEN.match(text, position, limit)
    if match is None:
        return None
    letter = match["L"]
    opened, closed = match["o"] is not None, match["c"] is not None
    after = match.end()
    if (
        not (opened or closed)
        and text[position - 1 : position] in _OPEN_QUOTES
        and _QUOTED_END.match(text, after, limit) is not None
    ):
        # A letter in double quotes ending a JSON value: {"answer": "h"} ('"c" stands for the
        # speed of light' is a letter talked about).
        return after, letter.upper(), False, False
    if not (opened or closed):
        word = _WORD_AFTER.match(text, after, limit) if letter in "AaIi" or letter.islower() else None
        if (
            word is not None
            and word.group(1) not in _LETTER_VERBS
            # "A rather than C" is no article (the test of the word first: "I think" is common)
            and not (word.group(1) in _CONTRAST_WORDS and CONTRAST.match(text, after, limit))
        ):
            return None
        if letter == "I" and word is not None and word.group(1) in _MODALS and not _BE_NEXT.match(text, word.end(), limit):
            return None  # "I would not trust any of these": the pronoun ("I would be correct" judges I)
        if (
            after < limit
            and _may_start(text[after], _MATHY_STARTS)
            and not text.startswith("</", after)  # "<b>A</b>": a closing tag, not "A < B"
            and _MATHY_AFTER.match(text, after, limit)
        ):
            return None
        if letter.islower() and (strict_end or not _LOWER_END.match(text, after, limit)):
            return None
    elif letter.islower() and _PART_LABEL_AFTER.match(text, after, limit):
        return None
    if letter == "I" and _ROMAN_AFTER.match(text, after, limit):
        return None
    return after, letter.upper(), opened, closed


def read_at(
    text: str,
    position: int,
    limit: int | None = None,
    *,
    lowercase: bool = True,
    citations: OptionWords | None = None,
) -> PayloadReading:
    """Read the payload starting at ``position`` (after a label, a phrase or a box opener).

    ``limit`` caps how far the reading may look (default ``MAX_PAYLOAD`` characters).
    ``lowercase`` false refuses a lowercase letter that only ends its line. With the sample's
    ``citations`` (``SampleFeatures.citations``), an option cited by letter and text ("D. Vitamin
    B12 deficiency", "Vitamin B12 deficiency (D)") reads as that letter, ending after the citation.
    """
    n = min(len(text), position + MAX_PAYLOAD) if limit is None else min(limit, len(text))
    p = _PRE.match(text, position, n).end()  # type: ignore[union-attr]  # *+ always matches
    if p >= n or text[p] != "\n":
        reading = _read_from(text, p, n, lowercase=lowercase, citations=citations)
        if reading.cited:
            # "Answer: A. text" filling its line, then "B. text" on the next: the options restated.
            # The line's end is looked for no further than a payload reaches, so that a text of
            # many citations on one long line is not scanned again for each.
            eol = text.find("\n", reading.end, reading.end + MAX_PAYLOAD)
            line_end = min(len(text), reading.end + MAX_PAYLOAD) if eol == -1 else eol
            if fills_line(text, reading.end, line_end) and _lists_next(
                text, line_end, len(text), reading.letters[0], bullets=False, citations=citations
            ):
                return PayloadReading("empty", (), p)
            # "the answer is (B) text and (C) text", "A. text; B. text": another option cited
            # right after this one makes the two a hedge (rule 4), not an answer.
            beside = _CITATION_BESIDE.match(text, reading.end, line_end)
            if beside is not None and _listing_line(text, beside.end(), "", citations):
                other = _LISTING_START.match(text, beside.end(), line_end)
                assert other is not None  # _listing_line matched it
                letters = tuple(dict.fromkeys((reading.letters[0], other["L"].upper())))
                return PayloadReading("hedge", letters, reading.end)
        return reading
    # The next-line layout: "Final answer:\nD", "the answer is:\n\nD. Vitamin B12 deficiency".
    # The payload may sit on the next non-empty line; a long line counts only as letters (prose
    # after a colon is no payload), and a line that starts an option listing followed by another
    # listed line restates the options ("The answer is ...\nA. 0\nB. 30").
    q = p
    while q < n and text[q] in " \t\r\n":
        q += 1
    if q - p > 12:
        return PayloadReading("empty", (), p)
    bullet = _BULLET.match(text, q, n)
    if bullet is not None:  # the list-item layout: "The correct option is:\n- **D. text**"
        q = bullet.end()
    eol = text.find("\n", q, n)
    line_end = n if eol == -1 else eol
    start = _LISTING_START.match(text, q, n)
    listing = start is not None
    if (listing or bullet is not None) and _lists_next(
        text, line_end, n, start["L"] if start else "", bullets=bullet is not None, citations=citations
    ):
        return PayloadReading("empty", (), p)
    p = _PRE.match(text, q, line_end).end()  # type: ignore[union-attr]
    reading = _read_from(text, p, n, lowercase=lowercase, citations=citations)._replace(
        layout="list item" if bullet is not None else "next line"
    )
    # "B rather than D", "<option B's text>, not <option D's>": the payload, then what it excludes.
    contrasted = CONTRAST.match(text, reading.end, line_end) is not None and (
        reading.kind == "letter" or (reading.kind == "value" and _option_fills(text, p, reading.end, citations))
    )
    if listing and not reading.cited and not contrasted:
        return PayloadReading("empty", (), p)  # "E. 80" under "The answer is": a line of another listing
    if reading.kind in ("value", "empty") and (whole := _option_line(text, p, line_end, citations)):
        # "So the correct answer is:\n<option I's text>": an option's whole text on the line, the
        # value the policy matches with the options (rule 5), even past the value's first stop.
        return PayloadReading("value", (), line_end, value=whole, layout=reading.layout)
    if line_end - q > 30 and reading.kind != "none" and not contrasted and (
        reading.kind not in ("letter", "hedge")
        or not (_FILLS_LINE.match(text, reading.end, line_end) or _cites_long_option(reading, citations))
    ):
        # A long line is a payload only when the letters fill it (a long option's citation reads
        # its opening words, and the option's text goes on), or when it says no option is
        # ("## Final Answer\nNone of the provided options matches the computed value").
        return PayloadReading("empty", (), p)
    return reading


def _option_line(text: str, p: int, line_end: int, citations: OptionWords | None) -> str:
    """The line from ``p`` when an option's text fills it (past closing marks), else ""."""
    if citations is None:
        return ""
    for words in citations.values():
        end = text_at(text, p, words, line_end)
        if end != -1 and (_FILLS_LINE.match(text, end, line_end) or len(words) >= CITED_WORDS):
            return text[p:line_end].strip()
    return ""


def _cites_long_option(reading: PayloadReading, citations: OptionWords | None) -> bool:
    """The reading cites an option by its opening ``CITED_WORDS`` words, all of a longer text."""
    if not reading.cited or citations is None:
        return False
    return len(citations.get(reading.letters[0], ())) >= CITED_WORDS


def fills_line(text: str, end: int, line_end: int) -> bool:
    """Only closing marks and markdown stand between ``end`` and ``line_end``."""
    return _FILLS_LINE.match(text, end, line_end) is not None


def lists_beside(
    text: str, line_start: int, line_end: int, letter: str, citations: OptionWords | None, *, any_letter: bool = False
) -> bool:
    """The line before or after the line ``text[line_start:line_end]`` (which gives ``letter``)
    lists another option: the letters are a listing, not an answer (LABELLING rule 6). A listed
    line gives the next letter or cites its own option; with ``any_letter``, any lettered line
    ("I. If a party ...") counts."""
    listed = "" if any_letter else letter
    if _lists_next(text, line_end, len(text), listed, bullets=False, citations=citations, any_letter=any_letter):
        return True
    end = line_start
    while end > 0 and text[end - 1] in " \t\r\n":
        end -= 1
    if end == 0:
        return False
    q = text.rfind("\n", 0, end) + 1
    while q < end and text[q] in " \t":
        q += 1
    bullet = _BULLET.match(text, q, end)
    return _listing_line(text, bullet.end() if bullet else q, listed, citations, any_letter=any_letter)


def in_listing(text: str, position: int, citations: OptionWords) -> bool:
    """The line holding ``position`` restates the options, so that no letter on it is a choice
    (LABELLING rule 6): a lettered line with another lettered line before or after it, or a line
    that cites three different options by letter and text ("A. x; B. y; C. z"). The answer is
    the line's: a caller asking for many positions asks once per line (the scan is the line's)."""
    line_start = text.rfind("\n", 0, position) + 1
    eol = text.find("\n", position)
    line_end = len(text) if eol == -1 else eol
    cited = {
        m.group(1)
        for m in _OPTION_MARK.finditer(text, line_start, line_end)
        if citation_after(text, m.end(1), m.group(1), citations) != -1
    }
    if len(cited) >= 3:
        return True
    q = line_start
    while q < position and text[q] in " \t":
        q += 1
    bullet = _BULLET.match(text, q, position)
    if not _listing_line(text, bullet.end() if bullet else q, "", None, any_letter=True):
        return False
    return lists_beside(text, line_start, line_end, "", None, any_letter=True)


def _listing_line(text: str, q: int, letter: str, citations: OptionWords | None, *, any_letter: bool = False) -> bool:
    """The line at ``q`` is a listed option: the letter after ``letter``, one citing its own
    option, or (``any_letter``) any lettered line."""
    start = _LISTING_START.match(text, q, len(text))
    if start is None:
        return False
    if any_letter:
        # "Q: Which planet ...?" opens another question; it lists no option.
        return start["L"] not in "Qq" or text[start.end("L") : start.end("L") + 1] not in ":."
    following = start["L"].upper()
    if letter and abs(ord(following) - ord(letter.upper())) == 1:
        return True
    mark = start.start("L") + 1 + (text[start.start("L") - 1 : start.start("L")] == "(")
    return citations is not None and citation_after(text, mark, following, citations) != -1


def _lists_next(
    text: str, line_end: int, n: int, letter: str, *, bullets: bool, citations: OptionWords | None, any_letter: bool = False
) -> bool:
    """The line after ``line_end`` (past blank lines and a list bullet) goes on listing options:
    it lists the letter next to ``letter`` ("A. 0" then "B. 30") or cites another option by its
    text; or, among ``bullets``, it is another item that opens with a letter ("- D" then "- B").
    A heading such as "Q: Which planet ...?" lists nothing."""
    q = line_end
    while q < n and text[q] in " \t\r\n":
        q += 1
    if q == line_end:
        return False
    bullet = _BULLET.match(text, q, n)
    if bullet is not None:
        q = bullet.end()
        if bullets and letter_token(text, q, n, strict_end=False) is not None:
            return True
    return _listing_line(text, q, letter, citations, any_letter=any_letter)


def _read_from(
    text: str, p: int, n: int, *, lowercase: bool, citations: OptionWords | None
) -> PayloadReading:
    """``read_at`` once the payload's decoration is passed: the payload starts at ``p``."""
    if p >= n:
        return PayloadReading("empty", (), p)
    several = _LETTERS_IN_BRACKETS.match(text, p, n) if text[p] == "(" else None
    if several is not None:  # "(BFIJ)"
        return PayloadReading("hedge", tuple(dict.fromkeys(several.group(1))), several.end())
    withdrawn = _NOT_LETTER.match(text, p, n) if text.startswith("not", p, n) else None
    if withdrawn is not None:  # "not (B)"
        return PayloadReading("retract", (withdrawn.group(1),), withdrawn.end())
    token = letter_token(text, p, n, strict_end=not lowercase)
    if citations and (token is None or token[1] not in citations):
        # No option letter here: an option's text and its bracketed letter may stand here
        # ("Vitamin B12 deficiency (D)", or "O- (D)" where D is "O-").
        citation = citation_before(text, p, n, citations)
        if citation is not None:
            return PayloadReading("letter", (citation.letter,), citation.end, cited=True)
    if token is None and citations and (cited_label := _cited_part_label(text, p, n, citations)) is not None:
        return cited_label
    if token is None and citations and (bold := _bold_letter_cited(text, p, n, citations)) is not None:
        return bold
    if token is None or _opens_words(text, token, n, citations):
        return _read_value(text, p, n, citations)
    end, letter, opened, closed = token
    letters = [letter]
    while True:
        follows = text[end] if end < n else ""  # what stands after the letters read so far
        sep = _SEP.match(text, end, n) if follows and _may_start(follows, _SEP_STARTS) else None
        if sep is None and follows in (" ", "(") and not opened and (aside := _ASIDE.match(text, end, n)) is not None:
            sep = _SEP.match(text, aside.end(), n)  # "B (dual therapy) or D"
        if sep is not None and sep.end() > end:
            more = letter_token(text, sep.end(), n, strict_end=True)
            if more is None and _WORD_SEPARATOR.search(sep.group()) and (capital := _CAPITAL_THEN_WORD.match(text, sep.end(), n)):
                more = (capital.end(1), capital.group(1), False, False)  # "B veya A olabilir"
            # "I" may be the pronoun ("A or I think ..."): a letter when the list goes on or ends.
            if more is not None and (more[2] or more[1] != "I" or opened or _LIST_GOES_ON.match(text, more[0], n)):
                letters.append(more[1])
                end = more[0]
                continue
        if opened:
            gap = _JUXTAPOSED.match(text, end, n) if follows in (" ", "\t", "(", "[") else None
            if gap is not None:
                more = letter_token(text, gap.end(), n, strict_end=True)
                if more is not None and more[2] and more[3]:  # "(A) (C)"
                    letters.append(more[1])
                    end = more[0]
                    continue
        elif closed:
            gap = _JUXTAPOSED_CLOSED.match(text, end, n) if follows in (" ", "\t") else None
            if gap is not None:
                more = letter_token(text, gap.end(), n, strict_end=True)
                if more is not None and more[3] and not more[2]:  # "A) B) C)"
                    letters.append(more[1])
                    end = more[0]
                    continue
        break
    distinct = tuple(dict.fromkeys(letters)) if len(letters) > 1 else (letters[0],)
    follows = text[end] if end < n else ""
    if len(distinct) == 1 and follows in "* \t(":
        # "**A** (or possibly C)", "B (maybe D)": another letter in a hedging aside
        hedged = _HEDGED_ASIDE.match(text, end, n)
        if hedged is not None and hedged["L"] != distinct[0]:
            return PayloadReading("hedge", (distinct[0], hedged["L"]), hedged.end())
    part = follows in (" ", "\t") and _FOR_PART.match(text, end, n) is not None
    if len(distinct) > 1:
        return PayloadReading("hedge", distinct, end, part=part)
    if follows and _may_start(follows, _RETRACT_STARTS) and _RETRACT_AFTER.match(text, end, n):
        return PayloadReading("retract", distinct, end)
    if part:
        # "(F) for (a) and (J) for (b)": the letters of the parts, all of them.
        more_letters = [m.group(1) for m in BRACKETED_LETTER.finditer(text, end, min(n, end + 80))]
        scoped = tuple(dict.fromkeys([*distinct, *more_letters]))
        return PayloadReading("hedge" if len(scoped) > 1 else "letter", scoped, end, part=True)
    if citations:
        cited = citation_after(text, end, distinct[0], citations)
        if cited != -1:  # "D. Vitamin B12 deficiency"
            return PayloadReading("letter", distinct, cited, tail=text[end:cited].lstrip(" \t.():-–—*_"), cited=True)
    tail = None
    if not opened:
        back = 1 if text[end - 1 : end] in ".)" else 0
        tail = _TAIL.match(text, end - back, n) if text[end - back : end - back + 1] in (".", ")", ":") else None
    return PayloadReading("letter", distinct, end, tail=tail.group(1) if tail else "")


def _cited_part_label(text: str, p: int, n: int, citations: OptionWords) -> PayloadReading | None:
    """"(d) Alexander Fleming, who ...": a lowercase letter in brackets followed by some text reads
    as a part label ("(a) 1/2"), except when that text is its own option's: then it cites the
    option (rule 5), as "(D) Alexander Fleming" does."""
    if not (text.startswith("(", p) and p + 2 < n and text[p + 2] == ")" and text[p + 1].islower()):
        return None
    letter = text[p + 1].upper()
    cited = citation_after(text, p + 3, letter, citations)
    if cited == -1:
        return None
    return PayloadReading("letter", (letter,), cited, tail=text[p + 3 : cited].lstrip(" \t.():-–—*_"), cited=True)


def _read_value(text: str, p: int, n: int, citations: OptionWords | None) -> PayloadReading:
    """No letter at ``p``: "no option is right", a value, or nothing. A value ends before a
    contrast ("Operant conditioning, not vitamin B12 deficiency"), unless an option's own text
    goes on past it ("Fiscal rather than monetary policy")."""
    stop = min(n, p + 200)
    if _NONE_PAYLOAD.match(text, p + (text[p] in "([{"), stop):  # "(None of the above)"
        return PayloadReading("none", (), p + 4)
    end = _VALUE_END.search(text, p, stop)
    value_end = end.start() if end else stop
    if end is not None and text[value_end] == "," and citations:
        # "Yes, because the landowner knew ...": an option's own text runs past the comma.
        value_end = max(value_end, *(text_at(text, p, words, stop) for words in citations.values()))
    contrast = CONTRAST.search(text, p, value_end)
    if contrast is not None and not _option_runs_past(text, p, contrast.end(), value_end, citations):
        value_end = contrast.start()
    value = text[p:value_end].strip().strip("*_$ \"'“”‘’「」『』")
    # (each looked for only where its marks stand: most values are ASCII with no apostrophe)
    suffix = _SUFFIXCOPULA_END.search(value) if "'" in value[-9:] or "’" in value[-9:] else None
    copula = suffix if value.isascii() else COPULA_END.search(value) or suffix
    if copula is not None:
        value = value[: copula.start()]  # "정답은 **대동법**입니다": the value, then "is"
    if not value or _PLACEHOLDER.fullmatch(value):
        return PayloadReading("empty", (), p)
    return PayloadReading("value", (), p + len(value), value)


def _option_fills(text: str, p: int, end: int, citations: OptionWords | None) -> bool:
    """An option's own text is ``text[p:end]``, but for closing marks."""
    if citations is None:
        return False
    for words in citations.values():
        at = text_at(text, p, words, end)
        if at != -1 and _FILLS_LINE.match(text, at, end):
            return True
    return False


def _option_runs_past(text: str, p: int, at: int, limit: int, citations: OptionWords | None) -> bool:
    """An option's own text starts at ``p`` and reaches past ``at``."""
    if citations is None:
        return False
    return any(text_at(text, p, words, limit) > at for words in citations.values())
