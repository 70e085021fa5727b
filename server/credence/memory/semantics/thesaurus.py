"""A general English thesaurus for the pair judgement: synonym sets, phrase folds, light words."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Final, NamedTuple

from credence.memory.semantics import wordnet
from credence.memory.semantics.wordnet import Senses

# Common English synonym sets, the first entries a general thesaurus gives for words that
# instructions, preferences and facts are written with. Words in one line stand for each other
# in a lesson; a word may sit in more than one line (it has more than one sense), and two words
# are synonyms when they share a line. No line holds two opposites, and none holds a value
# (a number, a unit, a name, a place, a format or a language).
SYNONYM_LINES: Final = """
answer reply respond
answer reply response
tell notify inform alert
limit cap restrict
leave depart
share disclose
begin start commence
show display
buy purchase
pay cost
fix repair
fix correct
call phone telephone ring
cancel terminate abort
client customer
brief short concise succinct terse
simple plain
store keep save retain preserve
delete remove erase
check verify confirm validate
check examine inspect
ask request
ask query inquire enquire
question query
use utilise utilize employ
help assist aid support
need require
big large
small little
fast quick rapid speedy swift
choose pick select
main key primary principal chief
important key crucial essential vital critical
error mistake
issue problem trouble
bug defect
picture image photo photograph
talk speak discuss
chat talk
email mail e-mail
often frequently
usually normally typically
quickly rapidly promptly swiftly
correct right accurate
incorrect wrong inaccurate
allowed permitted
forbidden prohibited banned
allow permit let
forbid prohibit ban bar
mandatory required compulsory obligatory
whole full entire complete
greet welcome
wash rinse
highlight emphasise emphasize stress
highlight flag
explain describe clarify
put place
friendly kind warm
polite courteous
finish conclude complete end
finished completed done
contact reach
guest visitor
car vehicle automobile
doctor physician
child kid
rule policy guideline
hard difficult
easy straightforward simple
try attempt
get obtain acquire
get receive
give provide supply
send dispatch
build construct
change alter modify adjust amend edit
stop halt cease
money funds cash
price cost
cheap inexpensive affordable
expensive costly pricey
document doc
say state mention
sort order arrange organise organize
latest newest
total sum
fully completely entirely totally
quiet silent
student pupil learner
teacher instructor tutor
employee staff worker
manager boss supervisor
company firm business
colleague coworker co-worker
booking reservation
book reserve
trip journey
number figure
contract agreement
pill tablet
medicine medication
like prefer favour favor
like enjoy
mother mom mum
father dad
vet veterinarian
move relocate
end expire
work employ
bike cycle
drop fall
afraid fear
film movie
fridge refrigerator
split divide separate
stay remain
keep stay
practise practice
share give
keep maintain
record log
approve authorise authorize
reject decline
monitor track watch
write compose
recommend suggest advise
goal aim objective
task chore
lawyer attorney solicitor
movie film
holiday vacation
flat apartment
bin trash garbage rubbish
sofa couch
timetable schedule
truck lorry
sidewalk pavement
subway underground metro
sick ill unwell
train prepare
responsible responsibility
happy glad
smart clever intelligent
folder directory
detailed thorough comprehensive
casual informal
shut close
mend repair
gift present
aid help
add put insert
cite credit acknowledge
cite reference
greet address
address call
open start begin
first opening initial
before earlier
after later
friend buddy pal
hobby pastime
luggage baggage
spacious roomy
migrate move
run execute
submit file
research investigate
acetaminophen paracetamol
trunk boot
feed give
""".strip().splitlines()

# Phrasal verbs and fixed phrases read as the one word they mean (compared by stem, in order):
# "talk about" is "discuss", "get rid of" is "remove".
PHRASE_FOLDS: Final = {
    ("talk", "about"): "discuss",
    ("speak", "about"): "discuss",
    ("get", "rid", "of"): "remove",
    ("set", "up"): "configure",
    ("write", "down"): "record",
    ("note", "down"): "record",
    ("check", "with"): "ask",
    ("hand", "over"): "give",
    ("hand", "out"): "give",
    ("point", "out"): "mention",
    ("go", "over"): "review",
    ("look", "over"): "review",
    ("look", "into"): "investigate",
    ("put", "off"): "postpone",
    ("carry", "out"): "perform",
    ("keep", "track", "of"): "track",
    ("find", "out"): "learn",
    ("come", "back"): "return",
    ("send", "out"): "send",
    ("give", "back"): "return",
    ("sign", "off", "on"): "approve",
    ("most", "recent"): "latest",
    ("spell", "out"): "explain",
    ("prior", "to"): "before",
    ("in", "advance", "of"): "before",
    ("ahead", "of"): "before",
    ("pass", "away"): "die",
    ("give", "up"): "quit",
    ("write", "out"): "write",
    # Taking care of a thing or a person: handling it, looking after them.
    ("take", "care", "of"): "handle",
    ("look", "after"): "handle",
    # To cut back is to reduce; to cut out, to stop altogether.
    ("cut", "back", "on"): "reduce",
    ("cut", "down", "on"): "reduce",
    ("cut", "out"): "eliminate",
    # What stands at the top of a text opens it.
    ("at", "top", "of"): "start",
    # "backed up" is a backup made, not "back" as a place or an order.
    ("back", "up"): "backup",
    # A document runs out when it expires; a supply runs out of something.
    ("run", "out", "of"): "exhaust",
    ("run", "out"): "expire",
    ("sign", "up", "for"): "enroll",
    # Time and ability said in two words: "right now", "is able to", "continues to see".
    ("right", "now"): "currently",
    ("at", "moment"): "currently",
    ("able", "to"): "can",
    ("continue", "to"): "still",
    # A light verb and the noun of an action say that action ("made the decision to move" /
    # "decided to move"); articles are no words here.
    ("make", "decision"): "decide",
    ("make", "payment"): "pay",
    ("make", "purchase"): "buy",
    ("make", "donation"): "donate",
    ("make", "suggestion"): "suggest",
    ("make", "recommendation"): "recommend",
    ("make", "request"): "request",
    ("make", "complaint"): "complain",
    ("make", "choice"): "choose",
    ("make", "attempt"): "attempt",
    ("make", "reservation"): "reserve",
    ("make", "phone", "call"): "call",
    ("take", "nap"): "nap",
    ("take", "walk"): "walk",
    ("take", "shower"): "shower",
    ("take", "look", "at"): "examine",
    ("have", "look", "at"): "examine",
    ("pay", "visit", "to"): "visit",
    ("give", "presentation"): "present",
    ("give", "advice"): "advise",
    ("would", "rather"): "prefer",
    # Places said in two words that one word says.
    ("next", "to"): "beside",
    # A whole said from its parts, an event from its time, a cause from its effect.
    ("consist", "of"): "comprise",
    ("made", "up", "of"): "comprise",
    ("take", "place"): "happen",
    ("because", "of"): "because",
    ("due", "to"): "because",
    ("owing", "to"): "because",
    ("grew", "up"): "raised",
    ("grow", "up"): "raised",
    ("wake", "up"): "wake",
    ("get", "up"): "wake",
    ("early", "riser"): "lark",
    ("early", "bird"): "lark",
    ("close", "to"): "near",
    ("across", "from"): "opposite",
}
LONGEST_FOLD: Final = max(len(phrase) for phrase in PHRASE_FOLDS)

# Words that add no meaning a paraphrase must keep: indefinite pronouns and intensifiers
# ("Never merge anything unreviewed" / "Never merge unreviewed work" turn on the verb).
_LIGHT_WORDS_TEXT: Final = """
    anything everything something ever really actually just also still always definitely
    certainly absolutely properly
