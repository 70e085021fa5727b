"""Phrasings said plainly before comparison: contrast, exceptions, purpose, preference."""

from __future__ import annotations

from credence.memory.semantics.plainly import ones_written_alike, plainly_worded


def test_a_not_that_sets_one_thing_against_another_negates_nothing() -> None:
    assert plainly_worded("Use tabs, not spaces") == "Use tabs rather than spaces"
    assert plainly_worded("Use tabs,not spaces") == "Use tabs rather than spaces"


def test_a_purpose_is_said_with_to_not_as_a_permission() -> None:
    assert plainly_worded("Leave early so they can beat traffic") == "Leave early to beat traffic"
    assert plainly_worded("Leave early in order to beat traffic") == "Leave early to beat traffic"
    assert plainly_worded("It is urgent, so the user can't wait") == (
        "It is urgent, so the user can't wait"
    )


def test_would_rather_have_and_reports_to_are_said_plainly() -> None:
    assert plainly_worded("The user would rather have tea than coffee") == (
        "The user prefers tea than coffee"
    )
    # A verb that says more stays, for the phrase fold to read with "would rather".
    assert plainly_worded("The user would rather sit by the aisle") == (
        "The user would rather sit by the aisle"
    )
    assert plainly_worded("The user reports to Rachel Kim") == "The user's manager is Rachel Kim"
    assert plainly_worded("The person the user reports to is Kim") == (
        "The person the user reports to is Kim"
    )


def test_nobody_but_and_except_when_are_said_plainly() -> None:
    assert plainly_worded("Nobody but Ana may merge") == "only Ana may merge"
    assert plainly_worded("No one except Ana may merge") == "only Ana may merge"
    assert plainly_worded("Reply in German except when asked") == "Reply in German unless asked"
    assert plainly_worded("Nobody may merge") == "Nobody may merge"
    assert plainly_worded("The user can't stand jazz") == "The user hate jazz"
    assert plainly_worded("The user cannot tolerate noise") == "The user hate noise"
    # "not even" and "not only" still intensify a negation; a "not" without a comma negates.
    assert plainly_worded("Never use tabs, not even in Makefiles") == (
        "Never use tabs, not even in Makefiles"
    )
    assert plainly_worded("Do not use tabs") == "Do not use tabs"


def test_an_allergy_said_from_its_cause_is_said_of_the_person() -> None:
    assert plainly_worded("Peanuts trigger an allergic reaction in the user.") == (
        "The user is allergic to peanuts."
    )
    assert plainly_worded("Penicillin causes an allergic reaction in Leo") == (
        "Leo is allergic to penicillin"
    )
    # A name keeps its capital.
    assert plainly_worded("NSAIDs cause an allergic reaction in Ana") == (
        "Ana is allergic to NSAIDs"
    )


def test_a_diet_followed_and_a_sport_gone_to_are_said_plainly() -> None:
    assert plainly_worded("The user follows a vegetarian diet") == "The user is vegetarian"
    assert plainly_worded("The user follows a diet that is vegan.") == "The user is vegan."
    # A diet described at more length stays as written.
    assert plainly_worded("The user follows a diet that is low in salt") == (
        "The user follows a diet that is low in salt"
    )
    assert plainly_worded("The user goes running on Sundays") == "The user runs on Sundays"
    assert plainly_worded("The user goes home at six") == "The user goes home at six"


def test_never_visited_owning_and_a_birth_date_are_said_plainly() -> None:
    assert (
        plainly_worded("The user has not once been to Japan") == "The user has never visited Japan"
    )
    assert plainly_worded("The user is the owner of a bakery") == "The user owns a bakery"
    assert plainly_worded("Aunt Rosa's birthday is on May 3") == "Aunt Rosa was born on May 3"
    assert plainly_worded("The user's date of birth is May 3, 1990") == (
        "The user was born on May 3, 1990"
    )
    # "been to" before a verb is no visit.
    assert (
        plainly_worded("The user has been to see a lawyer") == "The user has been to see a lawyer"
    )


