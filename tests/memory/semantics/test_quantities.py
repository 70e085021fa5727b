"""Quantities in canonical form: spoken numbers, fractions, rates, ordinals and units."""

from __future__ import annotations

import pytest

from credence.memory.semantics.quantities import read_period, read_value
from credence.memory.semantics.relation import relate
from credence.memory.semantics.statements import statement


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ("Standups last half an hour", "Standups last 30 minutes"),
        ("Rest a minute and a half", "Rest 90 seconds"),
        ("Meetings last an hour and a half", "Meetings last 90 minutes"),
        ("Meetings last one and a half hours", "Meetings last 90 minutes"),
        ("Cap it at half a dozen tickets", "Cap it at 6 tickets"),
        ("Order a dozen eggs", "Order 12 eggs"),
        ("Save a quarter of each paycheck", "Save 25% of each paycheck"),
        ("Wait a quarter of an hour", "Wait 15 minutes"),
        ("Feed the cat twice a day", "Feed the cat two times daily"),
        ("Spend $600 a month", "Spend six hundred dollars every month"),
        ("Run 5 km", "Run five kilometres"),
        ("Import a thousand rows", "Import 1,000 rows"),
        ("Pay rent on the first of each month", "Pay rent on the 1st of each month"),
        ("The commute takes three quarters of an hour", "The commute takes 45 minutes"),
        ("Bedtime is eight o'clock in the evening", "Bedtime is 8 pm"),
        ("Bedtime is nine o'clock", "Bedtime is 9:00"),
        ("The lease runs for twelve months", "The lease runs for one year"),
        ("Water the plants every other day", "Water the plants every two days"),
        ("Water the plants on alternate days", "Water the plants every two days"),
        ("The flight leaves at 7:45 in the morning", "The flight leaves at 7:45 am"),
        ("Dinner is at 6:30 in the evening", "Dinner is at 18:30"),
        ("Rent is due on the first day of every month", "Rent is due on the 1st of every month"),
        ("The review is annual", "The review is once a year"),
        ("Back up every second week", "Back up every 2 weeks"),
        ("Service the boiler every six months", "Service the boiler twice a year"),
        ("The flight takes 2 hours 30 minutes", "The flight takes 150 minutes"),
        ("The son is 4 ft 6 in tall", "The son is four feet six inches tall"),
        ("The baby weighed 7 lb 8 oz", "The baby weighed 7.5 lb"),
        (
            "The bill closes on the 22nd of each month",
            "The bill closes on the twenty-second of each month",
        ),
        ("The user is thirty-four", "The user is 34"),
        ("Keep ninety-nine tickets", "Keep 99 tickets"),
        ("The office is on the fourth floor", "The office is on the 4th floor"),
        ("The user's kid is in third grade", "The user's kid is in 3rd grade"),
        ("The office is on the second floor", "The office is on the 2nd floor"),
        ("The user's daughter is 7", "The user's daughter is seven years old"),
        ("Pay the fee quarterly", "Pay the fee every three months"),
        ("Set the heating to 21 °C", "Set the heating to 21 degrees Celsius"),
        ("Set the heating to 21°C", "Set the heating to 21 degrees C"),
        ("Set the heating to 68°F", "Set the heating to 20 degrees Celsius"),
        ("Drink 2 L of water", "Drink two liters of water"),
        ("Donate one fifth of the profits", "Donate 20% of the profits"),
        ("Save a tenth of each paycheck", "Save 10% of each paycheck"),
        ("Keep the thermostat at 68°F", "Keep the thermostat at sixty-eight degrees Fahrenheit"),
        ("The call is at 2:00 PM", "The call is at 2 pm"),
        ("The call is at 9:30 A.M.", "The call is at 09:30"),
        ("The payment is $420", "The payment is 420 US dollars"),
        ("The startup raised $2 million", "The startup raised $2M"),
        ("The startup raised 2 million dollars", "The startup raised two million dollars"),
        ("The fund holds $1.5 billion", "The fund holds $1.5bn"),
        ("The site has 3 thousand users", "The site has 3,000 users"),
    ],
)
def test_one_quantity_in_two_spellings_reads_the_same(first: str, second: str) -> None:
    assert statement(first).canons == statement(second).canons


