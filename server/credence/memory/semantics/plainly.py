"""Phrasings said plainly before two statements are compared: "A, not B", "would rather"."""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import lru_cache
from typing import Final

from credence.memory.semantics.dates import ORDINAL_WORDS
from credence.memory.semantics.statement_words import ORDINAL

# The end of a sentence a rewrite takes whole: its closing mark, kept as the "end" group.
_END = r"(?P<end>[.!]?)\s*$"
# "A, not B" sets A against B; its "not" negates B alone, never the rule ("not even", "not
# only" and the like still intensify a negation).
_CONTRAST_NOT = re.compile(r",\s*not\s+(?!(?:even|only|just|yet|ever|once|always)\b)", re.I)


# "Nobody but the user" is "only the user"; "except when" is "unless". Said plainly, neither
# reads as a negation or a new scope word.
_EXCEPT_ONE = re.compile(r"\b(?:no\s*one|nobody|none)\s+(?:but|except|other than|besides)\s+", re.I)
_EXCEPT_WHEN = re.compile(r"\bexcept\s+(?:when|if)\b", re.I)
# "so they can beat traffic" and "in order to beat traffic" say "to beat traffic": a purpose,
# no permission.
_PURPOSE = re.compile(
    r"\b(?:so(?:\s+that)?\s+(?:they|he|she|we|you|i|it|the\s+user)\s+can(?![\w'’])"
    r"|in\s+order\s+to\b)",
    re.I,
)
# "would rather have tea than coffee" says "prefers tea than coffee"; "would rather" before a
# verb of meaning is folded with it (PHRASE_FOLDS).
_WOULD_RATHER = re.compile(r"\bwould\s+rather\s+(?:have|use|take)\b", re.I)
# "The user reports to Kim" says "The user's manager is Kim".
_REPORTS_TO = re.compile(r"\b(\w+)\s+reports\s+to\b(?!\s+(?:is|was)\b)", re.I)
# "Peanuts trigger an allergic reaction in the user" says "The user is allergic to peanuts".
_ALLERGY = re.compile(
    r"^\s*(?P<cause>.+?)\s+(?:triggers?|causes?|gives?)\s+(?:an\s+)?allergic\s+reactions?"
    rf"\s+(?:in|to)\s+(?P<who>.+?){_END}",
    re.I,
)
# "follows a vegetarian diet" (or "a diet that is vegetarian") says "is vegetarian", "has
# followed" one "has been vegetarian".
_DIET = re.compile(
    r"\b(follows|has\s+followed)\s+(?:an?\s+((?:[\w-]+\s+)?[\w-]+)\s+diet\b"
    r"|a\s+diet\s+that\s+is\s+([\w-]+)\b(?!\s+\w))",
    re.I,
)
# "on a monthly basis" says "monthly"; "learning how to swim" says "learning to swim"; "not
# one of" says "none of" and "every one of" "all of".
_ON_A_BASIS = re.compile(
    r"\bon\s+an?\s+(daily|weekly|fortnightly|monthly|quarterly|yearly|annual|regular)\s+basis\b",
    re.I,
)
_HOW_TO = re.compile(r"\b(learn\w*|teach\w*|taught|show\w*)\s+how\s+to\b", re.I)
_NOT_ONE_OF = re.compile(r"\bnot\s+(?:a\s+single\s+)?one\s+of\b", re.I)
_EVERY_ONE_OF = re.compile(r"\bevery\s+(?:single\s+)?one\s+of\b", re.I)
# "floor 4" says "the 4th floor", "grade 3" "the 3rd grade": a counted place in an order.
_COUNTED_PLACE = re.compile(
    r"\b(?:the\s+)?(floor|level|storey|story|grade|chapter)\s+(\d{1,3})\b(?![.,:/]\d)", re.I
)
_ORDINAL_ENDINGS: Final = {"1": "st", "2": "nd", "3": "rd"}
# "goes running" says "runs": a sport done, said with "go".
_SPORTS: Final = {
    "running": "runs",
    "jogging": "jogs",
    "swimming": "swims",
    "hiking": "hikes",
    "cycling": "cycles",
    "biking": "bikes",
    "skiing": "skis",
    "climbing": "climbs",
    "walking": "walks",
    "rowing": "rows",
    "sailing": "sails",
    "surfing": "surfs",
    "skating": "skates",
    "dancing": "dances",
}
_GOES_DOING = re.compile(rf"\bgoes\s+({'|'.join(_SPORTS)})\b", re.I)
# "not once" says "never"; "has been to Japan" says "has visited Japan"; "is the owner of"
# says "owns".
_NOT_ONCE = re.compile(r"\bnot\s+(?:once|one\s+time)\b", re.I)
_BEEN_TO = re.compile(r"\bbeen\s+to\b(?!\s+(?:be|do|see|blame)\b)", re.I)
_OWNER_OF = re.compile(r"\b(?:is|are)\s+the\s+owners?\s+of\b", re.I)
# "X's date of birth is May 3" and "X's birthday is on May 3" say "X was born on May 3".
_BIRTH_DATE = re.compile(
    r"(\w+)['’]s\s+(?:date\s+of\s+birth|birth\s+date|birthday)\s+(?:is|falls)\s+(?:on\s+)?",
    re.I,
)
# "does the grocery shopping" says "buys groceries"; "abstains from alcohol" says "does not
# drink alcohol"; "X's height is six feet" says "X is six feet tall".
_GROCERY_SHOPPING = re.compile(
    r"\bdo(?:es)?\s+(?:(?:the|their|his|her|my|our)\s+)?grocery\s+shopping\b", re.I
)
_ABSTAINS = re.compile(r"\babstains\s+from\s+(?:alcohol|drinking)\b", re.I)
_HEIGHT = re.compile(r"\b(\w+)['’]s\s+height\s+is\s+([^.,;]+)", re.I)
# "is a type 1 diabetic" says "has type 1 diabetes"; "is an only child" says "has no
# siblings"; "X's year of birth is 2016" says "X was born in 2016".
_DIABETIC = re.compile(r"\bis\s+an?\s+((?:type\s+(?:1|2|one|two|i|ii)\s+)?)diabetic\b", re.I)
_ONLY_CHILD = re.compile(r"\bis\s+an\s+only\s+child\b", re.I)
_BIRTH_YEAR = re.compile(r"(\w+)['’]s\s+(?:year\s+of\s+birth|birth\s+year)\s+is\s+", re.I)
# "lacks X" says "has no X"; "not far from" says "near".
_LACKS = re.compile(r"\blacks\b(?:\s+an?\b)?", re.I)
_NOT_FAR = re.compile(r"\bnot\s+far\s+from\b", re.I)
# "if it isn't snowing" and "when the user hasn't asked" say "unless it is snowing", "unless
# the user has asked": a condition that holds when a thing is not so.
_IF_NOT = re.compile(
    r"\b(?:if|when|whenever)\s+((?:the\s+)?[\w'’]+)\s+"
    r"(is|are|has|have|was|were|does|do|did)(?:n['’]t|\s+not)\b",
    re.I,
)
_DO: Final = frozenset({"does", "do", "did"})
# "practises law" says "is a lawyer"; "Chase holds the user's mortgage" says "the user's
# mortgage is with Chase".
_PRACTISES_LAW = re.compile(r"\bpracti[cs]es\s+law\b", re.I)
_HOLDS_MORTGAGE = re.compile(
    r"^\s*(?P<lender>.+?)\s+holds\s+(?P<owner>.+?['’]s)\s+mortgage\b", re.I
)
# "mother's sister" says "maternal aunt", "father's father" "paternal grandfather".
_PARENTS_KIN = re.compile(
    r"\b(mother|mum|mom|father|dad)['’]s\s+(sister|brother|mother|father|parents)\b", re.I
)
_SIDE: Final = dict.fromkeys(("mother", "mum", "mom"), "maternal") | dict.fromkeys(
    ("father", "dad"), "paternal"
)
_KIN: Final = {
    "sister": "aunt",
    "brother": "uncle",
    "mother": "grandmother",
    "father": "grandfather",
    "parents": "grandparents",
}
# "a two-bedroom apartment" says "an apartment with two bedrooms".
_ROOMS_BEFORE = re.compile(
    r"\b(?:an?\s+)?(\w+)-(bedroom|bathroom|room)\s+(apartment|flat|house|home|condo|suite|cabin)\b",
    re.I,
)
# "mother and father" (or "mom and dad") says "parents".
_BOTH_PARENTS = re.compile(
    r"\b(?:mother\s+and\s+father|father\s+and\s+mother|mom\s+and\s+dad|mum\s+and\s+dad"
    r"|dad\s+and\s+mom|dad\s+and\s+mum)\b(?P<owner>['’]s)?",
    re.I,
)
# "spouse's mother" says "mother-in-law" (not a sibling: "brother-in-law" is as well a
# sister's husband).
_SPOUSES_KIN = re.compile(r"\b(?:spouse|husband|wife)['’]s\s+(mother|father|parents)\b", re.I)
# "at no cost" and "free of charge" say "for free": no negation is meant.
_AT_NO_COST = re.compile(r"\b(?:at\s+no\s+(?:cost|charge)|free\s+of\s+charge)\b", re.I)
# "The user is Dana's direct report" says "The user's manager is Dana".
_DIRECT_REPORT = re.compile(r"\b(\w+)\s+is\s+(\w+)['’]s\s+direct\s+report\b", re.I)
# "has no objection to", "doesn't mind" and "has nothing against" say "is fine with": two
# negatives that make no negation.
_NO_OBJECTION = re.compile(
    r"\b(?:(?:has|have)\s+no\s+objections?\s+to|has\s+nothing\s+against"
    r"|(?:does|do)(?:n['’]t|\s+not)\s+(?:mind|object\s+to))\b",
    re.I,
)
# "splits it 50/50" says "splits it equally"; "version 3.11 of Python" says "Python 3.11".
_HALVES = re.compile(r"\b(?:50\s*/\s*50|50-50|fifty-fifty)(?![\w/])", re.I)
_VERSION_OF = re.compile(r"\bversion\s+(\d+(?:\.\d+)*)\s+of\s+([A-Z][\w+#-]*(?:\.\w+)*)")
_NAMED_VERSION = re.compile(r"\b([A-Z][\w+#-]*(?:\.\w+)*)\s+version\s+(\d+(?:\.\d+)*)\b")
# "Porto is where the user's mother lives" says "The user's mother lives in Porto";
# "October is when the insurance renews" says "The insurance renews in October" ("on" a day,
# "at" a clock time).
_CLEFT = re.compile(
    r"^\s*(?P<place>[^,;]+?)\s+(?:is|was)\s+(?P<how>where|when)\s+(?P<rest>[^,;]+?)" + _END
)
_ARTICLE_FIRST = re.compile(r"^(?:The|A|An)\b")
_EVERY_FIRST = re.compile(r"^(?:every|each)\b", re.I)
_DAY_NAMED = re.compile(
    r"\b(?:mon|tues|wednes|thurs|fri|satur|sun)days?\b|\b\d{1,2}(?:st|nd|rd|th)\b", re.I
)
_CLOCK_NAMED = re.compile(r"\d\s*(?:[ap]\.?m\b|:\d\d)|\b(?:noon|midnight)\b", re.I)
# "Of all cuisines, Thai is the one the user likes best" says "The user's favourite cuisine
# is Thai".
_OF_ALL = re.compile(
    r"^\s*of\s+all\s+(?:the\s+)?(?P<kind>[\w -]+?)s,\s+(?P<one>[^,;]+?)\s+is\s+the\s+one\s+"
    rf"(?P<who>[^,;]+?)\s+(?:likes|loves|enjoys|prefers)\s+(?:best|most){_END}",
    re.I,
)
# "Priya is the one who does the reviews" says "Priya does the reviews"; "Nx is the tool the
# monorepo is managed with" says "The monorepo is managed with Nx" (the thing named first is
# the object of the preposition that ends the clause).
_THE_ONE_WHO = re.compile(
    r"^\s*(?P<one>[^,;]+?)\s+(?:is|are)\s+the\s+(?:one|ones|person|people)\s+(?:who|that)\s+"
    rf"(?P<rest>[^,;]+?){_END}",
    re.I,
)
_THE_ONE_IT_ENDS_ON = re.compile(
    r"^\s*(?!(?:this|that|it|these|those|here|there)\b)(?P<one>[^,;]+?)\s+is\s+the\s+\w+\s+"
    r"(?:that\s+|which\s+)?(?P<rest>(?:the|a|an|their|his|her)"
    rf"\s[^,;]+?\s(?:in|on|with|at|for|to|from|by)){_END}",
    re.I,
)
# "is a fan of jazz" says "likes jazz", "is a big fan of" "loves", "is not a fan of" "does not
# like"; "are fans of" the same of many.
_FAN_OF = re.compile(
    r"\b(?P<be>is|are)(?P<not>n['’]t|\s+not|\s+no)?\s+(?:an?\s+)?(?P<big>(?:big|huge|great)\s+)?"
    r"fans?\s+of\b",
    re.I,
)
# "X and no one else", "on Tuesdays and on no other days", "in the morning and at no other
# time of day" say "X only": the negation only bounds the scope.
_AND_NO_OTHER = re.compile(
    r",?\s+and\s+(?:(?:at|on|in|by)\s+)?(?:no\s*one\s+else|nobody\s+else|nowhere\s+else"
    r"|no\s+other\s+(?:\w+)(?:\s+of\s+(?:the\s+)?(?:day|week|month|year))?)\b",
    re.I,
)
# "Given the choice between tea and coffee, the user prefers tea" says "The user prefers tea to
# coffee".
_GIVEN_A_CHOICE = re.compile(
    r"^\s*given\s+(?:a|the)\s+choice\s+(?:between|of)\s+(?P<a>[^,;]+?)\s+(?:and|or)\s+"
    r"(?P<b>[^,;]+?),\s+(?P<who>[^,;]+?)\s+(?:prefers|would\s+rather\s+have|would\s+rather"
    rf"|chooses|picks)\s+(?P<pick>[^,;]+?){_END}",
    re.I,
)
_ARTICLE: Final = re.compile(r"^(?:the|a|an)\s+", re.I)
# "The user's annual salary is $85k" says "The user earns $85k a year"; "X's hourly wage is
# $32" says "X earns $32 an hour".
_PAY_IS = re.compile(
    r"\b(?P<who>\w+)['’]s\s+(?:(?P<period>annual|yearly|monthly|weekly|hourly)\s+)?"
    rf"(?:salary|wage|pay|income)\s+is\s+(?P<amount>[^;]+?){_END}",
    re.I,
)
_PER: Final = {
    "annual": "a year",
    "yearly": "a year",
    "monthly": "a month",
    "weekly": "a week",
    "hourly": "an hour",
}
# "The user's dentist appointment is on Friday", "X's appointment with the dentist is on
# Friday" and "X has a dentist appointment on Friday" say "X sees the dentist on Friday".
_APPOINTMENT = re.compile(
    r"\b(?P<who>\w+)(?:['’]s\s+(?P<kind>\w+(?:ist|ian|or))\s+appointment\s+is"
    r"|['’]s\s+appointment\s+with\s+(?P<whom>[^,;]+?)\s+is"
    r"|\s+has\s+an?\s+(?P<kind2>\w+(?:ist|ian|or))\s+appointment)\b",
    re.I,
)
# "had her 90th birthday" says "turned 90"; "X's payday is the 15th" says "X gets paid on
# the 15th".
_NTH_BIRTHDAY = re.compile(
    r"\b(?:had|celebrated)\s+(?:his|her|their|its)\s+([\w-]+)\s+birthday\b", re.I
)
_PAYDAY = re.compile(r"\b(\w+)['’]s\s+payday\s+is\s+(?:on\s+)?", re.I)
# "The user's home is in Lisbon" says "The user lives in Lisbon"; "X's home is a flat" says
# "X lives in a flat".
_HOME_IS = re.compile(r"\b(\w+)['’]s\s+home\s+is\s+(?:(in|on|at|near)|(an?))\b", re.I)
# "skips breakfast" says "does not eat breakfast": a meal skipped is a meal not eaten.
_SKIPS_A_MEAL = re.compile(r"\b(skips?|skipped)\s+(breakfast|lunch|dinner|meals?)\b", re.I)
# "can't stand", "can't bear" and "can't tolerate" say "hate": no negation is meant.
_CANNOT_STAND = re.compile(r"\b(?:can['’]?t|cannot|can not)\s+(?:stand|bear|tolerate)\b", re.I)


