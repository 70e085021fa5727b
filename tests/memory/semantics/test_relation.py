"""The pair judgement: structure decides the relation, cosine only closeness; the invariant."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from credence.memory.semantics.relation import (
    DUPLICATE_COSINE,
    PROHIBITION_COSINE,
    REWORDED_COSINE,
    is_english,
    opposed_words,
    relate,
    swapped_preference,
)
from credence.memory.semantics.statements import statement


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("Enable two-factor login for admins", "Disable two-factor login for admins"),
        ("Send the agenda before the meeting", "Send the agenda after the meeting"),
        ("Turn on verbose logging", "Turn off verbose logging"),
        ("Lock the laptop when leaving", "Unlock the laptop when leaving"),
        ("Include drafts in the report", "Exclude drafts from the report"),
    ],
)
def test_antonyms_without_a_negation_word_contradict(old: str, new: str) -> None:
    relation = relate(old, new, 0.93)
    assert (relation.kind, relation.contradiction) == ("contradiction", "antonym")
    assert opposed_words(old, new)


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("Use tabs, not spaces", "Use spaces, not tabs"),
        ("Prefer PostgreSQL over MySQL", "Prefer MySQL over PostgreSQL"),
        ("Choose trains instead of flights", "Choose flights instead of trains"),
        ("The user prefers tea to coffee", "The user prefers coffee to tea"),
    ],
)
def test_a_swapped_preference_contradicts_although_the_words_are_the_same(
    old: str, new: str
) -> None:
    assert swapped_preference(old, new)
    relation = relate(old, new, 0.99)
    assert (relation.kind, relation.contradiction) == ("contradiction", "swapped_preference")


def test_a_reordered_clause_is_not_a_swapped_preference() -> None:
    old, new = "Before deploying, run the migrations", "Run the migrations before deploying"
    assert not swapped_preference(old, new)
    assert relate(old, new, 0.97).kind == "duplicate"


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("Never deploy on Fridays", "Deploying on Fridays is allowed when the fix is urgent"),
        ("Don't commit to main", "Commit to main except when the release is blocked"),
        ("Always run the tests before merging", "Skipping tests before merging is fine"),
        ("Never deploy on Fridays", "Deploy on Fridays when shipping a hotfix"),
    ],
)
def test_a_scoped_exception_to_a_rule_is_flagged_as_one(old: str, new: str) -> None:
    relation = relate(old, new, 0.75)
    assert (relation.kind, relation.contradiction) == ("contradiction", "scoped_exception")


def test_a_value_change_names_old_and_new() -> None:
    relation = relate("Use yarn for the frontend", "Use pnpm for the frontend", 0.8)
    assert relation.contradiction == "value_change"
    assert [(c.old, c.new) for c in relation.changes] == [("yarn", "pnpm")]


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("Cache the results for 90 minutes", "Cache the results for 1.5 hours"),
        ("Reject attachments over 10 MB", "Reject attachments over ten megabytes"),
        ("Flag transactions above $10k", "Flag transactions above $10,000"),
        ("Limit uploads to 1.5M rows", "Limit uploads to 1,500,000 rows"),
    ],
)
def test_numbers_in_other_spellings_are_the_same_value(old: str, new: str) -> None:
    assert relate(old, new, 0.9).kind == "duplicate"


def test_a_paraphrase_is_a_duplicate_only_when_close_and_a_refinement_never_is() -> None:
    assert relate("Keep replies short", "Keep the replies brief", 0.86).kind == "duplicate"
    assert relate("Keep replies short", "Keep the replies brief", 0.4).kind == "compatible"
    assert relate("Keep replies short", "Keep answers brief", 0.7).kind == "duplicate"  # synonyms
    assert relate("Keep replies short", "Keep replies pleasant", 0.9).settled is False
    refined = relate("Use yarn", "Use yarn for the frontend", 0.9)
    assert refined.kind == "refinement"


def test_two_negative_restatements_agree() -> None:
    relation = relate(
        "Never store passwords in plain text", "Don't store passwords in plain text", 0.95
    )
    assert relation.kind == "duplicate"


def test_another_language_is_never_a_duplicate_and_is_unsettled() -> None:
    assert not is_english("Antworte Kunden innerhalb eines Tages")
    assert is_english("Prefer SI units")
    relation = relate(
        "Reply to customers within a day", "Antworte Kunden innerhalb eines Tages", 0.9
    )
    assert relation.kind != "duplicate"
    assert not relation.settled


# The invariant, as a property: whatever the cosine, a pair that differs in a slot value,
# polarity or scope is never a duplicate.
_VERBS = st.sampled_from(["Use", "Run", "Send", "Archive", "Review", "Deploy", "Store"])
_OBJECTS = st.sampled_from(["the backups", "invoices", "the release", "logs", "tickets"])
_VALUES = st.sampled_from(
    [
        "5 minutes",
        "2 hours",
        "10 MB",
        "3 GB",
        "$500",
        "9am",
        "17:30",
        "Monday",
        "Friday",
        "Alice",
        "Bob",
        "PostgreSQL",
        "MySQL",
        "CSV",
        "JSON",
        "eu-west-1",
        "us-east-1",
        "40%",
        "12",
    ]
)
_SCOPES = st.sampled_from(
    [
        "unless the reviewer asks",
        "only for urgent fixes",
        "when it is late",
        "when writing to the legal team",
        "once the build is green",
    ]
)


@settings(max_examples=300, deadline=None)
@given(_VERBS, _OBJECTS, _VALUES, _VALUES, st.floats(0.0, 1.0))
def test_a_changed_value_is_never_a_duplicate(verb, thing, old_value, new_value, cosine) -> None:
    old = f"{verb} {thing} with {old_value}"
    new = f"{verb} {thing} with {new_value}"
    if old_value != new_value:
        assert relate(old, new, cosine).kind != "duplicate", (old, new)


@settings(max_examples=200, deadline=None)
@given(
    _VERBS,
    _OBJECTS,
    _VALUES,
    st.sampled_from(["Never", "Do not", "Don't", "Stop"]),
    st.floats(0.0, 1.0),
)
def test_a_changed_polarity_is_never_a_duplicate(verb, thing, value, negation, cosine) -> None:
    old = f"{verb} {thing} with {value}"
    new = f"{negation} {verb.lower()} {thing} with {value}"
    assert relate(old, new, cosine).kind != "duplicate"
    assert relate(new, old, cosine).kind != "duplicate"


@settings(max_examples=200, deadline=None)
@given(_VERBS, _OBJECTS, _VALUES, _SCOPES, st.floats(0.0, 1.0))
def test_an_added_scope_is_never_a_duplicate(verb, thing, value, scope, cosine) -> None:
    old = f"{verb} {thing} with {value}"
    new = f"{old} {scope}"
    assert relate(old, new, cosine).kind != "duplicate"
    assert relate(new, old, cosine).kind != "duplicate"


@settings(max_examples=200, deadline=None)
@given(_VERBS, _OBJECTS, _VALUES, st.sampled_from(["Never", "Do not", "Don't"]), st.floats(0, 1))
def test_a_preference_against_its_prohibition_is_never_a_duplicate(
    verb, thing, value, negation, cosine
) -> None:
    # The "not" of "A, not B" negates B alone: the rule is no prohibition of A.
    old = f"{verb} {thing} with {value}, not by hand"
    for new in (
        f"{negation} {verb.lower()} {thing} with {value}",
        f"{negation} {verb.lower()} {thing} with {value} instead of by hand",
    ):
        assert relate(old, new, cosine).kind != "duplicate", (old, new)
        assert relate(new, old, cosine).kind != "duplicate", (new, old)


def test_a_negated_bound_is_its_complement() -> None:
    same = ("Do not spend more than $50 on gifts", "Spend at most $50 on gifts")
    assert relate(*same, 0.96).kind == "duplicate"
    assert relate(*same, 0.96).evidence == "the same bound, negated"
    # Under 72 / no longer than 72: the same limit, give or take its end; never the opposite.
    near = relate("Keep lines under 72 characters", "No line may be longer than 72 characters", 0.9)
    assert (near.kind, near.settled) == ("compatible", False)
    assert relate(*same, 0.6).kind != "duplicate"
    # The same bound the same way round, negated on one side only, is the opposite advice.
    opposite = relate("Never spend more than $50 on gifts", "Spend more than $50 on gifts", 0.94)
    assert opposite.kind == "contradiction"
    other = relate("Never spend more than $50 on gifts", "Spend at most $80 on gifts", 0.9)
    assert other.kind != "duplicate"


def test_the_duplicate_floor_is_a_cosine() -> None:
    assert 0.0 < DUPLICATE_COSINE < 1.0


_THINGS = st.sampled_from(["tabs", "spaces", "PostgreSQL", "MySQL", "tea", "coffee", "trains"])
_MARKERS = st.sampled_from(["over", "rather than", "instead of", "to", ", not"])


@settings(max_examples=200, deadline=None)
@given(_THINGS, _THINGS, _MARKERS, st.floats(0.0, 1.0))
def test_a_swapped_preference_is_never_a_duplicate(first, second, marker, cosine) -> None:
    if first != second:
        old, new = f"Prefer {first} {marker} {second}", f"Prefer {second} {marker} {first}"
        assert relate(old, new, cosine).kind != "duplicate", (old, new)


_FRAMES = (
    "Send the {} report to the finance team every Friday",
    "When the build fails on the main branch, tell {} before anything else",
    "{} keeps the spare keys for the office",
    "The maximum upload size for customers is {}",
)
_SLOT_PAIRS = (
    ("Alice", "Bob"),
    ("10 MB", "10 GB"),
    ("20", "25"),
    ("v2.1", "v2.3"),
    ("eu-west-1", "us-east-1"),
    ("at 9am", "at 10am"),
)


@pytest.mark.parametrize("frame", _FRAMES)
@pytest.mark.parametrize(("left", "right"), _SLOT_PAIRS)
def test_a_differing_name_number_unit_or_code_token_is_never_a_duplicate(
    frame: str, left: str, right: str
) -> None:
    relation = relate(frame.format(left), frame.format(right), 0.99)
    assert relation.kind != "duplicate"


@pytest.mark.parametrize(
    ("old", "new"),
    [
        (
            "The user wants the heating turned up at night",
            "The user wants the heating turned down at night",
        ),
        ("Book window seats, not aisle seats", "Book aisle seats, not window seats"),
        ("Keep the summary short", "Keep the summary long"),
    ],
)
def test_an_opposite_or_exchanged_preference_at_high_cosine_is_a_contradiction(
    old: str, new: str
) -> None:
    relation = relate(old, new, 0.97)
    assert relation.kind == "contradiction"


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("Organise the photos by year", "Organize the photos by year"),
        ("Pick a neutral colour for the slides", "Pick a neutral color for the slides"),
        ("Analyse the survey before the meeting", "Analyze the survey before the meeting"),
    ],
)
def test_british_and_american_spellings_of_one_word_are_a_duplicate(old: str, new: str) -> None:
    assert relate(old, new, 0.95).kind == "duplicate"
    assert relate(old, new, 0.5).kind != "duplicate"


def test_a_unit_named_without_a_number_swapped_for_another_is_a_value_change() -> None:
    relation = relate("Weigh the flour in grams", "Weigh the flour in ounces", 0.9)
    assert (relation.kind, relation.contradiction) == ("contradiction", "value_change")
    # Kitchen measures are units too: "in cups" is another unit, not an unsettled synonym.
    relation = relate("Measure flour in grams", "Measure flour in cups", 0.9)
    assert (relation.kind, relation.contradiction) == ("contradiction", "value_change")
    relation = relate("Use a teaspoon of salt", "Use a tablespoon of salt", 0.9)
    assert (relation.kind, relation.contradiction) == ("contradiction", "value_change")


def test_one_more_ordinary_word_in_a_prohibition_is_the_same_prohibition() -> None:
    old, new = "Never send drafts to the client", "Don't send draft versions to the client"
    assert relate(old, new, DUPLICATE_COSINE + 0.01).kind == "duplicate"
    assert relate(old, new, PROHIBITION_COSINE - 0.01).kind != "duplicate"
    # A positive rule with a word that narrows it is a refinement, and a named thing is never
    # dropped.
    assert relate("Send drafts to the client", "Send signed drafts to the client", 0.9).kind != (
        "duplicate"
    )
    assert relate(old, "Never send drafts to the client in Berlin", 0.95).kind != "duplicate"


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("Invoices for Acme go to Maria", "Invoices for Globex go to Maria"),
        ("The Berlin office closes at 6pm", "The Lisbon office closes at 6pm"),
        ("Ask Tom about the Django upgrade", "Ask Tom about the Rails upgrade"),
    ],
)
def test_another_subject_is_flagged_for_review_not_a_contradiction(old: str, new: str) -> None:
    relation = relate(old, new, 0.9)
    assert (relation.kind, relation.settled) == ("compatible", False)


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("The office is in Berlin", "The office is in Lisbon"),
        ("Send the report to Maria", "Send the report to Jonas"),
        ("Cache results for 90 minutes", "Cache results for 2 hours"),
    ],
)
def test_another_value_for_the_same_subject_is_still_a_value_change(old: str, new: str) -> None:
    relation = relate(old, new, 0.9)
    assert (relation.kind, relation.contradiction) == ("contradiction", "value_change")


def test_an_order_word_that_differs_keeps_a_close_pair_from_being_a_duplicate() -> None:
    relation = relate(
        "In reports put the summary first, then the details for the team",
        "In reports give the details first and end with the summary for the team",
        0.9,
    )
    assert relation.kind != "duplicate"
    assert not relation.settled


def test_a_layout_is_a_value_a_duplicate_may_not_differ_in() -> None:
    relation = relate(
        "Present the options in a table with price and weight",
        "Present the options in a bulleted list with price and weight",
        0.95,
    )
    assert relation.kind != "duplicate"


def test_a_preference_reversed_in_other_words_is_never_a_duplicate() -> None:
    for old, new in [
        ("The user likes tea more than coffee", "The user prefers coffee to tea"),
        ("Prefer tea over coffee", "Favour coffee over tea"),
        ("Email the landlord instead of phoning", "Phone the landlord rather than emailing"),
    ]:
        relation = relate(old, new, 0.95)
        assert (relation.kind, relation.contradiction) == ("contradiction", "swapped_preference")


def test_a_negated_permission_restates_the_prohibition() -> None:
    relation = relate(
        "Never force-push to shared branches",
        "Force-pushing to shared branches is not allowed",
        0.9,
    )
    assert relation.kind == "duplicate"
    # …whereas a granted permission is an exception to it.
    exception = relate(
        "Never force-push to shared branches",
        "Force-pushing to shared branches is allowed when the release is blocked",
        0.8,
    )
    assert exception.contradiction == "scoped_exception"


def test_opposite_words_about_two_things_are_flagged_not_a_contradiction() -> None:
    relation = relate("The user's cat eats wet food", "The user's dog eats dry food", 0.8)
    assert relation.kind == "compatible"
    assert not relation.settled
    same_thing = relate("The user's cat eats wet food", "The user's cat eats dry food", 0.9)
    assert same_thing.contradiction == "antonym"


def test_adverbs_and_superlatives_of_listed_antonyms_are_opposites() -> None:
    assert opposed_words("The user invests aggressively", "The user invests conservatively")
    assert opposed_words("Book the cheapest flights", "Book premium flights")


def test_a_value_swapped_under_a_light_paraphrase_is_a_value_change() -> None:
    relation = relate(
        "The train to Leeds departs at 8:15 am", "The Leeds train leaves at 9:15 am", 0.9
    )
    assert relation.contradiction == "value_change"
    assert [(c.old, c.new) for c in relation.changes] == [("8:15 am", "9:15 am")]


def test_an_absolute_rule_whose_value_changes_under_a_condition_is_an_exception() -> None:
    relation = relate(
        "Always reply in English", "When the user writes in German, reply in German", 0.7
    )
    assert relation.contradiction == "scoped_exception"


def test_a_name_opening_the_sentence_changed_is_a_value_change() -> None:
    relation = relate("Amara owns the release checklist", "Tobias owns the release checklist", 0.8)
    assert relation.contradiction == "value_change"
    assert [(c.old, c.new) for c in relation.changes] == [("Amara", "Tobias")]
    verb = relate(
        "Store invoices in the finance folder", "Record invoices in the finance folder", 0.9
    )
    assert verb.kind != "contradiction"


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("Archive finished projects", "Archive completed projects"),
        ("Do not discuss salaries in the team chat", "Never talk about salaries in the team chat"),
        ("Limit query results to 10k rows", "Cap query results at 10,000 rows"),
        # A light verb and an action's noun say the action.
        ("The user decided to move to Lisbon", "The user made the decision to move to Lisbon"),
        ("The user naps after lunch", "The user takes a nap after lunch"),
        ("The user pays the loan on the 5th", "The user makes a payment on the loan on the 5th"),
        # Places said in two words that one word says.
        ("The gym is across from the bakery", "The gym is opposite the bakery"),
        ("The office is next to the station", "The office is beside the station"),
        ("The user lives near the river", "The user lives close to the river"),
        ("The user's TV is above the fireplace", "The user's television is above the fireplace"),
        ("The user's son is three and a half years old", "The user's son is 3.5 years old"),
        (
            "Remind the user to take their meds at 8",
            "Remind the user to take their medications at 8",
        ),
        ("The user pays $15.99 a month for Netflix", "Netflix costs the user $15.99 a month"),
        # "Cut back on" is "reduce"; "whenever" sets the condition "when" does.
        ("The doctor told the user to cut back on salt", "The doctor told the user to reduce salt"),
        (
            "Notify the car service when the flight is late",
            "Notify the car service whenever the flight is late",
        ),
        # A passport runs out as it expires; training for a race is preparing for it.
        ("The user's passport expires in March", "The user's passport runs out in March"),
        ("The user is training for a marathon", "The user is preparing for a marathon"),
        ("Sarah is responsible for on-call", "On-call is Sarah's responsibility"),
        ("The user prefers tea to coffee", "The user would rather have tea than coffee"),
        ("The user's manager is Rachel Kim", "The user reports to Rachel Kim"),
        ("The user's car lacks air conditioning", "The user's car has no air conditioning"),
        # What is backed up has a backup taken; what stands at the top of a text opens it.
        (
            "The database is backed up every night at 2 am",
            "Every night at 2 am, a backup of the database is taken",
        ),
        (
            "Put the key decision at the top of every update",
            "Every update should open with the key decision",
        ),
        # "Able to" is "can", "continues to" is "still", "right now" is "currently".
        ("The user is able to work remotely on Fridays", "The user can work remotely on Fridays"),
        ("The user still sees their therapist", "The user continues to see their therapist"),
        (
            "The user's membership is not active right now",
            "The user's membership is currently inactive",
        ),
    ],
)
def test_synonyms_from_the_thesaurus_make_a_duplicate(old: str, new: str) -> None:
    assert relate(old, new, 0.85).kind == "duplicate"


@pytest.mark.parametrize(
    ("old", "new"),
    [
        (
            "The user made the decision to move to Lisbon",
            "The user regrets the decision to move to Lisbon",
        ),
        ("The user takes a walk after dinner", "The user takes a nap after dinner"),
        ("The user made a payment on the loan", "The user missed a payment on the loan"),
        ("The office is next to the station", "The office is opposite the station"),
        ("The user pays Ana $50 a week", "Ana pays the user $50 a week"),
        ("The user paid $300 for the bike", "The user was paid $300 for the bike"),
        ("The office is next to the station", "The office is near the station"),
        ("The user is training for a half marathon", "The user is training for a marathon"),
        (
            "The doctor told the user to cut back on salt",
            "The doctor told the user to cut out salt",
        ),
        ("The user's manager is Rachel Kim", "Rachel Kim reports to the user"),
        ("The user prefers tea to coffee", "The user would rather have coffee than tea"),
        # Able to once is not able to now.
        ("The user was able to work remotely", "The user can work remotely"),
    ],
)
def test_a_light_verb_phrase_changed_is_no_duplicate(old: str, new: str) -> None:
    assert relate(old, new, 0.9).kind != "duplicate"


def test_two_prohibitions_in_other_words_are_one_lesson_a_little_further_apart() -> None:
    old = "Don't recommend crypto investments"
    new = "Never suggest cryptocurrency as something to invest in"
    assert relate(old, new, PROHIBITION_COSINE).kind == "duplicate"
    # Every word answered (a synonym, one family): still the same lesson a little lower, but
    # not below the floor for rewording.
    assert relate(old, new, REWORDED_COSINE).kind == "duplicate"
    assert relate(old, new, REWORDED_COSINE - 0.01).kind != "duplicate"
    permission = ("Recommend crypto investments", "Suggest crypto to invest in")
    assert relate(*permission, REWORDED_COSINE - 0.01).kind != "duplicate"


def test_a_name_opening_one_sentence_and_inside_the_other_is_one_value() -> None:
    relation = relate(
        "Don't use Comic Sans in any document", "Comic Sans is never acceptable in documents", 0.8
    )
    assert relation.kind == "duplicate"
    changed = relate("Don't use Comic Sans in documents", "Don't use Arial in documents", 0.9)
    assert changed.kind != "duplicate"


@pytest.mark.parametrize(
    ("old", "new"),
    [
        (
            "Label spreadsheet columns in plain English.",
            "Column headers in spreadsheets should be written in everyday English.",
        ),
        (
            "Never force-push to shared branches.",
            "Force-pushing onto branches other people work on is not allowed.",
        ),
    ],
)
def test_a_paraphrase_reworded_across_the_sentence_is_a_duplicate(old: str, new: str) -> None:
    relation = relate(old, new, REWORDED_COSINE + 0.02)
    assert relation.kind == "duplicate"
    assert relate(old, new, REWORDED_COSINE - 0.02).kind != "duplicate"


def test_a_value_rewritten_in_place_is_no_rewording() -> None:
    old = "Play upbeat music during work sessions."
    new = "Play slow, calming music during work sessions."
    # Below the older closeness floor only rewording could make a duplicate; it does not.
    assert relate(old, new, DUPLICATE_COSINE - 0.01).kind != "duplicate"


@pytest.mark.parametrize(
    ("old", "new"),
    [
        (
            "The user wants notifications turned on for build failures.",
            "The user wants notifications turned off for build failures.",
        ),
        ("Frontend code uses two-space indentation.", "Backend code uses four-space indentation."),
        (
            "Write commit messages in English",
            "Write commit messages in English using the imperative mood",
        ),
    ],
)
def test_an_opposite_another_number_or_an_addition_is_never_a_duplicate(old: str, new: str) -> None:
    assert relate(old, new, 0.97).kind != "duplicate"


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("Read the contract fully before signing", "Read the whole contract before signing"),
        ("Do not send invoices on weekends", "Never send out invoices on a Saturday or Sunday"),
        ("Greet users by their first name", "Address users by their first name"),
    ],
)
def test_adverbs_day_sets_and_thesaurus_synonyms_keep_a_duplicate(old: str, new: str) -> None:
    assert relate(old, new, 0.85).kind == "duplicate"


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("Tom leads the infrastructure team.", "The infrastructure team is led by Tom."),
        ("Logs are kept for 90 days.", "Logs are retained for ninety days."),
    ],
)
def test_irregular_verb_forms_meet_their_base_form(old: str, new: str) -> None:
    assert relate(old, new, 0.91).kind == "duplicate"


def test_an_irregular_past_of_an_antonym_still_contradicts() -> None:
    relation = relate("The landlord allowed pets in the flat", "The landlord forbade pets", 0.9)
    assert relation.kind == "contradiction"


def test_one_added_verb_rephrases_and_one_added_detail_refines() -> None:
    rephrased = relate(
        "Use pytest for all unit tests in this repository.",
        "All unit tests in this repo should be written with pytest.",
        0.92,
    )
    assert rephrased.kind == "duplicate"
    assert relate("Use yarn", "Use yarn for the frontend", 0.92).kind == "refinement"
    assert relate("Write tests", "Write integration tests", 0.92).kind == "refinement"


def test_an_ongoing_verb_opening_a_coordinated_clause_is_no_paraphrase() -> None:
    old = "The user speaks Spanish and French."
    learning = relate(old, "The user speaks Spanish and is learning French.", 0.93)
    assert learning.kind == "refinement"
    # A verb in the same tense opening the clause says no more: "opens at 8 and closes at 10".
    hours = "The pharmacy opens at 8 am and closes at 10 pm."
    assert relate("The pharmacy is open from 8 am to 10 pm.", hours, 0.93).kind == "duplicate"


def test_a_negating_prefix_and_a_negation_word_say_one_thing() -> None:
    old = "The user dislikes emoji in commit messages."
    same = relate(old, "The user doesn't like emojis in commit messages.", 0.94)
    assert same.kind == "duplicate"
    elsewhere = relate(old, "The user doesn't like emoji in release notes.", 0.94)
    assert elsewhere.kind != "duplicate"
    assert relate(old, "The user likes emoji in commit messages.", 0.94).kind == "contradiction"


def test_a_lexicon_antonym_under_a_negation_still_goes_to_a_reviewer() -> None:
    relation = relate("Never disable the firewall", "Enable the firewall", 0.9)
    assert relation.kind != "duplicate"
    assert not relation.settled


def test_a_locale_written_as_us_is_a_country_not_the_pronoun() -> None:
    changed = relate("Write dates in the US format.", "Write dates in the UK format.", 0.86)
    assert (changed.kind, changed.contradiction) == ("contradiction", "value_change")
    same = relate("Use American spelling.", "Use US spelling.", 0.88)
    assert same.kind == "duplicate"
    assert "american" not in statement("Email the report to us.").canons
    # The pronoun is no value of its own, but another person is never the same lesson.
    recipient = relate("Email the report to us.", "Email the report to them.", 0.9)
    assert recipient.kind != "duplicate"
    assert not recipient.settled
    assert relate("Send us the agenda.", "Send the agenda to us.", 0.95).kind == "duplicate"


def test_spellings_of_one_currency_are_one_value() -> None:
    assert relate("Prices are shown in euros.", "Prices are shown in EUR.", 0.83).kind == (
        "duplicate"
    )
    changed = relate("Prices are shown in euros.", "Prices are shown in USD.", 0.8)
    assert changed.kind == "contradiction"


def test_the_same_amount_in_another_currency_is_a_value_change() -> None:
    changed = relate("The price is 20 USD.", "The price is 20 euros.", 0.84)
    assert (changed.kind, changed.contradiction) == ("contradiction", "value_change")
    assert changed.evidence == "20 USD → 20 euros"


def test_sharing_only_the_subject_is_not_the_same_lesson() -> None:
    # Close by cosine, one shared word (the subject): a correction, never a duplicate.
    assert relate("The user is vegetarian.", "The user eats meat.", 0.79).kind != "duplicate"
    old, new = "Don't disturb the user during their focus block.", "Never interrupt the user"
    assert relate(old, f"{new} while they're in focus time.", 0.83).kind == "duplicate"


def test_the_antonym_lists_name_each_pair_once() -> None:
    from credence.memory.semantics.lexicon import _ANTONYM_WORDS, _COMPLEMENTARY_WORDS

    words = _ANTONYM_WORDS + _COMPLEMENTARY_WORDS
    pairs = [frozenset(pair) for pair in zip(words[::2], words[1::2], strict=True)]
    repeated = sorted(" ".join(sorted(p)) for p in set(pairs) if pairs.count(p) > 1)
    assert not repeated
    assert all(len(pair) == 2 for pair in pairs)  # no word is its own opposite


@pytest.mark.parametrize(
    ("old", "new", "change"),
    [
        (
            "Send the monthly invoice to clients as a PDF.",
            "Send the monthly invoice to clients as a shared Google Sheet.",
            ("PDF", "shared Google Sheet"),
        ),
        (
            "Give the weekly summary as a numbered list.",
            "Give the weekly summary as a short paragraph.",
            ("numbered list", "short paragraph"),
        ),
    ],
)
def test_one_slot_refilled_in_the_same_sentence_is_a_value_change(
    old: str, new: str, change: tuple[str, str]
) -> None:
    relation = relate(old, new, 0.9)
    assert (relation.kind, relation.contradiction) == ("contradiction", "value_change")
    assert [(c.old, c.new) for c in relation.changes] == [change]


@pytest.mark.parametrize(
    ("old", "new"),
    [
        # One word for one word: a synonym no thesaurus lists, or not; a human decides.
        (
            "Test backups by restoring them every month.",
            "Audit backups by restoring them every month.",
        ),
        # What the rule is about, not its value.
        ("Invoices for Acme go to Maria Lopez.", "Invoices for Globex Corp go to Maria Lopez."),
        # Close enough to pass for "the same lesson in other words", but one slot refilled.
        ("Contact the user's landlord by email.", "Contact the user's landlord by text message."),
        ("The user's accountant is Helen Park.", "The user's financial adviser is Helen Park."),
    ],
)
def test_a_refilled_slot_that_may_say_the_same_or_names_the_subject_stays_unsettled(
    old: str, new: str
) -> None:
    relation = relate(old, new, 0.98)
    assert relation.kind == "compatible" and not relation.settled


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("Back up the database every 6 hours.", "Back up the database four times a day."),
        ("Rotate the API credentials every 7 days.", "Rotate the API credentials once a week."),
        ("Feed the cat wet food twice a day.", "Feed the cat wet food two times daily."),
        ("Hold the retro every 14 days.", "Hold the retro once every two weeks."),
    ],
)
def test_one_recurrence_said_two_ways_is_a_duplicate(old: str, new: str) -> None:
    assert relate(old, new, 0.95).kind == "duplicate"


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("Back up the database every 6 hours.", "Back up the database twice a day."),
        ("Rotate the API credentials every 7 days.", "Rotate the API credentials monthly."),
        ("Water the plants three times a week.", "Water the plants every day."),
    ],
)
def test_another_recurrence_is_a_value_change(old: str, new: str) -> None:
    relation = relate(old, new, 0.95)
    assert relation.kind == "contradiction" and relation.contradiction == "value_change"


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("The user's weekday alarm is set for 6:30.", "The user's weekend alarm is set for 8:30."),
        ("The user's morning run is 5 km.", "The user's evening run is 8 km."),
        ("The flight to Lisbon departs at 07:45.", "The flight to Berlin departs at 18:20."),
    ],
)
def test_two_changes_apart_around_a_shared_word_are_likely_two_things(old: str, new: str) -> None:
    # The first names which thing, the second its value; a reviewer sees it, flagged.
    relation = relate(old, new, 0.9)
    assert relation.kind == "compatible" and not relation.settled


def test_two_changes_side_by_side_stay_one_correction() -> None:
    relation = relate("Send the report to Alice at 9am.", "Send the report to Bob at 10am.", 0.9)
    assert relation.kind == "contradiction" and relation.contradiction == "value_change"


def test_a_statement_with_a_negative_clause_added_refines_it() -> None:
    old = "Use descriptive variable names in the user's code."
    added = "Use descriptive variable names in the user's code, and avoid single-letter names."
    assert relate(old, added, 0.6).kind == "refinement"
    # A clause that sets a scope is an exception to review, not a refinement.
    scoped = "Use descriptive variable names in the user's code, and never unless asked."
    assert relate(old, scoped, 0.6).kind != "refinement"


def test_another_holder_of_a_taste_is_another_person_not_a_correction() -> None:
    relation = relate("Alice prefers early meetings.", "Ben prefers early meetings.", 0.9)
    assert relation.kind == "compatible" and not relation.settled
    # Who holds a role is a value: naming another is a correction.
    relation = relate("Maria approves expense claims.", "Jonas approves expense claims.", 0.9)
    assert relation.kind == "contradiction" and relation.contradiction == "value_change"


def test_an_environment_name_opening_an_instruction_is_its_verb() -> None:
    old, new = "Test backups by restoring them.", "Verify backups by restoring them."
    assert relate(old, new, 0.9).kind == "duplicate"
    # Elsewhere it still names the environment.
    relation = relate("Deploy to test first.", "Deploy to staging first.", 0.9)
    assert relation.kind == "contradiction" and relation.contradiction == "value_change"


def test_an_activity_or_a_count_reworded_is_not_a_scope_that_differs() -> None:
    # "when flying" names where the preference applies, as "on flights" does; "once a week"
    # counts, as "weekly" does. Cosines are all-MiniLM-L6-v2's for each pair.
    flying = relate(
        "The user prefers aisle seats on flights.",
        "When flying, the user would rather sit in an aisle seat.",
        0.83,
    )
    assert flying.kind == "duplicate"
    weekly = relate(
        "Water the fiddle-leaf fig once a week.", "Give the fiddle-leaf fig a drink weekly.", 0.86
    )
    assert weekly.kind == "duplicate"
    # A real condition still differs: never a duplicate, and a human sees it.
    condition = relate("Water the fig once a week.", "Water the fig once the soil is dry.", 0.82)
    assert condition.kind != "duplicate"


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("Ask the user which timezone they are in", "Ask the user what time zone they are in"),
        ("Run the tests before every release", "Prior to each release, run the tests"),
        ("Use four spaces for indentation, not tabs", "Indent with four spaces rather than tabs"),
        (
            "Mention the deadline in the first paragraph",
            "State the deadline in the opening paragraph",
        ),
    ],
)
def test_compounds_prior_to_and_a_contrasting_not_read_as_what_they_mean(old, new) -> None:
    assert relate(old, new, 0.9).kind == "duplicate", relate(old, new, 0.9)


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("Turn notifications on at night", "Turn notifications off at night"),
        ("Leave the footer in", "Leave the footer out"),
        ("The user lives in Berlin", "The user used to live in Berlin"),
        ("Call the user after 9pm", "Refrain from calling the user after 9pm"),
        ("The user wants replies in English", "The user wants replies in English only"),
        ("Reply in English", "Reply in English unless asked otherwise"),
        (
            "The user's daughter is older than her brother",
            "The user's daughter is younger than her brother",
        ),
        ("The user's manager is Alice", "The user's manager was Alice"),
        ("The user owns a car", "The user owned a car"),
        ("The user wants to learn Spanish", "The user learned Spanish"),
        ("The user is allergic to nuts", "The user might be allergic to nuts"),
        ("The user's sister lives with their mother", "The user's mother lives with their sister"),
        ("You must sign the form", "You may sign the form"),
        ("Use Python and Go", "Use Python or Go"),
        ("Raise the limit by 10", "Raise the limit to 10"),
        ("Send the invoice to the client", "Send the invoice from the client"),
        ("All invoices need approval", "Most invoices need approval"),
        ("Water the plants more than once a week", "Water the plants once a week"),
        ("The user is training for a marathon", "The user trained for a marathon"),
        ("Use C# for the backend", "Use C for the backend"),
        ("Backups should run nightly", "Backups should have run nightly"),
        ("Mix the paint at a 1:2 ratio", "Mix the paint at a 2:1 ratio"),
        ("Connect to the API over HTTP", "Connect to the API over HTTPS"),
        (
            "The nightly backup finishes before 3 a.m.",
            "The nightly backup fails to finish before 3 a.m.",
        ),
        ("The cleaner comes every Tuesday", "The cleaner comes every other Tuesday"),
        ("The user's brother lives in Chicago", "The user's brothers live in Chicago"),
        (
            "Dr. Kim is in network for the user's insurance",
            "Dr. Kim is out of network for the user's insurance",
        ),
        ("Use Python 3.10 for the service", "Use Python 3.1 for the service"),
        ("Set the discount to 5%", "Set the discount to 5"),
    ],
)
def test_a_particle_tense_scope_comparison_or_hedge_that_differs_is_never_a_duplicate(
    old: str, new: str
) -> None:
    for cosine in (0.99, 0.9, 0.8):
        assert relate(old, new, cosine).kind != "duplicate", (old, new, cosine)
        assert relate(new, old, cosine).kind != "duplicate", (new, old, cosine)


def test_a_condition_that_only_rephrases_an_adjective_keeps_a_duplicate() -> None:
    old, new = (
        "Don't run the dishwasher half empty",
        "Never run the dishwasher when it is half empty",
    )
    assert relate(old, new, 0.93).kind == "duplicate"


@pytest.mark.parametrize(
    ("old", "new", "why"),
    [
        # A word that holds the rule back is not a refinement.
        ("Tests run on every push to main", "Tests run on every push except to main", "holds"),
        (
            "The user has finished the manuscript",
            "The user has almost finished the manuscript",
            "holds",
        ),
        (
            "Contractors have admin access on staging",
            "Contractors lack admin access on staging",
            "holds",
        ),
        (
            "All team members work remotely on Fridays",
            "Some team members work remotely on Fridays",
            "holds",
        ),
        # Nor is added detail that also reads otherwise.
        ("The office is closed on Monday", "The office is closed on Mondays for cleaning", "adds"),
        ("The user's car is electric", "The user's sister's car is electric", "adds"),
        ("The package is under the doormat", "The package is behind the doormat", "adds"),
        ("Take the pills with lunch", "Take the pills before lunch", "adds"),
    ],
)
def test_what_looks_like_a_refinement_but_changes_the_rule_is_flagged(
    old: str, new: str, why: str
) -> None:
    relation = relate(old, new, 0.95)
    assert (relation.kind, relation.settled) == ("compatible", False), relation
    assert relation.evidence.startswith({"holds": "holds it back", "adds": "adds detail, but"}[why])


def test_plain_added_detail_stays_a_refinement() -> None:
    relation = relate(
        "The user likes Italian food", "The user likes Italian food, especially pasta", 0.9
    )
    assert (relation.kind, relation.evidence) == ("refinement", "adds detail"), relation


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("Support Node.js versions up to 16", "Support Node.js versions from 16 onward"),
        ("Support Python 3.11 or later", "Support Python 3.11 or earlier"),
    ],
)
def test_a_bound_written_after_its_value_is_still_a_bound(old: str, new: str) -> None:
    bounds = [{">=", "<="} & set(statement(text).canons) for text in (old, new)]
    assert bounds[0] and bounds[1] and bounds[0] != bounds[1], bounds
    assert relate(old, new, 0.95).kind != "duplicate"


def test_an_acronym_is_the_words_it_stands_for_only_when_the_model_agrees() -> None:
    old = "The user works in HR at Globex."
    assert relate(old, "The user works in human resources at Globex.", 0.88).kind == "duplicate"
    # The letters alone are no reason: "hospital radiology" spells "HR" as well.
    assert relate(old, "The user works in hospital radiology at Globex.", 0.45).kind != "duplicate"


@pytest.mark.parametrize(
    ("old", "new", "kind"),
    [
        (
            "The user showers before going to bed",
            "The user goes to bed after showering",
            "duplicate",
        ),
        (
            "The standup comes before the planning meeting",
            "The planning meeting comes after the standup",
            "duplicate",
        ),
        # Told from the other end, but another value, tense or word: a reviewer looks.
        ("Maya is two years older than Leo", "Leo is three years younger than Maya", "compatible"),
        (
            "The standup came before the planning",
            "The planning comes after the standup",
            "compatible",
        ),
        (
            "The user checks email before breakfast",
            "The user skips breakfast after checking email",
            "compatible",
        ),
        # A verb that only says the event happens is no other word.
        (
            "The user checks email before breakfast",
            "The user eats breakfast after checking email",
            "duplicate",
        ),
        (
            "Code freeze begins two days before each release",
            "Each release happens two days after code freeze begins",
            "duplicate",
        ),
        ("The flat is above a bakery", "There is a bakery below the flat", "duplicate"),
        # Reversed: the sides exchanged on one word, or the word turned on the same sides.
        (
            "The user showers before going to bed",
            "The user goes to bed before showering",
            "contradiction",
        ),
        (
            "The user showers before going to bed",
            "The user showers after going to bed",
            "contradiction",
        ),
    ],
)
def test_a_relation_told_from_its_other_end_is_the_same_relation(
    old: str, new: str, kind: str
) -> None:
    assert relate(old, new, 0.9).kind == kind


def test_not_exceeding_is_a_bound_not_the_opposite_advice() -> None:
    relation = relate(
        "Meetings should not exceed 30 minutes", "Meetings should last 30 minutes or less", 0.9
    )
    assert relation.kind != "contradiction"
    assert (
        relate("The car has winter tires", "The car lacks winter tires", 0.9).kind
        == "contradiction"
    )


def test_a_place_or_time_put_first_is_the_same_statement_but_not_another_one() -> None:
    assert relate("The user lives in Lima", "Lima is where the user lives", 0.93).kind == (
        "duplicate"
    )
    assert (
        relate(
            "The user's office is on the fifth floor",
            "The fifth floor is where the user's office is",
            0.95,
        ).kind
        == "duplicate"
    )
    assert relate("The user works in Lima", "Lima is where the user lives", 0.9).kind != (
        "duplicate"
    )


def test_a_complementary_antonym_negated_says_the_other_but_a_gradable_one_does_not() -> None:
    never_forgets = relate(
        "The user never forgets to take their vitamins.",
        "The user always remembers to take their vitamins.",
        0.92,
    )
    assert never_forgets.kind == "duplicate"
    # "not hot" is not "cold": a reviewer looks.
    not_hot = relate("The water is not hot.", "The water is cold.", 0.85)
    assert (not_hot.kind, not_hot.settled) == ("compatible", False)