def test_a_rank_in_words_is_read_before_a_noun_but_a_fraction_stays_one() -> None:
    assert "#3th" in statement("The user's kid is a third grader").canons
    assert "#3th" not in statement("Save a third of each paycheck").canons
    assert "#5th" in statement("The son is in fifth grade").canons
    assert "#5th" not in statement("The son is fifth in his grade").canons
    assert "#1th" not in statement("The user reviews code first thing in the morning").canons


def test_a_temperature_keeps_its_scale_and_a_bare_degree_names_none() -> None:
    assert statement("Bake at 220 °C").canons != statement("Bake at 220 °F").canons
    assert statement("Bake at 220 degrees").canons != statement("Bake at 220 °C").canons


def test_a_month_after_a_preposition_stays_a_length_of_time() -> None:
    assert statement("Keep logs for a month").canons[-1] == "#2628000time"
    assert statement("Pay $5 a month").canons[-1] == "/2628000s"


def test_an_ordinal_in_words_is_a_date_only_in_the_shape_of_one() -> None:
    assert "#15th" in statement("The report is due on the fifteenth of each month").canons
    assert "@--03-15" in statement("The report is due on the fifteenth of March").canons
    assert "#1th" not in statement("Address the user by their first name").canons
    assert "#1th" not in statement("Put the first draft in the shared folder").canons
    assert "#2th" not in statement("Ask for a second opinion").canons
    assert "#3th" not in statement("Cancel every third meeting").canons


def test_an_age_in_years_is_the_bare_number_and_other_ages_keep_their_unit() -> None:
    assert "#7" in statement("The user's daughter is 7 years old").canons
    assert "#7months" in statement("The user's son is seven months old").canons
    assert "#7" in statement("The user has a seven-year-old daughter").canons
    assert "#8months" in statement("The user has an 8-month-old son").canons
    assert "#220752000time" in statement("The user worked there 7 years").canons


def test_a_hyphen_joins_only_tens_and_units() -> None:
    assert "#34" in statement("The user is thirty-four").canons
    assert "#5" not in statement("Plan two-three meetings a day").canons  # a range, not a sum


def test_a_period_after_a_counted_thing_is_a_rate() -> None:
    per_day = statement("Take two pills per day").canons
    assert statement("Take two pills a day").canons == per_day
    assert statement("Drink two cups of coffee a day").canons[-1] == "/86400s"
    # A word of duration before it keeps it a length, however much was counted.
    assert statement("Finish two tasks in a day").canons[-1] == "#86400time"
    assert statement("Two reviewers, a day apart").canons[-2] == "#86400time"


def test_a_recurrence_is_one_period_in_seconds_however_it_is_said() -> None:
    weekly = statement("Run it weekly").canons
    for said in ("Run it once a week", "Run it every 7 days", "Run it every week"):
        assert statement(said).canons == weekly == ("run", "/604800s")
    assert statement("Run it four times a day").canons == statement("Run it every 6 hours").canons
    assert statement("Run it twice a week").canons != weekly
    assert statement("Wait 7 days").canons == ("wait", "#604800time")  # a length, not a period


def test_ordinals_are_numbers_and_differ_by_value() -> None:
    assert read_value(["14th"], 0) == ("#14th", "number", 1)
    assert statement("on the 3rd").canons != statement("on the 10th").canons
    assert read_value(["the", "thirty-first", "of"], 1) == ("#31th", "number", 1)
    assert statement("on the twenty-first of").canons != statement("on the 22nd of").canons