def _unless(said: re.Match[str]) -> str:
    subject, auxiliary = said[1], said[2]
    # "if it doesn't rain" is "unless it rains": the auxiliary "do" says nothing itself.
    return f"unless {subject}" if auxiliary.casefold() in _DO else f"unless {subject} {auxiliary}"


def _allergic(said: re.Match[str]) -> str:
    cause = said["cause"]
    # A capital that only opened the sentence: "Peanuts" is no name in the middle of one.
    if cause[:1].isupper() and cause[1:2].islower():
        cause = cause[:1].lower() + cause[1:]
    return f"{_opening(said['who'])} is allergic to {cause}{said['end']}"


def _uncleft(said: re.Match[str]) -> str:
    place = _moved_back(said["place"])
    if said["how"] == "where":
        place = f"in {place}"
    elif not _EVERY_FIRST.match(place):  # "each Wednesday" takes no preposition
        at = "at" if _CLOCK_NAMED.search(place) else "on" if _DAY_NAMED.search(place) else "in"
        place = f"{at} {place}"
    return f"{_opening(said['rest'])} {place}{said['end']}"


def _moved_back(words: str) -> str:
    """``words`` that opened the sentence, an opening article or "every" lowered for the
    middle of one."""
    opening = _ARTICLE_FIRST.match(words) or _EVERY_FIRST.match(words)
    return words[:1].lower() + words[1:] if opening else words