def test_a_single_thing_is_one_where_the_other_side_counts_one() -> None:
    assert ones_written_alike("Keep notes under one page", "Keep notes under a single page") == (
        "Keep notes under one page",
        "Keep notes under one page",
    )
    assert ones_written_alike("two cats and one dog", "a dog and two cats")[1] == (
        "one dog and two cats"
    )
    # Not counted as one on the other side: left as written.
    texts = ("The user is a single parent", "The user has one child")
    assert ones_written_alike(*texts) == texts


def test_shopping_abstaining_and_height_are_said_plainly() -> None:
    assert plainly_worded("The user does their grocery shopping online") == (
        "The user buys groceries online"
    )
    assert plainly_worded("The user abstains from alcohol") == "The user does not drink alcohol"
    assert plainly_worded("The user's height is six feet.") == "The user is six feet tall."


def test_lacking_and_not_far_are_said_plainly() -> None:
    assert plainly_worded("The car lacks a spare tire") == "The car has no spare tire"
    assert plainly_worded("The flat is not far from the station") == "The flat is near the station"
    # "a lack of" is a noun: left alone.
    assert plainly_worded("a lack of sleep") == "a lack of sleep"


def test_a_condition_that_a_thing_is_not_so_is_unless_it_is() -> None:
    assert (
        plainly_worded("The user bikes if it isn't snowing")
        == "The user bikes unless it is snowing"
    )
    assert plainly_worded("Wait when the user has not asked") == "Wait unless the user has asked"
    assert plainly_worded("The user bikes if it doesn't rain") == "The user bikes unless it rain"
    # A condition that a thing is so stays a condition.
    assert plainly_worded("The user bikes if it is dry") == "The user bikes if it is dry"


def test_a_diabetic_an_only_child_and_a_birth_year_are_said_plainly() -> None:
    assert plainly_worded("The user is a type 1 diabetic") == "The user has type 1 diabetes"
    assert plainly_worded("The user is an only child") == "The user has no siblings"
    assert plainly_worded("The user's son's year of birth is 2016") == (
        "The user's son was born in 2016"
    )


def test_practising_law_and_holding_a_mortgage_are_said_plainly() -> None:
    assert plainly_worded("The user's sister practises law") == "The user's sister is a lawyer"
    assert plainly_worded("Chase Bank holds the user's mortgage.") == (
        "The user's mortgage is with Chase Bank."
    )


def test_a_parents_kin_and_a_direct_report_are_said_plainly() -> None:
    assert plainly_worded("The user's mother's sister lives in Leeds") == (
        "The user's maternal aunt lives in Leeds"
    )
    assert plainly_worded("Her dad's parents farm") == "Her paternal grandparents farm"
    assert plainly_worded("The user's father's car is red") == "The user's father's car is red"
    assert plainly_worded("The user is Dana's direct report") == "The user's manager is Dana"


def test_two_negatives_halves_and_a_version_are_said_plainly() -> None:
    assert plainly_worded("The boss has no objection to remote Fridays") == (
        "The boss is fine with remote Fridays"
    )
    assert plainly_worded("The user doesn't mind working late") == (
        "The user is fine with working late"
    )
    assert plainly_worded("They split the rent 50/50") == "They split the rent equally"
    assert plainly_worded("Use a 50/50/0 split") == "Use a 50/50/0 split"
    assert plainly_worded("The API runs on version 3.11 of Python.") == (
        "The API runs on Python 3.11."
    )
    assert plainly_worded("The API runs on Python version 3.11.") == "The API runs on Python 3.11."
    assert plainly_worded("Pin the version 2 API") == "Pin the version 2 API"
    assert plainly_worded("It needs version 18 of Node.js") == "It needs Node.js 18"