def test_a_smaller_unit_after_a_larger_one_adds_to_it() -> None:
    assert read_value(["2", "hours", "and", "15", "minutes"], 0) == (
        "#8100time",
        "quantity:time",
        5,
    )
    assert (
        statement("Wait 2 hours 30 minutes").canons != statement("Wait 2 hours 45 minutes").canons
    )
    # Only a smaller unit of the same measure: "5 km 3 days" is two quantities, "in" only
    # after feet is inches, and a larger unit starts another.
    assert read_value(["5", "km", "3", "days"], 0) == ("#5000metre", "quantity:metre", 2)
    assert read_value(["2", "hours", "in", "3", "days"], 0) == ("#7200time", "quantity:time", 2)
    assert read_value(["30", "minutes", "2", "hours"], 0) == ("#1800time", "quantity:time", 2)


def test_a_month_is_a_twelfth_of_a_year() -> None:
    assert statement("for 12 months").canons == statement("for a year").canons
    assert statement("every quarter").canons != statement("every month").canons
    assert statement("quarterly").canons == statement("every three months").canons
    # Thirty days are no calendar month: a reviewer decides.
    assert statement("within 30 days").canons != statement("within a month").canons


def test_miles_and_kilometres_are_one_dimension_with_different_values() -> None:
    km, miles = read_value(["20", "km"], 0), read_value(["20", "miles"], 0)
    assert km is not None and miles is not None
    assert km[1] == miles[1] == "quantity:metre"
    assert km[0] != miles[0]


def test_a_bare_fraction_is_no_quantity() -> None:
    assert read_value(["half", "the", "team"], 0) is None
    assert read_period(["a", "day"], 0) is None
    assert read_period(["twice", "a", "day"], 1) == ("/day", 2)


@pytest.mark.parametrize(
    ("said", "written"),
    [
        ("Start at nine in the morning", "Start at 9am"),
        ("Stop at seven in the evening", "Stop at 19:00"),
        ("Call at 9 o'clock", "Call at 09:00"),
        ("The bus comes at quarter past seven", "The bus comes at 7:15"),
        ("The bus comes at a quarter to seven", "The bus comes at 6:45"),
        ("Lunch is at half past twelve", "Lunch is at 12:30"),
        ("Dinner is at half past six in the evening", "Dinner is at 18:30"),
        ("Leave at twenty minutes to four", "Leave at 3:40"),
        ("Meet at quarter to one", "Meet at 12:45"),
    ],
)
def test_an_hour_said_with_its_half_of_the_day_is_a_clock_time(said: str, written: str) -> None:
    assert statement(said).canons == statement(written).canons


def test_a_number_hyphenated_to_its_unit_is_that_quantity() -> None:
    assert statement("two-week sprints").canons == ("#1209600time", "sprint")
    assert statement("2-week sprints").canons == statement("two-week sprints").canons
    assert statement("a fortnight").canons == statement("two weeks").canons
    assert statement("a 30-minute call").canons[0] == statement("half an hour").canons[0]
    assert statement("fortnightly").canons == statement("every 14 days").canons
    assert statement("a one-and-a-half-hour layover").canons == (
        statement("a 90-minute layover").canons
    )
    assert statement("a thirty-four-year lease").canons == statement("a 34-year lease").canons
    # Not a number and a unit: left as words.
    for word in ("x-api-key", "covid-19", "one-on-one", "e-mail"):
        assert statement(word).canons == (word,)


def test_a_ratio_is_one_value_read_in_order() -> None:
    assert statement("Mix the paint at a 1:2 ratio").values == frozenset({"#1:2"})
    assert statement("Mix at 1:2").values != statement("Mix at 2:1").values
    assert statement("Set the ratio to 16:9").values == frozenset({"#16:9"})
    assert statement("Meet at 9:30").values != statement("Meet at 9:03").values


def test_a_bare_decimal_ending_in_zero_is_kept_as_written() -> None:
    # "Python 3.10" is not "Python 3.1"; with a unit the number is a quantity again.
    assert statement("Use Python 3.10").values != statement("Use Python 3.1").values
    assert "#3.10" in statement("Use Python 3.10").values
    assert statement("Wait 1.50 seconds").values == statement("Wait 1.5 seconds").values
    assert statement("Raise 2.50 million").values == statement("Raise 2.5 million").values