def _favourite(said: re.Match[str]) -> str:
    return f"{_opening(said['who'])}'s favourite {said['kind']} is {said['one']}{said['end']}"


def _the_one_who(said: re.Match[str]) -> str:
    return f"{said['one']} {said['rest']}{said['end']}"


def _the_one_it_ends_on(said: re.Match[str]) -> str:
    return f"{_opening(said['rest'])} {_moved_back(said['one'])}{said['end']}"


def _mortgage(said: re.Match[str]) -> str:
    return f"{_opening(said['owner'])} mortgage is with {said['lender']}"


def _cased_as(written: str, plain: str) -> str:
    """``plain`` with a capital first letter when ``written`` had one (it opened a sentence)."""
    return _opening(plain) if written[:1].isupper() else plain


def _opening(words: str) -> str:
    """``words`` capitalised to open the sentence they are moved to the front of."""
    return words[:1].upper() + words[1:]


def _kin(said: re.Match[str]) -> str:
    return f"{_SIDE[said[1].casefold()]} {_KIN[said[2].casefold()]}"


def _given_a_choice(said: re.Match[str]) -> str:
    def bare(option: str) -> str:
        return _ARTICLE.sub("", option).casefold()

    options = {bare(said["a"]): said["b"], bare(said["b"]): said["a"]}
    other = options.get(bare(said["pick"]))
    if other is None:
        return said[0]
    return f"{_opening(said['who'])} prefers {said['pick']} to {other}{said['end']}"