def test_a_place_or_time_put_first_is_said_plainly() -> None:
    assert plainly_worded("Porto is where the user's mom lives.") == (
        "The user's mom lives in Porto."
    )
    assert plainly_worded("The garage was where the user kept the bikes") == (
        "The user kept the bikes in the garage"
    )
    assert plainly_worded("August is when the passport expires") == (
        "The passport expires in August"
    )
    assert plainly_worded("Friday is when the team deploys") == "The team deploys on Friday"
    assert plainly_worded("9 am is when standup starts") == "Standup starts at 9 am"
    assert plainly_worded("Each Wednesday is when PRs get reviewed") == (
        "PRs get reviewed each Wednesday"
    )
    # A clause of its own between commas is left as written.
    assert plainly_worded("This is where, if needed, we go") == "This is where, if needed, we go"


def test_the_one_liked_best_of_all_is_a_favourite() -> None:
    assert plainly_worded("Of all cuisines, Thai is the one the user likes best.") == (
        "The user's favourite cuisine is Thai."
    )
    assert plainly_worded("Of all the seasons, autumn is the one Ana enjoys most") == (
        "Ana's favourite season is autumn"
    )


def test_the_one_who_does_it_and_the_thing_a_clause_ends_on_are_said_plainly() -> None:
    assert plainly_worded("Priya is the one who does the code reviews.") == (
        "Priya does the code reviews."
    )
    assert plainly_worded("Nx is the tool the monorepo is managed with.") == (
        "The monorepo is managed with Nx."
    )
    assert plainly_worded("Python is the language the user wants examples in") == (
        "The user wants examples in Python"
    )
    # A pronoun named first stays: "This" is no thing to move to the end.
    assert plainly_worded("This is the file the user works on") == (
        "This is the file the user works on"
    )


def test_a_basis_how_to_and_not_one_of_are_said_plainly() -> None:
    assert plainly_worded("Deps get updated on a monthly basis") == "Deps get updated monthly"
    assert plainly_worded("The user is learning how to swim") == "The user is learning to swim"
    assert plainly_worded("Not one of the kids eats fish") == "None of the kids eats fish"
    assert plainly_worded("Ask, since not a single one of them came") == (
        "Ask, since none of them came"
    )
    assert plainly_worded("Every one of the kids walks") == "All of the kids walks"
    assert plainly_worded("Since 2019 the user has followed a vegan diet") == (
        "Since 2019 the user has been vegan"
    )


def test_a_counted_place_is_said_as_its_ordinal() -> None:
    assert plainly_worded("The office is on floor 4.") == "The office is on the 4th floor."
    assert plainly_worded("Floor 3 is closed") == "The 3rd floor is closed"
    assert plainly_worded("Her son is in grade 11") == "Her son is in the 11th grade"
    assert plainly_worded("Read chapter 21 first") == "Read the 21st chapter first"
    assert plainly_worded("Keep the level at 1.5") == "Keep the level at 1.5"


def test_a_spouses_parent_and_no_cost_are_said_plainly() -> None:
    assert plainly_worded("The user's wife's mother lives in Tucson") == (
        "The user's mother-in-law lives in Tucson"
    )
    # A spouse's sibling stays as written: "brother-in-law" is also a sister's husband.
    assert plainly_worded("The user's wife's brother is a nurse") == (
        "The user's wife's brother is a nurse"
    )
    assert plainly_worded("A neighbour gave it to them at no cost") == (
        "A neighbour gave it to them for free"
    )


def test_mother_and_father_are_parents() -> None:
    assert plainly_worded("The user's mother and father are divorced") == (
        "The user's parents are divorced"
    )
    assert plainly_worded("Mom and dad visit in May") == "Parents visit in May"
    assert plainly_worded("Her mother and father's house") == "Her parents' house"


def test_rooms_counted_before_a_home_are_said_after_it() -> None:
    assert plainly_worded("The user rents a two-bedroom apartment in Lisbon") == (
        "The user rents an apartment with two bedrooms in Lisbon"
    )
    assert plainly_worded("They bought a 3-bedroom house") == "They bought a house with 3 bedrooms"