def test_m_is_metres_only_before_a_word_that_says_a_length_was_measured() -> None:
    assert statement("The user is 1.8 m tall").values == statement("The user is 180 cm tall").values
    assert statement("The user is 1.80m tall").values == frozenset({"#1.8metre"})
    assert statement("The site has 10m users").values == frozenset({"#10000000"})
    assert statement("The round raised $2m").values == frozenset({"#2000000usd"})


def test_a_number_then_a_scale_word_is_one_value_that_differs_by_value() -> None:
    assert statement("The startup raised $2 million").values == frozenset({"#2000000usd"})
    assert statement("Budget 2 million euros").values != statement("Budget 3 million euros").values


def test_a_ratio_said_with_to_is_the_same_ratio() -> None:
    assert statement("Allow a 3 to 1 ratio").values == statement("Allow a 3:1 ratio").values
    assert statement("Allow a 1 to 3 ratio").values != statement("Allow a 3:1 ratio").values
    assert statement("Deliver in 3 to 5 days").values != statement("Deliver in 3:5").values


def test_minutes_past_an_hour_are_not_minutes_to_it() -> None:
    assert (
        statement("Wake at quarter past six").canons != statement("Wake at quarter to six").canons
    )
    # Not a clock time: "half" before "to" says nothing of an hour, nor "the past seven days".
    assert "@" not in "".join(statement("Cut it half to six pieces").canons)
    assert "@" not in "".join(statement("Review the past seven days").canons)


def test_half_a_thing_is_not_a_thing_and_a_half() -> None:
    half, one_and_a_half = statement("Give half a pill"), statement("Give a pill and a half")
    assert "#0.5" in half.canons
    assert "#1.5" in one_and_a_half.canons
    # With a unit, the unit is read with it.
    assert statement("Take half a day off").canons == statement("Take 12 hours off").canons


def test_the_first_of_the_month_is_of_every_month() -> None:
    assert (
        statement("Rent is due on the first of the month").canons
        == statement("Rent is due on the 1st of each month").canons
    )
    assert "/" not in "".join(statement("Review the end of the month").canons)


def test_a_minus_before_a_number_is_its_sign() -> None:
    assert statement("Keep it at -18°C").canons != statement("Keep it at 18°C").canons
    assert statement("Keep it at −5 degrees").canons == statement("Keep it at -5 degrees").canons
    assert "#5..10" in statement("Use ranges 5-10").canons


def test_every_other_is_a_period_only_before_a_length_of_time() -> None:
    assert statement("every other Tuesday").canons != statement("every two Tuesdays").canons
    assert statement("Call every second").canons == ("call", "every", "second")
    assert statement("every other week").canons != statement("every week").canons
    # Before a day of the week, "second" and "alternate" say "other".
    assert statement("every second Friday").canons == statement("every other Friday").canons
    assert statement("on alternate Fridays").canons == statement("every other Friday").canons
    assert statement("on alternate Fridays").canons != statement("every Friday").canons


def test_dollars_of_another_country_are_another_currency() -> None:
    assert statement("It costs 420 Canadian dollars").canons == ("cost", "#420cad")
    assert statement("It costs 420 Australian dollars").canons == ("cost", "#420aud")
    changed = relate("It costs 420 Canadian dollars.", "It costs 420 US dollars.", 0.9)
    assert changed.contradiction == "value_change"
    # A word that is no number before "degrees" names no temperature.
    assert "fahrenheit" in statement("It rose several degrees Fahrenheit").canons


def test_an_ordinal_before_a_street_word_is_the_streets_number() -> None:
    assert statement("lives on Fifth Avenue").canons == statement("lives on 5th Avenue").canons
    assert statement("lives on Fifth Street").canons != statement("lives on 6th Street").canons
