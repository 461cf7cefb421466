"""``choicebox.find._values``: a value compared with an option's content as a value (rule 5).

Generated from the writings of one number (plain, "× 10^n", "x10^{n}", "e-n", superscripts,
LaTeX ``\\times``, MMLU-Pro's "1.81 $10^{10}$" with the sign of multiplication lost) and of one
unit (plain, ``\\mathrm{}``, with a tilde): any two writings of one quantity state each other, and
no writing of another number or unit does."""

from __future__ import annotations

from decimal import Decimal
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from choicebox.find._values import quantity, same_value, value_letters

_SUPERSCRIPTS = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")


def _writings(mantissa: str, power: int) -> list[str]:
    """One number, ``mantissa`` × 10^``power``, written every way the module reads."""
    return [
        f"{mantissa} × 10^{power}",
        f"{mantissa} x 10^{{{power}}}",
        f"{mantissa}*10^{power}",
        f"{mantissa}e{power}",
        f"{mantissa} × 10{str(power).translate(_SUPERSCRIPTS)}",
        f"${mantissa} \\times 10^{{{power}}}$",
        f"{mantissa} $10^{{{power}}}$",
        format(Decimal(mantissa).scaleb(power), "f"),
    ]


_UNITS = {
    "m/s": ["m/s", "\\mathrm{m/s}", "\\mathrm{~m} / \\mathrm{s}"],
    "kJ": ["kJ", "\\mathrm{kJ}", "\\rm{kJ}", "~kJ"],
}

mantissas = st.builds(
    lambda whole, frac: f"{whole}.{frac}",
    st.integers(1, 9),
    st.integers(0, 99).map(lambda n: f"{n:02d}"),
)
powers = st.integers(-12, 12)


@settings(max_examples=300, deadline=None)
@given(mantissas, powers, st.sampled_from(sorted(_UNITS)), st.data())
def test_every_writing_of_one_quantity_states_every_other(
    mantissa: str, power: int, unit: str, data: st.DataObject
) -> None:
    writings = _writings(mantissa, power)
    value = data.draw(st.sampled_from(writings)) + " " + data.draw(st.sampled_from(_UNITS[unit]))
    option = data.draw(st.sampled_from(writings)) + " " + data.draw(st.sampled_from(_UNITS[unit]))
    assert same_value(value, option), (value, option)
    other_unit = next(u for u in _UNITS if u != unit)
    assert not same_value(value, data.draw(st.sampled_from(writings)) + " " + _UNITS[other_unit][0])
    other = f"{mantissa}1"  # one more digit: another number
    assert not same_value(value, _writings(other, power)[0] + " " + unit)
    assert not same_value(value, _writings(mantissa, power + 1)[0] + " " + unit)


@pytest.mark.parametrize(
    ("value", "option"),
    [
        ("$24.00", "$24"),
        ("approximately 0.23 M", ".23 M"),
        ("−1.32 × 10¹³ C", "$-1.32$ $10^{13} \\mathrm{C}$"),
        ("22,950", "22950"),
        (
            "planning, organising, leading and controlling",
            "planning, organising, leading, controlling",
        ),
        ("-0.27, 1.45, -1.73", "-.27, 1.45, -1.73"),
        ("3 and 7", "3; 7"),
        ("2/6", "1/3"),  # one value, exact
        ("Statement 1 is True, Statement 2 is False", "True, False"),
        ("statement I: false; statement II: true", "False, True"),
        ("\\frac{1}{2}", "0.5"),
    ],
)
def test_it_states(value: str, option: str) -> None:
    assert same_value(value, option)


def test_a_value_may_add_the_unit_the_question_names_to_a_bare_option() -> None:
    question = "Find the rocket's maximum height in meters."
    assert same_value("2041 meters", "2041", question)
    assert not same_value("2041 meters", "2041")  # no question names the unit
    # More than the question's unit: a scale, a comparison, a prefix, another unit.
    for value in ("2041 thousand", "less than 2041", "at least 2041", "2041 km", "2041^2", "2041 meters high"):
        assert not same_value(value, "2041", question), value
    assert not same_value("1.5 kJ", "1.5", "What is the energy in joules?")


@pytest.mark.parametrize(
    ("value", "option"),
    [
        ("0.227 M", ".23 M"),  # nothing is rounded
        ("24 m", "24 s"),
        ("13.", "13.00000 amu"),  # an output cut off at "m = 13." gave no unit
        ("7 groups up to isomorphism: Z_7", "7"),  # more than a unit
        ("100!", "100"),  # a factorial
        ("3 and 7 and 9", "3 and 7"),
        ("Statement 1 is True, Statement 2 is False", "False, True"),
        ("Statement 2 is False, Statement 1 is True", "False, True"),  # judged out of order
        ("5", "5 or 6"),
        ("22,95", "2295"),
        ("3,7", "3"),  # a decimal comma, or a list: not 3 and a unit "7"
        ("3,7,9", "3.7"),  # a list
        ("2,450 kg", "2.45 kg"),  # three digits after the comma: a thousands group
        ("0.1₂", "0.1"),  # a binary numeral
        ("exactly 0.1₂ in binary", "0.1"),
    ],
)
def test_it_does_not_state(value: str, option: str) -> None:
    assert not same_value(value, option)