def _pay(said: re.Match[str]) -> str:
    per = _PER.get((said["period"] or "").casefold())
    return f"{said['who']} earns {said['amount']}{f' {per}' if per else ''}{said['end']}"


def _appointment(said: re.Match[str]) -> str:
    whom = said["whom"] or f"the {said['kind'] or said['kind2']}"
    return f"{said['who']} sees {whom}"


def _turned(said: re.Match[str]) -> str:
    nth = said[1].casefold()
    ordinal = ORDINAL.match(nth)
    age = ordinal.group(1) if ordinal else ORDINAL_WORDS.get(nth)
    return f"turned {age}" if age else said[0]


def _meal_skipped(said: re.Match[str]) -> str:
    verb = {"skip": "do", "skips": "does", "skipped": "did"}[said[1].casefold()]
    return f"{verb} not eat {said[2]}"


def _fan(said: re.Match[str]) -> str:
    many = said["be"].casefold() == "are"
    if said["not"]:
        return "do not like" if many else "does not like"
    if said["big"]:
        return "love" if many else "loves"
    return "like" if many else "likes"


def _rooms(said: re.Match[str]) -> str:
    article = "an" if said[3][:1].casefold() in "aeiou" else "a"
    return f"{article} {said[3]} with {said[1]} {said[2]}s"


