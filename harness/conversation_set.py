"""A development set for recall search: multi-session chats with people, places and dates.

Generated deterministically: pairs of friends chat over several sessions (a date each); each
session mixes filler small talk with facts (where someone moved, a pet's name, a trip and who
goes, a birthday, a new job, a restaurant) and later sessions change some plans. Questions
are labelled with the turns that hold the answer; some quote the facts' words (names, places,
dates: lexical), others paraphrase them (semantic). The frozen set in harness/corpora/frozen
is the held-out one; this one is for tuning.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from datetime import date, timedelta

SEED = 7

PAIRS = (
    ("Nadia", "Tom"),
    ("Kofi", "Lena"),
    ("Ines", "Marek"),
    ("Ravi", "Sofia"),
    ("Hana", "Diego"),
    ("Yusuf", "Clara"),
    ("Beatriz", "Jonas"),
    ("Emeka", "Freya"),
)
CITIES = ("Porto", "Gdansk", "Valencia", "Tallinn", "Ghent", "Bologna", "Leeds", "Malmo")
PETS = ("Biscuit", "Pepper", "Mochi", "Juniper", "Captain", "Olive", "Waffles", "Ziggy")
JOBS = (
    ("a bakery", "baking bread before dawn"),
    ("a shipping company", "planning container routes"),
    ("a children's hospital", "looking after sick kids"),
    ("a game studio", "designing puzzle levels"),
    ("a vineyard", "picking and pressing grapes"),
    ("a bike shop", "fixing bicycles"),
    ("a public library", "lending books and running reading clubs"),
    ("a weather service", "forecasting storms"),
)
RESTAURANTS = ("Casa Lume", "The Brass Kettle", "Sora Ramen", "Little Saffron", "Nordhavn Grill")
RELATIVES = ("sister", "brother", "cousin", "aunt", "uncle")
HOBBIES = (
    ("pottery", "shaping clay bowls on a wheel"),
    ("climbing", "scaling walls at the bouldering gym"),
    ("choir", "singing with a group every Tuesday"),
    ("sailing", "taking a small boat out on the lake"),
    ("chess", "playing board games against clubs from other towns"),
)
FILLER = (
    "Haha, yes.",
    "How was your weekend?",
    "Pretty quiet, mostly sleeping in.",
    "Did you see the game last night?",
    "No, I missed it, was it good?",
    "Ugh, this week is so long.",
    "Tell me about it.",
    "Anyway, what's new with you?",
    "Not much, same old.",
    "I should go, talk soon!",
    "Sure, bye for now.",
    "The weather has been terrible lately.",
    "I know, rain every single day.",
    "Coffee later?",
    "Maybe tomorrow instead.",
    "That's so funny.",
    "Right?",
    "I'm exhausted today.",
    "Get some rest!",
    "Did you eat yet?",
)


@dataclass(frozen=True)
class Turn:
    """One chat turn."""

    turn_id: str
    session: str
    day: str
    speaker: str
    text: str


@dataclass(frozen=True)
class Question:
    """A question and the turns that answer it; ``kind`` is lexical or paraphrase."""

    text: str
    evidence: tuple[str, ...]
    kind: str


@dataclass
class _Session:
    turns: list[Turn]
    prefix: str
    day: str

    def say(self, speaker: str, text: str) -> str:
        turn_id = f"{self.prefix}-t{len(self.turns) + 1:03d}"
        self.turns.append(Turn(turn_id, self.prefix, self.day, speaker, text))
        return turn_id


def build(seed: int = SEED) -> tuple[list[Turn], list[Question]]:
    """(turns in order, labelled questions), the same for the same seed."""
    rng = random.Random(seed)
    turns: list[Turn] = []
    questions: list[Question] = []
    start = date(2026, 1, 5)
    counter = 0
    for pair_index, (a, b) in enumerate(PAIRS):
        city = CITIES[pair_index]
        pet = PETS[pair_index]
        where, doing = JOBS[pair_index]
        relative = rng.choice(RELATIVES)
        restaurant = rng.choice(RESTAURANTS)
        _, hobby_said = rng.choice(HOBBIES)
        first_companion = rng.choice(
            [p for p in (x for pr in PAIRS for x in pr) if p not in (a, b)]
        )
        trip_city = rng.choice([c for c in CITIES if c != city])
        birthday = start + timedelta(days=40 + pair_index * 9)
        sessions = []
        for s in range(6):
            counter += 1
            day = start + timedelta(days=pair_index * 3 + s * 11)
            sessions.append(_Session(turns, f"p{pair_index}s{s}", day.isoformat()))

        def filler(session: _Session, count: int, speakers: tuple[str, str] = (a, b)) -> None:
            for _ in range(count):
                session.say(rng.choice(speakers), rng.choice(FILLER))

        s0, s1, s2, s3, s4, s5 = sessions
        filler(s0, rng.randint(4, 8))
        moved = s0.say(
            b, f"My {relative} just moved to {city} for work, she loves the old harbour."
        )
        filler(s0, rng.randint(3, 6))
        adopted = s0.say(a, f"We adopted a rescue dog last week, we named him {pet}.")
        filler(s0, rng.randint(3, 6))
        filler(s1, rng.randint(4, 8))
        job = s1.say(b, f"I got the job at {where}! I'll be {doing}.")
        filler(s1, rng.randint(3, 6))
        plan = s1.say(a, f"I'm planning a trip to {trip_city} in spring with {first_companion}.")
        filler(s1, rng.randint(3, 6))
        filler(s2, rng.randint(4, 8))
        bday = s2.say(
            b,
            f"My birthday is on {birthday.strftime('%B')} {birthday.day}, dinner at {restaurant}?",
        )
        filler(s2, rng.randint(3, 6))
        hob = s2.say(a, f"I started {hobby_said} — it's my new thing.")
        filler(s2, rng.randint(3, 6))
        filler(s3, rng.randint(4, 8))
        change = s3.say(
            a, f"{first_companion} can't come to {trip_city} after all, so {b} is coming instead."
        )
        filler(s3, rng.randint(3, 6))
        vet = s3.say(b, f"How is {pet} doing after the vet visit?")
        vet_answer = s3.say(a, "Much better, the ear infection cleared up with the drops.")
        filler(s3, rng.randint(3, 6))
        filler(s4, rng.randint(6, 10))
        cancel = s4.say(b, f"Bad news, {restaurant} closed for renovation, let's cook at home.")
        filler(s4, rng.randint(4, 8))
        filler(s5, rng.randint(6, 10))
        visit = s5.say(a, f"I'm visiting your {relative} in {city} next month, any tips?")
        filler(s5, rng.randint(4, 8))
        questions += [
            Question(f"Where did {b}'s {relative} move?", (moved,), "lexical"),
            Question(f"What is the name of {a}'s dog?", (adopted,), "lexical"),
            Question(f"Which pet did {a} take home from the shelter?", (adopted,), "paraphrase"),
            Question(f"Where does {b} work now?", (job,), "lexical"),
            Question(f"What does {b} do all day at the new position?", (job,), "paraphrase"),
            Question(f"Who was first going to travel with {a}?", (plan,), "paraphrase"),
            Question(f"Who ended up going to {trip_city} with {a}?", (plan, change), "lexical"),
            Question(f"When is {b}'s birthday?", (bday,), "lexical"),
            Question(
                f"Where did {b} want to celebrate turning a year older?", (bday,), "paraphrase"
            ),
            Question(f"What hobby did {a} pick up?", (hob,), "paraphrase"),
            Question(f"What was wrong with {pet}?", (vet, vet_answer), "lexical"),
            Question(f"Why couldn't they eat out at {restaurant}?", (cancel,), "lexical"),
            Question(f"Who is {a} going to see in {city}?", (visit, moved), "lexical"),
        ]
    return turns, questions
