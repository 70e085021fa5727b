"""The last duplicate guard: why two texts worded alike still say different things."""

from __future__ import annotations

import pytest

from credence.memory.semantics.readings import another_reading


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("The user only eats meat on weekends", "The user eats only meat on weekends"),
        ("The user's boss's assistant schedules the 1:1s", "The user's assistant schedules them"),
        (
            "The user's mother-in-law's birthday is June 12",
            "The user's mother's birthday is June 12",
        ),
        ("The cleaner comes every Tuesday", "The cleaner comes every other Tuesday"),
        ("The user's brother lives in Chicago", "The user's brothers live in Chicago"),
        ("The user likes food mildly spicy", "The user likes food very spicy"),
        (
            "Deploys happen on Tuesdays and Thursdays",
            "Deploys happen on Tuesdays through Thursdays",
        ),
        ("Dr. Kim is in network for the user", "Dr. Kim is out of network for the user"),
        ("The user has two cats and a dog", "The user has two dogs and a cat"),
        ("The user's grandmother-in-law visits in May", "The user's grandmother visits in May"),
        ("The user drives his brother's car", "The user drives his brothers' car"),
        ("The user is renovating the kitchen", "The user has renovated the kitchen"),
        ("You needn't invite the neighbours", "You mustn't invite the neighbours"),
        # "owns" is read as "has", which carries no meaning word of its own.
        ("The user rents a flat in Leeds", "The user owns a flat in Leeds"),
        ("The user is moving to Oslo", "The user is considering moving to Oslo"),
        ("The user is changing jobs", "The user is thinking about changing jobs"),
        ("CI runs lint, unit tests, e2e tests and a scan", "CI runs lint, unit tests and a scan"),
        ("Pack socks, a charger and a passport", "Pack socks and a passport"),
        (
            "The red bike in the garage is the user's",
            "The red bike in the garage is the user's son's",
        ),
        ("The user filed the complaint", "The user's wife filed the complaint"),
        ("Bring a tent, a stove and a lantern", "Bring a tent and a stove"),
        # A particle makes another verb; owners in a row in another order are other people.
        ("The user lets the spare room", "The user lets out the spare room"),
        ("The user gave sugar last year", "The user gave up sugar last year"),
        ("The user's aunt's neighbour is a nurse", "The user's neighbour's aunt is a nurse"),
        # One owner named twice is another person: the boss's boss.
        ("The user's boss's name is Gregory Hale", "The user's boss's boss's name is Gregory Hale"),
        ("The pool is shut until the weekend", "The pool is shut until after the weekend"),
        ("The user keeps hens and a goat", "The user keeps hens and had a goat"),
        # A name of two words or more, grown, names another thing.
        ("The user writes in Google Docs", "The user writes in Google Docs Offline"),
        ("The user's laptop is a MacBook Air", "The user's laptop is a MacBook Air 13"),
        # Quoted words stand for themselves; a thing of someone's put where they stood.
        ('Never write "utilize" in reports', 'Never write "utilise" in reports'),
        ("Forward the receipts to the user", "Forward the receipts to the user's bookkeeper"),
        ("The user's sister is moving to Leeds", "The user is moving to Leeds"),
        # A word that makes its noun another thing: a half marathon is no marathon.
        ("The user is running a half marathon", "The user is running a marathon"),
        ("The user's former manager is Ana", "The user's manager is Ana"),
        ("The user is the vice president of sales", "The user is the president of sales"),
        # The one against one of several.
        ("The user is the founder of Acme", "The user is a founder of Acme"),
        ("The user is the owner of the cafe", "The user is an owner of the cafe"),
        # One of two things joined by "and" taken out or put in.
        ("The user is allergic to cats and dogs", "The user is allergic to cats"),
        ("The user is paid on the 15th", "The user is paid on the 15th and the 30th"),
        # A person of theirs put where they stood; who owns whom traded around one role.
        ("The user avoids nuts because they are allergic", "… because their son is allergic"),
        ("Carla is the user's manager", "The user is Carla's manager"),
        # Who is older, "their" being the user's.
        ("The user's brother is older than the user", "The user is older than their brother"),
        # Whose: one brother's car against the brothers' car.
        ("The user's brother's car is red", "The user's brothers' car is red"),
        # A length of time from now against how long a thing lasts.
        (
            "The user's lunch break is half an hour long",
            "The user's lunch break is in half an hour",
        ),
    ],
)
def test_words_that_barely_move_can_still_change_what_is_meant(old: str, new: str) -> None:
    assert another_reading(old, new)
    assert another_reading(new, old)