def _counted_place(said: re.Match[str]) -> str:
    number = said[2]
    teen = len(number) > 1 and number[-2] == "1"
    ending = "th" if teen else _ORDINAL_ENDINGS.get(number[-1], "th")
    return _cased_as(said[0], f"the {number}{ending} {said[1].casefold()}")


def _diet(said: re.Match[str]) -> str:
    verb = "is" if said[1].casefold() == "follows" else "has been"
    return f"{verb} {said[2] or said[3]}"


def _sport(said: re.Match[str]) -> str:
    return _SPORTS[said[1].casefold()]


# Each rewrite in the order it is made; a later one may read what an earlier one wrote.
_Rewrite = tuple[re.Pattern[str], str | Callable[[re.Match[str]], str]]
_REWRITES: Final[tuple[_Rewrite, ...]] = (
    (_EXCEPT_ONE, "only "),
    (_EXCEPT_WHEN, "unless"),
    (_CANNOT_STAND, "hate"),
    (_AND_NO_OTHER, " only"),
    (_FAN_OF, _fan),
    (_PAY_IS, _pay),
    (_APPOINTMENT, _appointment),
    (_NTH_BIRTHDAY, _turned),
    (_SKIPS_A_MEAL, _meal_skipped),
    (_HOME_IS, lambda said: f"{said[1]} lives {said[2] or f'in {said[3]}'}"),
    (_PAYDAY, r"\1 gets paid on "),
    (_NO_OBJECTION, "is fine with"),
    (_HALVES, "equally"),
    (_VERSION_OF, r"\2 \1"),
    (_NAMED_VERSION, r"\1 \2"),
    (_PURPOSE, "to"),
    (_GIVEN_A_CHOICE, _given_a_choice),
    (_WOULD_RATHER, "prefers"),
    (_REPORTS_TO, r"\1's manager is"),
    (_DIRECT_REPORT, r"\1's manager is \2"),
    (_ROOMS_BEFORE, _rooms),
    (_BOTH_PARENTS, lambda said: _cased_as(said[0], "parents'" if said["owner"] else "parents")),
    (_PARENTS_KIN, _kin),
    (_SPOUSES_KIN, r"\1-in-law"),
    (_AT_NO_COST, "for free"),
    (_ALLERGY, _allergic),
    (_DIET, _diet),
    (_ON_A_BASIS, r"\1"),
    (_COUNTED_PLACE, _counted_place),
    (_HOW_TO, r"\1 to"),
    (_NOT_ONE_OF, lambda said: _cased_as(said[0], "none of")),
    (_EVERY_ONE_OF, lambda said: _cased_as(said[0], "all of")),
    (_BEEN_TO, "visited"),
    (_NOT_ONCE, "never"),
    (_BIRTH_DATE, r"\1 was born on "),
    (_OWNER_OF, "owns"),
    (_GROCERY_SHOPPING, "buys groceries"),
    (_ABSTAINS, "does not drink alcohol"),
    (_HEIGHT, r"\1 is \2 tall"),
    (_ONLY_CHILD, "has no siblings"),
    (_DIABETIC, r"has \1diabetes"),
    (_BIRTH_YEAR, r"\1 was born in "),
    (_LACKS, "has no"),
    (_NOT_FAR, "near"),
    (_IF_NOT, _unless),
    (_GOES_DOING, _sport),
    (_PRACTISES_LAW, "is a lawyer"),
    (_HOLDS_MORTGAGE, _mortgage),
    (_CLEFT, _uncleft),
    (_OF_ALL, _favourite),
    (_THE_ONE_WHO, _the_one_who),
    (_THE_ONE_IT_ENDS_ON, _the_one_it_ends_on),
    (_CONTRAST_NOT, " rather than "),
)