def test_being_a_fan_of_is_liking() -> None:
    assert plainly_worded("The user is a fan of jazz") == "The user likes jazz"
    assert plainly_worded("The user is a big fan of jazz") == "The user loves jazz"
    assert plainly_worded("The user isn't a fan of horror") == "The user does not like horror"
    assert plainly_worded("The user is not a huge fan of horror") == (
        "The user does not like horror"
    )
    assert plainly_worded("The kids are fans of Lego") == "The kids like Lego"
    assert plainly_worded("The fan of the laptop is loud") == "The fan of the laptop is loud"


def test_a_thing_and_no_other_is_that_thing_only() -> None:
    assert plainly_worded("The repo is edited by the core team and no one else.") == (
        "The repo is edited by the core team only."
    )
    assert plainly_worded("Deploy on Mondays and on no other days") == "Deploy on Mondays only"
    assert plainly_worded("Drink coffee in the morning and at no other time of day") == (
        "Drink coffee in the morning only"
    )
    assert plainly_worded("Ask Sam and nobody else") == "Ask Sam only"
    assert plainly_worded("Ask Sam and no one else, please") == "Ask Sam only, please"
    assert plainly_worded("Ask Sam and then Kim") == "Ask Sam and then Kim"


def test_a_choice_given_between_two_is_a_preference_of_one_to_the_other() -> None:
    said = "Given the choice between trains and planes, the user prefers trains."
    assert plainly_worded(said) == "The user prefers trains to planes."
    said = "Given a choice between a call and an email, the user would rather have the email."
    assert plainly_worded(said) == "The user prefers the email to a call."
    # A pick that is neither option is left as written.
    said = "Given the choice between tea and coffee, the user prefers water."
    assert plainly_worded(said) == said


def test_a_pay_and_an_appointment_are_said_with_their_verb() -> None:
    assert plainly_worded("The user's annual salary is $85k.") == "The user earns $85k a year."
    assert plainly_worded("Sam's hourly wage is $32") == "Sam earns $32 an hour"
    assert plainly_worded("Sam's salary is $95,000 a year.") == "Sam earns $95,000 a year."
    assert plainly_worded("The user's dentist appointment is on May 3") == (
        "The user sees the dentist on May 3"
    )
    assert plainly_worded("The user's appointment with Dr. Reyes is at noon") == (
        "The user sees Dr. Reyes at noon"
    )
    assert plainly_worded("The user has a dermatologist appointment on Monday") == (
        "The user sees the dermatologist on Monday"
    )
    # An appointment that is no one's to see is left as written.
    assert plainly_worded("The user's hair appointment is on Friday") == (
        "The user's hair appointment is on Friday"
    )


def test_an_nth_birthday_is_an_age_turned_and_a_payday_is_when_pay_comes() -> None:
    assert plainly_worded("Sam had his 40th birthday in May") == "Sam turned 40 in May"
    assert plainly_worded("Ana celebrated her tenth birthday") == "Ana turned 10"
    assert plainly_worded("Ana had her birthday party") == "Ana had her birthday party"
    assert plainly_worded("The user's payday is the 15th") == "The user gets paid on the 15th"


def test_a_home_that_is_somewhere_is_where_its_owner_lives() -> None:
    assert plainly_worded("The user's home is in Lisbon.") == "The user lives in Lisbon."
    assert plainly_worded("Sam's home is a flat.") == "Sam lives in a flat."
    assert plainly_worded("Sam's home is big.") == "Sam's home is big."


def test_a_meal_skipped_is_a_meal_not_eaten() -> None:
    assert plainly_worded("The user skips lunch") == "The user does not eat lunch"
    assert plainly_worded("The kids skip dinner") == "The kids do not eat dinner"
    assert plainly_worded("The user skipped breakfast") == "The user did not eat breakfast"
    assert plainly_worded("Skip the intro") == "Skip the intro"