@pytest.mark.parametrize(
    ("value", "option", "same"),
    [("3.46 × 10³ J", "3.46 kJ", True), ("3460 J", "3.46 kJ", True), ("500 g", "0.5 kg", True), ("0.025 m", "2.5 cm", True),
     ("3.46 J", "3.46 kJ", False), ("2.5 mm", "0.0025 m", False),  # "m" is milli or mega once casefolded: no prefix
     ("3460 W", "3.46 kJ", False),  # another base unit
     ("0.3087", "30.87%", True), ("37%", "0.37", True), ("0.37", "3.7%", False), ("37", "37%", False)],  # a percentage
)  # fmt: skip
def test_an_si_prefix_or_a_percent_sign_scales_a_value(value: str, option: str, same: bool) -> None:
    assert same_value(value, option) is same


@pytest.mark.parametrize(("value", "option"), [("2,45 m/s²", "2.45 m/s²"), ("9,8", "9.8"), ("-0,5 V", "-0.5 V")])
def test_one_or_two_digits_after_a_comma_are_a_decimal_part(value: str, option: str) -> None:
    # "Doğru cevap 2,45 m/s²'dir", "La respuesta es 9,8": a decimal comma, not a list
    assert same_value(value, option)


def test_a_quantity_is_one_number_and_its_unit() -> None:
    assert quantity("about 1.5 × 10^3 J") == (1500, "j")
    assert quantity("2/6") == quantity("\\frac{1}{3}") == (Fraction(1, 3), "")
    assert quantity("1/0") is None
    assert quantity("1.81 $10^{10} \\mathrm{~m}^{-1}$") == (
        Fraction(181 * 10**8),
        "m^-1",
    )  # "^-1" is the unit's
    assert quantity("3 and 7") is None  # two numbers
    assert quantity("Paris") is None


PHASES = {"A": "G1 phase", "B": "S phase", "C": "G2 phase", "D": "M phase"}
TREATIES = {"A": "Treaty of Brest-Litovsk", "B": "Treaty of Versailles", "C": "Treaty of Trianon"}


@pytest.mark.parametrize(
    ("value", "options", "letters"),
    [
        ("S phase (the synthesis phase of interphase)", PHASES, ["B"]),
        # a remark that doubts, hedges or withdraws is no remark on an answer
        ("S phase (probably not)", PHASES, []),
        ("S phase (just kidding)", PHASES, []),
        ("S phase (if the question meant bacteria)", PHASES, []),
        ("S phase (the one G1 precedes)", PHASES, []),  # another option's words, short ones too
        # a remark that names another option, or uses its words, is not read as a remark
        ("S phase (or G2 phase)", PHASES, []),
        ("S phase (not M phase)", PHASES, []),
        ("Treaty of Versailles (or maybe Trianon)", TREATIES, []),
        # only a bracketed remark: after a comma comes a contrast or a hedge as often
        ("the Treaty of Versailles, signed on June 28, 1919", TREATIES, []),
        # the digit of a name is no number: "G2 phase" is text; "Stage 3" a number, as before
        ("G2 phase (where DNA is checked)", PHASES, ["C"]),
        # a number's remark may be its unit: it is compared as a value ("12" states 12 N too)
        ("12 (in newtons)", {"A": "12 N", "B": "12"}, []),
        # only an article that opens the text is dropped: "Gamma ray" keeps its "a "
        ("Gamma ray (the most energetic)", {"A": "Gamma ray", "B": "X-ray"}, ["A"]),
        ("the S phase (the synthesis phase)", PHASES, ["B"]),
    ],
)
def test_an_options_text_with_a_remark_after_it_is_that_option(value: str, options: dict[str, str], letters: list[str]) -> None:
    assert value_letters(value, options) == letters


def test_an_options_text_after_an_article_is_that_option() -> None:
    organelles = {"A": "Lysosome", "B": "Golgi apparatus", "C": "The nucleus"}
    assert value_letters("the Golgi apparatus", organelles) == ["B"]
    assert value_letters("a lysosome", organelles) == ["A"]
    assert value_letters("The nucleus", organelles) == ["C"]  # the option's own article
    assert value_letters("the Golgi", organelles) == []  # a part of an option's text is none
    assert value_letters("theGolgi apparatus", organelles) == []  # an article is a word


def test_value_letters_are_every_option_the_value_states() -> None:
    options = {"A": "24 N", "B": "$24", "C": "24.0", "D": "25"}
    assert value_letters("24.00", options) == ["B", "C"]
    # An option the value is, as text, wins over those it states as a value.
    assert value_letters("24 N", options) == ["A"]
    assert value_letters("24", {"A": "24 N", "B": "24.0"}) == ["B"]
    # "24 newtons" states a bare "24" when the question asks for newtons, and "newtons" is "N" spelt
    # out: three options, no single one.
    assert value_letters("24.0 newtons", options, "What is the force, in newtons?") == ["A", "B", "C"]
    assert value_letters("2 ohms", {"A": "22 Ω", "B": "2 Ω"}) == ["B"]  # a unit's name is its symbol
    assert value_letters("0.25 mol/L", {"A": "0.25 M", "B": "0.5 M"}) == ["A"]
    assert value_letters("24.0 x", options, "Solve for x.") == []  # a variable is no unit
    assert value_letters("26", options) == []


@settings(max_examples=500, deadline=None)
@given(
    st.text(alphabet=st.sampled_from("0123456789.,-+ ×x^{}$e!%:;and10mM\\"), max_size=60),
    st.text(max_size=30),
)
def test_it_never_raises(value: str, option: str) -> None:
    assert isinstance(same_value(value, option), bool)
    assert same_value(value, value) or not value.strip()

