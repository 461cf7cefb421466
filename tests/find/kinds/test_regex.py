"""The ``regex`` step kind (``choicebox.find.regex``): a rule file's own pattern, whose capture holds
the answer, run on the time-bounded engine.

What it reads (a capture read as a payload, several patterns), what it must not read, and what each
of its parameters changes; what a mention, an elimination or a condition is, is the pattern's to
say. The limits every pattern is held to, wherever it comes from, are
``tests/find/test_pattern_limits.py``'s. Every mode here is a rule file whose chain is this one step,
but where a test puts a second step after it."""

from __future__ import annotations

from pathlib import Path

import pytest

from choicebox import RuleFileError
from choicebox._grading import grade_text
from choicebox._modes import parse_mode
from rule_files import Built, chain, one_kind

PICK = r"Pick:\s*(\S+)"


@pytest.fixture(scope="module")
def pick(tmp_path_factory: pytest.TempPathFactory) -> Built:
    return one_kind(tmp_path_factory.mktemp("regex"), "regex", pattern=PICK)


@pytest.mark.parametrize("output", ["Pick: B", "Pick: (B)", "pick: b", "Pick: optB", "Pick: $B$", "Reasoning.\nPick: B"])
def test_it_reads_the_capture_as_a_payload(pick: Built, output: str) -> None:
    assert pick.outcome(output) == ("B", None)


def test_the_last_match_counts(pick: Built) -> None:
    assert pick.read("Pick: A and then Pick: C") == "C"


@pytest.mark.parametrize("output", ["Pick: zzz", "Pick: definitely", "The answer is B.", "Pick:"])
def test_it_reads_no_answer_when_the_capture_names_nothing(pick: Built, output: str) -> None:
    assert pick.outcome(output) == (None, "no_answer")


def test_several_letters_are_ambiguous(pick: Built) -> None:
    assert pick.outcome("Pick: A/B") == (None, "ambiguous")


def test_a_letter_that_is_not_an_option_is_not_an_answer(pick: Built) -> None:
    assert pick.outcome("Pick: E") == (None, "not_an_option")


def test_the_patterns_are_tried_in_order(tmp_path: Path) -> None:
    two = one_kind(tmp_path, "regex", pattern=[r"Pick: (\w)", r"Take: (\w)"])
    assert two.read("Take: C then Pick: B") == "B"
    assert two.read("Take: C") == "C"


def test_a_rule_file_pattern_past_a_limit_is_a_located_rule_file_error() -> None:
    text = (
        "version: 1\nid: big\ndescription: d\nchain:\n"
        "  - kind: regex\n    pattern: 'x{100000}'\n"
    )
    with pytest.raises(RuleFileError) as info:
        parse_mode(text, path="big.yaml")
    assert info.value.line == 6
    assert "the repeat count 100,000 is over the limit" in info.value.reason


def test_a_row_s_patterns_share_one_budget_of_timeouts() -> None:
    # A rule file of many catastrophic patterns: each runs to its own timeout until the row's
    # budget (REGEX_BUDGET_TIMEOUTS timeouts) is spent, and the rest do not run at all.
    from choicebox.find._api import REGEX_BUDGET_TIMEOUTS

    source = "(a|aa)+$" + "x?" * 900
    steps = "".join(f"  - id: r{i}\n    kind: regex\n    pattern: '{source}'\n" for i in range(12))
    mode, _ = parse_mode("version: 1\nid: many\ndescription: d\nchain:\n" + steps, path="m.yaml")
    verdict = grade_text("a" * 5000 + "!", {"A": "x", "B": "y"}, "A", mode, regex_timeout=0.01)
    assert verdict.failure == "regex_timeout"
    assert any(f"regex budget ({0.01 * REGEX_BUDGET_TIMEOUTS:g}s) is spent" in e for e in verdict.errors)


# --- parameters ----------------------------------------------------------------------------------


def test_parameter_pattern_must_compile(tmp_path: Path) -> None:
    with pytest.raises(RuleFileError, match="pattern"):
        one_kind(tmp_path, "regex", pattern="Pick: ([A-D]")
    with pytest.raises(RuleFileError, match="at least one pattern"):
        one_kind(tmp_path, "regex", pattern=[])