def test_a_cause_given_as_the_effect_is_another_story() -> None:
    old = "The user moved to Leeds because their partner got a job there"
    new = "The user's partner got a job in Leeds because the user moved there"
    assert another_reading(old, new) and another_reading(new, old)
    assert (
        another_reading(old, "Because their partner got a job there, the user moved to Leeds") == ""
    )


def test_a_cause_put_in_front_is_read_as_a_cause() -> None:
    old = "Because of back pain, the user uses a standing desk"
    assert another_reading(old, "Because of the standing desk, the user has back pain")
    assert another_reading(old, "The user uses a standing desk because of back pain") == ""


@pytest.mark.parametrize(
    ("old", "new"),
    [
        (
            "Archive newsletters from retailers automatically",
            "Archive all newsletters automatically",
        ),
        ("The user jogs in the park every morning", "The user jogs every morning"),
    ],
)
def test_a_phrase_of_detail_taken_out_says_it_of_more_things(old: str, new: str) -> None:
    assert another_reading(old, new)
    # Put in, the phrase narrows: a refinement, which the relation reads before this guard.
    assert another_reading(new, old) == ""


@pytest.mark.parametrize(
    ("old", "new"),
    [
        # The user is who every belief is about; "it's" owns nothing.
        ("The user's flight leaves at 9", "The flight leaves at 9"),
        (
            "Avoid March 3, the daughter's birthday",
            "Keep March 3 free; it's the daughter's birthday",
        ),
        # Two-part compounds are often one word; roles are counted either way.
        (
            "The user prefers window seats on long-haul flights",
            "On long flights, sit by the window",
        ),
        ("Reply to customer complaints within a day", "Answer complaints from customers in a day"),
        # An owner's "'s" is no plural: one daughter on both sides.
        (
            "The user's daughter's school starts at 8:15",
            "School starts at 8:15 for the user's daughter",
        ),
        # A length of time that describes a noun is no time from now.
        ("The team works in two-week sprints", "Sprints on the team last two weeks"),
        ("Don't run the dishwasher half empty", "Never run the dishwasher when it is half empty"),
        # One meaning spelled two ways is no swap.
        ("Prices are shown in euros", "Prices are shown in EUR"),
        ("The user owns a car", "The user has a car"),
        ("The user's son plays chess", "The son of the user plays chess"),
        # An aside dropped is no list item ("and" joins no list here).
        ("Use Black, the formatter, for Python", "Use Black for Python"),
        # Owners apart, in another order around "is", are the same owners.
        ("Tom's bike is the user's favourite", "The user's favourite is Tom's bike"),
        # A one-word name grown is often the same one in full; a date is no name.
        ("The user's manager is Ana", "The user's manager is Ana Silva"),
        ("The lease ends on March 14", "The lease ends on 14 March"),
        ("Priya Nair reviews the contracts", "The contracts are reviewed by Priya Nair"),
        # One side alone quoting says the same; "the user's" in a reworded sentence is the user.
        ("Sign off emails with 'Best, Sam'", "Sign off emails with Best, Sam"),
        ("The user's rent is $900 a month", "The user pays $900 a month in rent"),
        # "half" in an amount, "the"/"a" before no role.
        ("Lunch takes half an hour", "Lunch takes 30 minutes"),
        ("The user has a dog", "The user has the dog"),
        ("Carla is the user's manager", "The user's manager is Carla"),
        ("The user's mother lives in Porto", "Their mom lives in Porto"),
        # A phrase moved or grown is not taken out; "am" says "in the morning".
        (
            "The user walks the dog before breakfast",
            "Before eating breakfast, the user walks the dog",
        ),
        (
            "The user's laptop is a 14-inch MacBook",
            "The user's laptop is a MacBook with a 14-inch screen",
        ),
        (
            "The user wakes up at 6 am on weekdays",
            "On weekdays, the user wakes up at 6 in the morning",
        ),
    ],
)
def test_a_rewording_is_no_other_reading(old: str, new: str) -> None:
    assert another_reading(old, new) == ""