"""
LIGHT_WORDS: Final = frozenset(_LIGHT_WORDS_TEXT.split())

# Words that set an order or a position: two texts that differ in one are never the same
# lesson on closeness alone.
_ORDER_WORDS_TEXT: Final = """
    first last then end start beginning finally top bottom before after earlier later next
    previous front back
"""
ORDER_WORDS: Final = frozenset(_ORDER_WORDS_TEXT.split())

# The commonest English verbs an instruction opens with ("Store …", "Fix …"): a capitalised
# word that opens a sentence and is one of these is the verb, not a name; the reflector reads
# a sentence opening with one as an imperative.
_COMMON_VERBS_TEXT: Final = """
    like love enjoy favour favor dislike hate take
    accept add address adjust allow analyse analyze answer apply approve archive arrange ask
    assign attach avoid back be begin block book break bring build buy calculate call cancel
    capture change charge chat check choose cite clean clear close collect combine come
    commit compare compile compose compress confirm connect consider contact continue
    convert copy correct count create credit cut date deal decide decline define delete
    deliver deploy describe design destroy disable discuss display divide do document double
    download draft draw drink drive drop eat edit email enable encourage encrypt end ensure
    enter escape estimate explain export express fetch file fill filter find finish fix flag
    follow forget format forward gather generate get give go greet group handle have help
    hide highlight hold hire ignore import improve include increase index inform insert
    install invite join keep label leave lend let limit link list load lock log look make
    manage mark measure meet mention merge message migrate mind mix monitor move name note
    notify offer open order organise organize pack paste pay pick pin place plan play post
    prefer prepare present print prioritise prioritize process protect provide publish pull
    purchase push put quote raise rank read rebuild recommend record reduce refer refresh
    refund reject release remind remove rename repair repeat replace reply report request
    require reserve reset resize respond restart restore retry return reuse review rewrite
    rotate round run save say schedule search select sell send set share ship show sign skip
    sort speak specify split spell start state stay stop store submit suggest summarise
    summarize support switch take talk teach tell test thank track train translate treat try
    turn type understand undo unlock update upload use validate verify visit wait walk want
    warn wash watch water wear welcome write
    align bcc bump cap cc default double-check escalate indent lead mail number rebase route
    stick tag need