def test_parameter_flags_default_to_ignorecase_and_may_be_set(tmp_path: Path, pick: Built) -> None:
    assert pick.read("pick: B") == "B"
    assert one_kind(tmp_path, "regex", pattern=PICK, flags=[]).read("pick: B") is None
    anchored = r"^Pick: (\w)$"
    assert one_kind(tmp_path, "regex", pattern=anchored).read("Pick: B\nmore") is None
    assert one_kind(tmp_path, "regex", pattern=anchored, flags=["multiline"]).read("Pick: B\nmore") == "B"
    with pytest.raises(RuleFileError, match="unknown flags"):
        one_kind(tmp_path, "regex", pattern=PICK, flags=["caseless"])


def test_parameter_which_picks_the_first_or_the_last_match(tmp_path: Path, pick: Built) -> None:
    assert pick.read("Pick: A and then Pick: C") == "C"
    assert one_kind(tmp_path, "regex", pattern=PICK, which="first").read("Pick: A and then Pick: C") == "A"


def test_parameter_fallback_walks_past_matches_that_name_nothing(tmp_path: Path, pick: Built) -> None:
    assert pick.read("Pick: A and then Pick: zzz") is None
    assert one_kind(tmp_path, "regex", pattern=PICK, fallback=True).read("Pick: A and then Pick: zzz") == "A"


def test_parameter_group_chooses_the_capture(tmp_path: Path) -> None:
    pattern = r"(Pick|Take): (\w)"
    assert one_kind(tmp_path, "regex", pattern=pattern).read("Take: B") == "B"  # the last group
    assert one_kind(tmp_path, "regex", pattern=pattern, group=1).read("Take: B") is None  # "Take"
    # Without ``group``, a group named ``answer`` is the capture.
    assert one_kind(tmp_path, "regex", pattern=r"(?P<answer>\w) is mine: (\w)").read("B is mine: C") == "B"


@pytest.mark.parametrize(
    ("output", "lenient_reads", "strict_reads", "exact_reads"),
    [
        ("Pick: B", "B", "B", "B"),
        ("Pick: (B)", "B", "B", None),
        ("Pick: optB", "B", "B", None),
        ("Pick: option B", "B", None, None),
        ("Pick: (B) or (C)", None, None, None),
    ],
)
def test_parameter_payload_reads_the_capture_leniently_strictly_or_as_written(
    tmp_path: Path, output: str, lenient_reads: str | None, strict_reads: str | None, exact_reads: str | None
) -> None:
    reads = [one_kind(tmp_path, "regex", pattern="Pick: (.+)", payload=p).read(output) for p in ("lenient", "strict", "exact")]
    assert reads == [lenient_reads, strict_reads, exact_reads]


def test_parameter_payload_exact_stops_the_chain_at_a_letter_that_is_no_option(tmp_path: Path) -> None:
    # The answer given is no option: an evaluation script that takes the regex's letter stops there.
    steps = [{"kind": "regex", "pattern": r"Pick: (\w)", "payload": "exact"}, {"kind": "boxed_letter"}]
    exact = chain(tmp_path, steps)
    strict = chain(tmp_path, [{**steps[0], "payload": "strict"}, steps[1]])
    assert exact.outcome("Pick: E \\boxed{B}") == (None, "not_an_option")
    assert strict.outcome("Pick: E \\boxed{B}") == ("B", None)


def test_parameter_payload_strict_does_not_read_a_letter_that_starts_a_word(tmp_path: Path) -> None:
    strict = one_kind(tmp_path, "regex", pattern=r"answer is (\w)", payload="strict")
    assert strict.read("The answer is definitely B") is None
    assert strict.read("The answer is B") == "B"


def test_parameter_lowercase_accepts_a_lowercase_letter(tmp_path: Path, pick: Built) -> None:
    assert pick.read("Pick: b") == "B"
    assert one_kind(tmp_path, "regex", pattern=PICK, lowercase=False).read("Pick: b") is None
    exact = one_kind(tmp_path, "regex", pattern=r"Pick: (\w)", payload="exact", lowercase=False)
    assert exact.read("Pick: b") is None
