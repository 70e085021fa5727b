"""Small words that change a statement: "and" / "or", quantifiers, directions, swapped roles."""

from __future__ import annotations

from credence.memory.semantics.small_words import (
    alternation_differs,
    attempt_differs,
    causative_differs,
    complement_differs,
    connective_differs,
    degree_differs,
    direction_differs,
    doer_and_done_to_exchanged,
    in_or_out_differs,
    obligation_lifted,
    people_counted_differently,
    qualifier_added,
    qualifier_differs,
    quantifier_differs,
    relation_swapped,
    roles_exchanged,
    runs_exchanged,
    strength_differs,
    voice_differs,
)
from credence.memory.semantics.wording import meaning, words_of


def _pair(old: str, new: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    return words_of(old), words_of(new)


def test_and_against_or_differs() -> None:
    assert connective_differs(*_pair("Use Python and Go", "Use Python or Go"))
    assert not connective_differs(*_pair("Use Python and Go", "Use Go and Python"))


def test_quantifiers_differ_only_when_both_quantify() -> None:
    assert quantifier_differs(*_pair("All invoices need approval", "Most invoices need approval"))
    assert not quantifier_differs(*_pair("All invoices need approval", "Every invoice needs it"))
    assert not quantifier_differs(*_pair("Invoices need approval", "Most invoices need approval"))
    # "at most" bounds a value; "every month" is no claim about how many.
    assert not quantifier_differs(*_pair("Spend at most $200 a month", "Spend $200 every month"))


def test_a_relation_word_swapped_alone_differs() -> None:
    assert relation_swapped(
        *_pair("Send the invoice to the client", "Send the invoice from the client")
    )
    assert relation_swapped(*_pair("Raise the limit by 10", "Raise the limit to 10"))
    assert relation_swapped(
        *_pair("Deploy Tuesdays and Thursdays", "Deploy Tuesdays through Thursdays")
    )
    assert not relation_swapped(*_pair("Send the invoice to the client", "Send it to the client"))


def test_two_words_apart_that_swap_places_are_exchanged_roles() -> None:
    old = meaning("The user's sister lives with their mother")
    assert roles_exchanged(old, meaning("The user's mother lives with their sister"))
    # Neighbours that swap are a rewording: "schedule meetings" / "meetings … scheduled".
    assert not roles_exchanged(
        meaning("Don't schedule meetings before 9am"),
        meaning("No meetings should be scheduled before 9am"),
    )
    assert not roles_exchanged(old, old)


def test_degrees_differ_only_when_both_grade() -> None:
    assert degree_differs(*_pair("The user likes food mildly spicy", "… likes food very spicy"))
    assert not degree_differs(*_pair("The user likes spicy food", "The user likes very spicy food"))


def test_every_other_is_not_every() -> None:
    assert alternation_differs(*_pair("The cleaner comes every Tuesday", "… every other Tuesday"))
    assert alternation_differs(*_pair("Water it every day", "Water it every second day"))
    assert not alternation_differs(*_pair("Water it every day", "Water it each day"))
    assert alternation_differs(*_pair("Cleaning is every Tuesday", "… on alternate Tuesdays"))
    # "every two weeks" and "fortnightly" say "every other week" too.
    assert not alternation_differs(*_pair("Cut it every other week", "Cut it every two weeks"))
    assert not alternation_differs(*_pair("Cut it every other week", "Cut it fortnightly"))


def test_in_is_not_out_of() -> None:
    assert in_or_out_differs(*_pair("Dr. Kim is in network", "Dr. Kim is out of network"))
    assert not in_or_out_differs(*_pair("Dr. Kim is in network", "Dr. Kim is in the network"))


def test_kin_counted_otherwise_differs_and_roles_do_not() -> None:
    assert people_counted_differently(
        *_pair("The user's brother lives in Chicago", "The user's brothers live in Chicago")
    )
    assert people_counted_differently(*_pair("The child eats early", "The children eat early"))
    # "customer complaints" / "complaints from customers": one meaning, counted either way.
    assert not people_counted_differently(
        *_pair("Answer customer complaints", "Answer complaints from customers")
    )


def test_a_word_that_holds_a_rule_back_is_found() -> None:
    assert qualifier_added(*_pair("Tests run on every push", "Tests run on every push except main"))
    assert qualifier_added(*_pair("The user checks Slack", "The user rarely checks Slack")) == (
        "rarely"
    )
    assert qualifier_added(*_pair("All members work remotely", "Some members work remotely"))
    assert qualifier_added(*_pair("Use tabs", "Use tabs in Go files")) == ""


def test_a_few_is_not_few_and_not_all_is_not_none() -> None:
    assert quantifier_differs(*_pair("A few tests are flaky", "Few tests are flaky"))
    assert quantifier_differs(*_pair("Not all rooms have a desk", "None of the rooms have a desk"))
    assert not quantifier_differs(*_pair("A few tests are flaky", "Some tests are flaky"))
    assert quantifier_differs(*_pair("Both parents sign the form", "Either parent signs the form"))
    assert not quantifier_differs(*_pair("Neither parent signs it", "None of the parents sign it"))
    assert quantifier_differs(*_pair("Use a single Redis instance", "Use several Redis instances"))


def test_a_place_word_swapped_alone_differs_but_in_and_on_may_say_one_place() -> None:
    assert relation_swapped(*_pair("The key is under the mat", "The key is on the mat"))
    assert relation_swapped(*_pair("The cat sleeps behind the sofa", "The cat sleeps in the sofa"))
    assert not relation_swapped(
        *_pair("The user is on the platform team", "The user is in the platform team")
    )
    assert not relation_swapped(*_pair("Spend over $50", "Spend above $50"))
    assert relation_swapped(
        *_pair("The office is closed until Monday", "The office is closed on Monday")
    )
    assert not relation_swapped(
        *_pair("Mark urgent tickets in red", "Mark urgent tickets with red")
    )


def test_working_for_is_not_working_with_and_being_is_not_having() -> None:
    assert relation_swapped(*_pair("The user works for Acme", "The user works with Acme"))
    assert relation_swapped(*_pair("The user is a doctor", "The user has a doctor"))


def test_a_start_is_not_an_end() -> None:
    assert direction_differs(
        *_pair("The user has lived in Austin since 2019", "The user lived in Austin until 2019")
    )
    assert not direction_differs(
        *_pair("Freeze deploys from Friday", "From Friday, freeze deploys")
    )
    assert not direction_differs(*_pair("Freeze deploys until Monday", "Freeze deploys"))


def test_needing_not_is_not_being_forbidden() -> None:
    assert obligation_lifted(words_of("You needn't tell the client"))
    assert obligation_lifted(words_of("You don't have to tell the client"))
    assert obligation_lifted(words_of("Code review is not required for docs"))
    assert not obligation_lifted(words_of("You mustn't tell the client"))
    assert not obligation_lifted(words_of("Don't tell the client"))


def test_trying_is_not_doing() -> None:
    assert attempt_differs(
        *_pair("The user managed to cancel the plan", "The user tried to cancel it")
    )
    assert attempt_differs(
        *_pair("The user cancelled the plan", "The user attempted to cancel the plan")
    )
    assert not attempt_differs(*_pair("The user tried sushi", "The user has tried sushi"))


def test_runs_swapped_around_a_one_way_word_are_exchanged_roles() -> None:
    assert runs_exchanged(
        *_pair(
            "The user uses Vim keybindings in VS Code", "The user uses VS Code keybindings in Vim"
        )
    )
    assert runs_exchanged(
        *_pair("Prefer dark roast over light roast", "Prefer light roast over dark roast")
    )
    # Clauses reordered around "is", or around nothing, say the same.
    assert not runs_exchanged(
        *_pair("KLM is the user's preferred airline", "The user's preferred airline is KLM")
    )
    assert not runs_exchanged(*_pair("Use tabs for Python", "For Python use tabs"))
    assert not runs_exchanged(*_pair("Buy milk and eggs", "Buy eggs and milk"))


def test_a_subject_acted_on_is_not_a_subject_acting() -> None:
    assert voice_differs(
        *_pair("The user was interviewed by a reporter", "The user interviewed a reporter")
    )
    assert voice_differs(*_pair("The lead reviewed the user", "The lead was reviewed by the user"))
    assert voice_differs(
        *_pair(
            "The frontend team reviews the design team's mockups",
            "The frontend team's mockups are reviewed by the design team",
        )
    )
    # The same event told from its other side is the same event; "by hand" and "by whoever"
    # name no one to compare.
    assert not voice_differs(
        *_pair("The user was interviewed by a reporter", "A reporter interviewed the user")
    )
    # The user who owns the doer is no other doer: "the user's neighbour" / "their neighbour".
    assert not voice_differs(
        *_pair(
            "The user's neighbor keeps the spare key",
            "The spare key is kept by their neighbor",
        )
    )
    assert not voice_differs(
        *_pair("The team reviews every PR", "Every PR is reviewed by the team before merging")
    )
    assert not voice_differs(
        *_pair(
            "The on-call engineer approves deploys", "Deploys are approved by whoever is on call"
        )
    )


def test_a_word_that_holds_a_rule_back_on_one_side_only_differs() -> None:
    assert qualifier_differs(
        *_pair("The user almost missed the flight", "The user missed the flight")
    )
    assert qualifier_differs(*_pair("The user uses the car", "The user hardly uses the car"))
    assert not qualifier_differs(*_pair("The user rarely drives", "The user rarely takes the car"))


def test_too_much_is_not_enough() -> None:
    assert degree_differs(*_pair("The font is too small", "The font is small enough"))
    assert not degree_differs(*_pair("The font is big enough", "The font is sufficiently big"))


def test_a_requirement_is_not_advice() -> None:
    assert strength_differs(*_pair("Commits should be signed", "Commits must be signed"))
    assert not strength_differs(*_pair("Commits must be signed", "Commits shall be signed"))
    assert not strength_differs(*_pair("Commits must be signed", "Sign every commit"))


def test_a_verb_that_turns_on_its_complement() -> None:
    assert complement_differs(
        *_pair("The user stopped talking to Sam", "The user stopped to talk to Sam")
    )
    assert complement_differs(*_pair("Remember locking the door", "Remember to lock the door"))
    assert not complement_differs(
        *_pair("The user stopped talking to Sam", "The user stopped talking")
    )


def test_having_a_thing_done_is_not_doing_it() -> None:
    assert causative_differs(*_pair("The user had her car repaired", "The user repaired her car"))
    assert causative_differs(*_pair("The user fixed the brakes", "The user got the brakes fixed"))
    # A perfect is no causative.
    assert not causative_differs(
        *_pair("The user has repaired the car", "The user repaired the car")
    )


def test_subject_and_object_swapped_around_a_verb_are_exchanged_roles() -> None:
    assert runs_exchanged(*_pair("The dog bit the cat at noon", "The cat bit the dog at noon"))
    assert not runs_exchanged(*_pair("Alice met Bob in Paris", "Bob met Alice in Paris"))


def test_the_doer_and_the_one_done_to_traded_places() -> None:
    assert doer_and_done_to_exchanged(
        *_pair("The user owes their brother $500", "The user's brother owes the user $500")
    )
    assert doer_and_done_to_exchanged(
        *_pair("Alice mentors Bob on Fridays", "Bob mentors Alice on Fridays")
    )
    # The one done to may be named with a name beside it.
    assert doer_and_done_to_exchanged(
        *_pair("The user owes their brother Sam $200", "The user's brother Sam owes the user $200")
    )
    # A passive names the doer last; "meets" relates both ways.
    assert not doer_and_done_to_exchanged(*_pair("Alice mentors Bob", "Bob is mentored by Alice"))
    assert not doer_and_done_to_exchanged(
        *_pair("Alice meets Bob weekly", "Bob meets Alice weekly")
    )


def test_steps_swapped_around_then_are_another_order() -> None:
    assert runs_exchanged(
        *_pair("Back up the data first, then migrate", "Migrate first, then back up the data")
    )
    assert runs_exchanged(
        *_pair("The user stretches and then jogs", "The user jogs and then stretches")
    )
    assert not runs_exchanged(*_pair("Test before you deploy", "Before you deploy, test"))


def test_people_swapped_across_two_clauses_are_exchanged_roles() -> None:
    assert runs_exchanged(
        *_pair("Her son cooks and the user washes up", "The user cooks and her son washes up")
    )
    # Two whole clauses in the other order say the same.
    assert not runs_exchanged(*_pair("Alice cooks and Bob cleans", "Bob cleans and Alice cooks"))
    # A predicate, not only a verb, may end the first clause.
    assert runs_exchanged(
        *_pair(
            "The user's sister is vegan, but the user eats fish",
            "The user is vegan, but the user's sister eats fish",
        )
    )


def test_another_preposition_before_a_time_is_another_time() -> None:
    assert relation_swapped(*_pair("Rent is due by the 3rd", "Rent is due on the 3rd"))
    assert relation_swapped(*_pair("Pay the invoice by Friday", "Pay the invoice on Friday"))
    assert relation_swapped(*_pair("She is away for a month", "She is away in a month"))
    assert relation_swapped(*_pair("The call is at 5pm", "The call is by 5pm"))
    # Before anything but a time, "in" and "on" often place one thing alike.
    assert not relation_swapped(*_pair("The user is in the team", "The user is on the team"))


def test_on_against_off_is_another_relation() -> None:
    assert relation_swapped(*_pair("The project is on schedule", "The project is off schedule"))
    assert relation_swapped(*_pair("Phase in the v1 API", "Phase out the v1 API"))
    assert relation_swapped(*_pair("Scale up the cluster", "Scale down the cluster"))


def test_them_after_a_verb_is_the_user_who_trades_places() -> None:
    assert doer_and_done_to_exchanged(
        *_pair("The user's niece texts them daily", "The user texts their niece daily")
    )
    assert not doer_and_done_to_exchanged(
        *_pair("The user's niece texts them daily", "The user's niece texts the user daily")
    )


def test_a_little_is_some_and_little_is_hardly_any() -> None:
    assert quantifier_differs(
        *_pair("The user knows a little German", "The user knows little German")
    )
    # After a determiner "little" is a size, and claims nothing.
    assert not quantifier_differs(*_pair("Walk the little dog", "Walk the small dog"))


def test_least_holds_a_rule_back_but_at_least_bounds_it() -> None:
    assert qualifier_differs(*_pair("Rust is their favourite", "Rust is their least favourite"))
    assert not qualifier_differs(*_pair("At least two reviews", "A minimum of two reviews"))


def test_advice_is_not_a_possibility() -> None:
    assert strength_differs(*_pair("You should call first", "You could call first"))
    assert not strength_differs(*_pair("You can call first", "You could call first"))


def test_under_a_negation_every_is_not_any() -> None:
    assert quantifier_differs(*_pair("Don't email every client", "Don't email any client"))
    assert not quantifier_differs(*_pair("Email every client", "Email any client"))


def test_qualifiers_that_hold_a_rule_back_as_far_are_one() -> None:
    assert not qualifier_differs(
        *_pair("The user almost always orders decaf", "The user nearly always orders decaf")
    )
    assert not qualifier_differs(*_pair("The user seldom drives", "The user rarely drives"))
    assert qualifier_differs(*_pair("The user almost always drives", "The user always drives"))