@lru_cache(maxsize=16384)
def plainly_worded(text: str) -> str:
    """``text`` said plainly, so that the comparison reads what is meant:

    - "A, not B" as "A rather than B": the "not" that sets A against B negates no rule ("Use
      tabs, not spaces" is no prohibition);
    - "nobody but X" as "only X", "X and no one else" as "X only", "except when" as
      "unless", "can't stand" as "hate";
    - "is a fan of" as "likes", "is a big fan of" as "loves", "is not a fan of" as "does not
      like"; "X's annual salary is $N" as "X earns $N a year"; "X's dentist appointment is",
      "X's appointment with the dentist is" and "X has a dentist appointment" as "X sees the
      dentist"; "had her 90th birthday" as "turned 90"; "X's payday is" as "X gets paid
      on"; "X's home is in" as "X lives in";
      "skips breakfast" as "does not eat breakfast";
    - "has no objection to" and "doesn't mind" as "is fine with", "50/50" as "equally",
      "version 3.11 of Python" and "Python version 3.11" as "Python 3.11";
    - a purpose ("so they can …", "in order to …") as "to …";
    - "would rather have X" as "prefers X" (a verb that says more is kept), "Given the
      choice between X and Y, Z prefers X" as "Z prefers X to Y";
    - "X reports to Y" and "X is Y's direct report" as "X's manager is Y";
    - "mother's sister" as "maternal aunt", "father's father" as "paternal grandfather",
      "spouse's mother" as "mother-in-law", "mother and father" as "parents"; "at no cost" as
      "for free"; "a two-bedroom apartment" as "an apartment with two bedrooms";
    - "X triggers an allergic reaction in Y" as "Y is allergic to X";
    - "follows a vegetarian diet" as "is vegetarian", "goes running" as "runs";
    - "floor 4" as "the 4th floor", "grade 11" as "the 11th grade";
    - "on a monthly basis" as "monthly", "learning how to" as "learning to", "not one of" as
      "none of", "every one of" as "all of";
    - "not once" as "never", "been to" as "visited", "is the owner of" as "owns", "X's
      birthday is on …" as "X was born on …";
    - "does the grocery shopping" as "buys groceries", "abstains from alcohol" as "does not
      drink alcohol", "X's height is six feet" as "X is six feet tall";
    - "lacks X" as "has no X", "not far from" as "near";
    - "if it isn't raining" as "unless it is raining";
    - "is a type 1 diabetic" as "has type 1 diabetes", "is an only child" as "has no
      siblings", "X's year of birth is 2016" as "X was born in 2016";
    - "practises law" as "is a lawyer", "Y holds X's mortgage" as "X's mortgage is with Y";
    - "Porto is where X lives" as "X lives in Porto", "October is when X renews" as "X renews
      in October", "Of all cuisines, Thai is the one X likes best" as "X's favourite
      cuisine is Thai", "Priya is the one who does the reviews" as "Priya does the reviews",
      "Nx is the tool the monorepo is managed with" as "The monorepo is managed with Nx".
    """
    plain = text
    for pattern, plainly in _REWRITES:
        plain = pattern.sub(plainly, plain)
    return plain


# "a single page", "a page": one page, when the other side counts it "one page".
_ONE_OF = re.compile(r"\b(?:a\s+single|an?)\s+(\w+)", re.I)
_COUNTED_ONE = re.compile(r"\bone\s+(\w+)", re.I)


@lru_cache(maxsize=16384)
def ones_written_alike(old: str, new: str) -> tuple[str, str]:
    """The two texts with "a single X" or "a X" written "one X" where the other side counts
    that X as "one X" ("under one page" / "shorter than a single page", "one dog" / "a
    dog"): the number one is no value the two differ in."""

    def counted(side: str, other: str) -> str:
        ones = {noun.casefold() for noun in _COUNTED_ONE.findall(other)}
        if not ones:
            return side
        return _ONE_OF.sub(
            lambda said: f"one {said[1]}" if said[1].casefold() in ones else said[0], side
        )

    return counted(old, new), counted(new, old)