"""
COMMON_VERBS: Final = frozenset(_COMMON_VERBS_TEXT.split())


# Pairs of stems remembered before the memo starts again: bounded, since a server runs long.
MAX_KNOWN_PAIRS: Final = 100_000


class Synonyms(NamedTuple):
    """Where two stems may be synonyms: the hand-written lines above, and WordNet's common
    senses (see :mod:`credence.memory.semantics.wordnet`), with each stem's known opposites."""

    lines: dict[str, frozenset[int]]
    wordnet: dict[str, Senses]
    opposites: dict[str, frozenset[str]]
    american: Callable[[str], str]
    # Answers already given, by pair of stems: the gate asks the same pairs many times.
    known: dict[tuple[str, str], bool]

    def senses(self, word: str) -> Senses | None:
        """WordNet's senses of a stem, or of its American spelling: WordNet's sense-tagged
        corpus is American, so "favourite" is untagged where "favorite" is not."""
        return self.wordnet.get(word) or self.wordnet.get(self.american(word))


def synonym_sets(
    stem: Callable[[str], str],
    antonyms: dict[str, frozenset[str]] | None = None,
    american: Callable[[str], str] = str,
) -> Synonyms:
    """The synonym lines and WordNet's senses, each word put under ``stem``; ``antonyms`` (a
    stem's opposites, under the same stemmer) join WordNet's own; ``american`` spells a stem
    the American way."""
    table: dict[str, set[int]] = {}
    for number, line in enumerate(SYNONYM_LINES):
        for word in line.split():
            table.setdefault(stem(word), set()).add(number)
    lines = {word: frozenset(numbers) for word, numbers in table.items()}
    senses = wordnet.load(stem)
    opposites = {word: found.opposites for word, found in senses.items() if found.opposites}
    for word, theirs in (antonyms or {}).items():
        opposites[word] = opposites.get(word, frozenset()) | theirs
    return Synonyms(lines, senses, opposites, american, {})


def fold_phrases(words: Sequence[str], folds: dict[tuple[str, ...], str]) -> list[str]:
    """``words`` with each phrase of ``folds`` (longest first) put as its one word."""
    out: list[str] = []
    position = 0
    while position < len(words):
        for width in range(min(LONGEST_FOLD, len(words) - position), 1, -1):
            folded = folds.get(tuple(words[position : position + width]))
            if folded is not None:
                out.append(folded)
                position += width
                break
        else:
            out.append(words[position])
            position += 1
    return out


def synonymous(first: str, second: str, sets: Synonyms) -> bool:
    """Whether two stems are one word, share a synonym line, or share a common WordNet sense
    (one commonly a kind of the other counts: "adore" / "love"), unless WordNet's link joins
    two words with opposites of their own that they do not share: "hot" (cold) is not "warm"
    (cool), "forbidden" (permitted) not "required" (optional)."""
    if first == second:
        return True
    known = sets.known.get((first, second))
    if known is None:
        if len(sets.known) >= MAX_KNOWN_PAIRS:
            sets.known.clear()
        known = sets.known[first, second] = _synonymous(first, second, sets)
    return known


def _synonymous(first: str, second: str, sets: Synonyms) -> bool:
    mine = sets.lines.get(first)
    if mine and mine & sets.lines.get(second, frozenset()):
        return True
    if not wordnet.related(sets.senses(first), sets.senses(second)):
        return False
    against = sets.opposites.get(first, frozenset())
    theirs = sets.opposites.get(second, frozenset())
    opposed = second in against or bool(against and theirs and not against & theirs)
    return not opposed


def same_bag(first: Sequence[str], second: Sequence[str], sets: Synonyms) -> bool:
    """Whether two bags of stems match one to one, each word with itself or a synonym."""
    if len(first) != len(second):
        return False
    left = sorted(first)
    right = list(sorted(second))
    unmatched = []
    for word in left:
        if word in right:
            right.remove(word)
        else:
            unmatched.append(word)
    for word in unmatched:
        partner = next((other for other in right if synonymous(word, other, sets)), None)
        if partner is None:
            return False
        right.remove(partner)
    return True
