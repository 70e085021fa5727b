"""A user's intervention as a lesson: filler stripped, one clean sentence in their words."""

from __future__ import annotations

import re

from credence.memory.semantics.lexicon import FEELING_VERBS
from credence.memory.semantics.thesaurus import COMMON_VERBS
from credence.memory.semantics.tokens import analyse, is_negative

MAX_LESSON_CHARS = 200

_SENTENCE_BREAK = re.compile(r"(?<=[.!?;])\s+|\n+")
_LEADING_FILLER = re.compile(
    r"^(?:(?:no|nope|nah|ok|okay|hey|hi|hmm|wait|sorry|well|again|ugh|oh|whoa|woah|wow|uh|um"
    r"|erm|hold on)\s*[,.!:;\-—]+\s*"
    r"|(?:please|pls|actually|also|and|but|so|then|again|just|honestly)\b[\s,]*"
    r"|(?:i said|i told you(?: so| before| already)?|like i said|as i said"
    r"|i already said(?: it)?|i keep (?:telling you|saying this|saying it)"
    r"|from now on|going forward|in (?:the )?future|remember (?:this|that)|important)"
    r"\b[\s,:]*)",
    re.IGNORECASE,
)
_REQUEST_FORM = re.compile(
    r"^(?:(?:can|could|would|will) you(?: please)?|you (?:should|need to|have to|must)"
    r"|i (?:want|need) you to|i(?:'d| would) like you to|remember to|be sure to"
    r"|make sure (?:to|that you|you))\s+",
    re.IGNORECASE,
)
# A question that asks for an action rather than an answer. "Can we …?" alone may ask leave
# ("can we deploy on Fridays?"); "can we not …?" asks for something to stop.
_REQUEST_QUESTION = re.compile(
    r"^(?:(?:can|could|would|will) you(?: please)?(?P<negated> not)?"
    r"|(?:can|could) we(?: please)? (?P<stop>not))\s+",
    re.IGNORECASE,
)
# "Use spaces, not tabs" / "… instead of tabs" asserts its main clause: the tail is contrast.
_CONTRAST_TAIL = re.compile(r"(?:[,;:]\s*not\b|\b(?:instead of|rather than)\b).*$", re.I | re.S)
_TRAILING_FILLER = re.compile(
    r"(?:[\s,]+(?:please|pls|thanks|thank you|ok|okay|i told you|i keep telling you"
    r"|i keep saying (?:this|it))|[\s.!?,;:]+)+$",
    re.IGNORECASE,
)


# A complaint before the remedy ("That's far too long, keep emails short") is not the lesson.
_COMPLAINT_CLAUSE = re.compile(
    r"^(?:(?:that'?s|it'?s|this is|these are|way too|far too|much too|too|again with|wrong"
    r"|not now)\b[^,;:]*|you(?:'ve| have)? [^,;:]*\bagain)[,;:]\s+(?=\S)",
    re.IGNORECASE,
)
# The lesson is read later by an agent: the user's "my"/"me"/"I" becomes "the user('s)".
_FIRST_PERSON = (
    (re.compile(r"\b(?:my|mine)\b", re.IGNORECASE), "the user's"),
    (re.compile(r"\bme\b", re.IGNORECASE), "the user"),
)


_I_VERB = re.compile(
    r"\bI(?:'m| am|'ve| have|'d|'ll| (?:don'?t|do not)| (?:only|always|never|usually|also|just"
    r"|really|still|mostly) [a-z]+| [a-z]+)\b"
)
_AS_IS = frozenset(
    [
        "can",
        "could",
        "will",
        "would",
        "should",
        "must",
        "might",
        "may",
        "did",
        "was",
        "had",
        "shall",
        "cannot",
        "can't",
        "won't",
    ]
)
# "I moved" stays "the user moved": a past tense takes no "s".
_IRREGULAR_PAST = frozenset(
    (
        *("went", "flew", "left", "got", "took", "made", "said", "told", "sent", "bought"),
        *("sold", "came", "became", "began", "gave", "found", "kept", "lost", "met", "paid"),
        *("ran", "saw", "thought", "wrote", "drove", "forgot", "quit", "set", "put", "let"),
    )
)
_I_FIXED = {"I'm": "the user is", "I am": "the user is", "I've": "the user has"}
_I_FIXED |= {"I have": "the user has", "I'd": "the user would", "I'll": "the user will"}


def _regular_past(verb: str) -> bool:
    """ "moved", "booked" — but not "need", "feed", "embed"."""
    return verb.endswith("ed") and not verb.endswith("eed") and len(verb) > 4


def _third_person(verb: str) -> str:
    """ "prefer" → "prefers", "fly" → "flies", "wash" → "washes" (regular English)."""
    if verb in _AS_IS or verb in _IRREGULAR_PAST or _regular_past(verb):
        return verb
    if verb.endswith(("s", "sh", "ch", "x", "z", "o")):
        return verb + "es"
    if verb.endswith("y") and verb[-2:-1] not in ("a", "e", "i", "o", "u"):
        return verb[:-1] + "ies"
    return verb + "s"


def _user_for_i(match: re.Match[str]) -> str:
    said = match.group(0)
    if said in _I_FIXED:
        return _I_FIXED[said]
    words = said.split()
    if words[1] in ("don't", "dont") or words[1:] == ["do", "not"]:
        return "the user doesn't"
    words[-1] = _third_person(words[-1].casefold())
    return " ".join(["the user", *words[1:]])


def _general(lesson: str) -> str:
    """Drop a leading complaint clause and speak of the user in the third person."""
    remedy = _COMPLAINT_CLAUSE.sub("", lesson, count=1)
    if remedy != lesson and analyse(remedy)[1]:
        lesson = remedy
    for pattern, replacement in _FIRST_PERSON:
        lesson = pattern.sub(replacement, lesson)
    return _I_VERB.sub(_user_for_i, lesson)


def in_third_person(text: str) -> str:
    """``text`` speaking of the user in the third person ("I don't" → "the user doesn't")."""
    for pattern, replacement in _FIRST_PERSON:
        text = pattern.sub(replacement, text)
    return _I_VERB.sub(_user_for_i, text)


def _sentences(text: str) -> list[str]:
    text = spelled_out(text)
    return [part.strip() for part in _SENTENCE_BREAK.split(text) if part and part.strip()]


# Chat shorthand for the words the request forms and the third person are written with.
_SHORTHAND = {"u": "you", "ur": "your", "ppl": "people", "plz": "please", "thx": "thanks"}
_SHORTHAND_WORD = re.compile(
    r"(?<![\w'.-])(" + "|".join(_SHORTHAND) + r")(?![\w'.-])", re.IGNORECASE
)


def spelled_out(text: str) -> str:
    """``text`` with chat shorthand written out ("can u put …" → "can you put …")."""
    return _SHORTHAND_WORD.sub(lambda match: _SHORTHAND[match.group(1).lower()], text)


def _tidy(sentence: str) -> str:
    """Strip conversational filler and request forms from one sentence."""
    lesson = " ".join(sentence.split())
    for _ in range(4):
        stripped = _REQUEST_FORM.sub("", _LEADING_FILLER.sub("", lesson).strip()).strip()
        if stripped == lesson:
            break
        lesson = stripped
    return _TRAILING_FILLER.sub("", lesson).strip()


def main_clause_negative(text: str) -> bool:
    """Return the polarity of ``text`` ignoring a contrastive tail (", not tabs", "instead of")."""
    return is_negative(_CONTRAST_TAIL.sub("", text))


def tidied(text: str) -> str:
    """Return ``text`` with each sentence's filler removed: a denial's "no," is not a negation."""
    return " ".join(filter(None, (_tidy(sentence) for sentence in _sentences(text))))


# A sentence that only scolds what was done ("Way too wordy.", "You used cups again.") or
# only insists ("I told you.") carries no rule of its own.
_COMPLAINT_SENTENCE = re.compile(
    r"^(?:(?:way|far|much|too|again|wrong|not again|ugh|seriously|come on)\b"
    r"|(?:that'?s|it'?s|this is|these are|this reads|it reads) (?:\w+ )?(?:too|way|far|wrong"
    r"|not (?:what|right|it|ok)|terrible|awful|bad|useless|annoying|inconsistent|ridiculous"
    r"|confusing|unreadable|wordy|robotic|like|the (?:same|third|second)|again)\b"
    r"|you(?:'ve| have)? (?:\w+ )?(?:\w+ed|did|made|put|forgot|got|went|wrote|left|sent|took"
    r"|gave|kept|used|set|ran|chose|picked|booked)\b[^,;:]*\bagain\b"
    r"|(?:i (?:told|said|asked|keep)|as i|like i))\b",
    re.IGNORECASE,
)
# "By the way, …" sets an aside apart: news about something else, never part of the rule.
_ASIDE = re.compile(r"^(?:by the way|btw|fyi|unrelated|side note|also unrelated)\b", re.I)
# Words saying a fact changed ("we moved off Jira", "it's gone"): an aside that says one
# ("btw we ditched pixieset") is how users report a change, not chit-chat.
CHANGE = re.compile(
    r"\b(?:any ?more|no longer|no more|these days|stopped|quit|moved (?:\w+ ){0,3}?(?:off|away|to)"
    r"|out of date|outdated|replaced|switched|changed|not true|(?:is|that'?s) wrong|nowadays"
    r"|used to|renamed|ripped out|got rid of|migrated|retired|dropped|ditched|scrapped|deregistered"
    r"|cancell?ed"
    r"|since (?:last|the)|as of|forget (?:the|that|about|it)|doesn'?t exist"
    r"|(?:has |have )?left (?:the|us|our)|(?:i|we|she|he|they) left|(?:is|are|'s|'re) gone"
    r"|took over|taken over|handed (?:it )?over)\b",
    re.IGNORECASE,
)
# One-off scope: "for this trip", "today", "just this once" — a request, not a standing rule.
_ONE_OFF = re.compile(
    r"\b(?:this time|just this once|for now|(?:for )?today|tonight|tomorrow|right now"
    r"|this (?:morning|afternoon|evening|week|weekend|trip|report|email|ticket|order)"
    r"|(?:for|on|just) this one|this one only)\b",
    re.IGNORECASE,
)
_DIRECTIVE_START = re.compile(
    r"^(?:no|not|nothing|none|never|always|only|don'?t|do not|stop|avoid|please"
    r"|i(?:'d| would)? (?:prefer|want|like|need|only|always|never|don'?t|do not|hate|rather))\b",
    re.IGNORECASE,
)
# Verbs an instruction starts with ("Round to cents", "Greet people by name"): without a
# tagger, a sentence opening with one of these is read as an imperative. The verbs of feeling
# open praise and complaints ("Love it", "Hate that font") more often than requests.
_FEELINGS = FEELING_VERBS - {"prefer"}  # "Prefer short answers" is an instruction
_IMPERATIVE_VERBS = COMMON_VERBS - _FEELINGS
_MODAL = re.compile(
    r"\b(?:always|never|must|mustn'?t|has to|have to|had better|should|shouldn'?t|needs? to"
    r"|ought to|only|at least|at most|no more than|instead)\b",
    re.IGNORECASE,
)
_SUBJECT_VERB = re.compile(
    r"^\S+ (?:\w+ed|is|are|was|were|has|had|will|would|can|could|went|left|got|took|became"
    r"|moved|runs|lives|works|handles|uses)\b",
    re.IGNORECASE,
)


def is_directive(sentence: str) -> bool:
    """True when a tidied sentence asks for something: an imperative ("Round to two
    decimals"), a prohibition ("No flights before 9"), or a modal rule ("X has to be Y")."""
    text = sentence.strip()
    if not text or text.endswith("?"):
        return False
    if _MODAL.search(text) or _DIRECTIVE_START.match(text):
        return True
    words = text.split()
    first = words[0].casefold().strip(",;:")
    if first in _IMPERATIVE_VERBS and not _SUBJECT_VERB.match(text):
        return True
    # A terse fragment with no subject or verb ("Celsius!", "F-strings.", "Aisle seats only")
    # is an elliptical request: news has a subject and a verb ("Jo is visiting").
    return (
        len(words) <= MAX_FRAGMENT_WORDS
        and first not in _NOT_A_REQUEST
        and first not in _FEELINGS
        and not _FINITE_VERB.search(text)
        and not _SUBJECT_VERB.match(text)
    )


MAX_FRAGMENT_WORDS = 4
_NOT_A_REQUEST = frozenset(
    (
        *("i", "we", "you", "he", "she", "they", "it", "it's", "its", "this", "that", "these"),
        *("those", "there", "here", "the", "a", "an", "my", "our", "your", "his", "her", "their"),
        *("what", "who", "which", "where", "when", "why", "how", "if", "and", "but", "so", "or"),
        *("yes", "yeah", "yep", "ok", "okay", "thanks", "thank", "great", "perfect", "good"),
        *("nice", "fine", "sure", "right", "wow", "cool", "oh", "ah", "hmm", "same", "also"),
    )
)
_FINITE_VERB = re.compile(
    r"\b(?:is|are|was|were|am|be|been|has|have|had|do|does|did|will|would|can|could|'s|'re"
    r"|'m|'ve|'ll|'d)\b|\w(?:'s|'re|'m|'ve|'ll|'d)\b",
    re.IGNORECASE,
)


def is_complaint(sentence: str) -> bool:
    """True when a tidied sentence only scolds or insists ("Way too wordy.", "I told you.")."""
    return bool(_COMPLAINT_SENTENCE.match(sentence)) and not _MODAL.search(sentence)


def is_one_off(text: str) -> bool:
    """True when ``text`` scopes itself to this one occasion ("just this once", "today")."""
    return bool(_ONE_OFF.search(text))


def lesson_sentences(text: str, focus: frozenset[str] = frozenset()) -> list[str]:
    """The tidied sentences of ``text`` that belong in a lesson, in the user's order.

    Questions, asides ("by the way …"), sentences that only scold ("Way too long.") or
    insist ("I told you.") are dropped. What is left keeps every directive sentence, and a
    statement only when it shares a word with ``focus`` or with a kept directive (the reason
    given for the rule: "we have no package-lock here"); with no directive at all, every
    statement stays (a change of fact is told as one).
    """
    kept: list[tuple[str, frozenset[str], bool]] = []
    for sentence in _sentences(text):
        raw = " ".join(sentence.split())
        if raw.endswith("?"):
            raw = _asked_for(raw)
        if not raw or (_ASIDE.match(_LEADING_FILLER.sub("", raw)) and not CHANGE.search(raw)):
            continue
        tidy = _tidy(raw)
        remedy = _COMPLAINT_CLAUSE.sub("", tidy, count=1)
        if remedy != tidy and analyse(remedy)[1]:
            tidy = remedy
        tokens = analyse(tidy)[1]
        if not tokens or is_complaint(tidy):
            continue
        kept.append((tidy, tokens, is_directive(tidy)))
    directive_tokens = frozenset().union(*(tokens for _, tokens, rule in kept if rule))
    anchor = focus | directive_tokens
    if not directive_tokens:
        return [tidy for tidy, _, _ in kept]
    return [tidy for tidy, tokens, rule in kept if rule or tokens & anchor]


def _asked_for(question: str) -> str:
    """What a question in request form asks for ("can we not print() here?" → "don't
    print() here", "could you cite the page?" → "cite the page"), or "" for a question."""
    request = _REQUEST_QUESTION.match(_LEADING_FILLER.sub("", question))
    if request is None:
        return ""
    asked = request.string[request.end() :].rstrip("?").strip()
    return f"don't {asked}" if request.group("negated") or request.group("stop") else asked


def _finish(sentence: str) -> str:
    sentence = sentence.rstrip(" ,;:")
    if not sentence:
        return ""
    return sentence[0].upper() + sentence[1:] + ("" if sentence[-1] in ".!" else ".")


def imperative(text: str, focus: frozenset[str] = frozenset()) -> str:
    """Turn a user's intervention into a lesson in their own words.

    Keeps the sentences :func:`lesson_sentences` finds (the rule, and the reason the user gave
    for it), strips conversational filler ("no,", "please", "I told you", "from now on") and
    request forms ("can you …?", "you should …"), drops a leading complaint ("that's too long,
    …"), speaks of the user in the third person ("my" → "the user's"), then capitalises and
    ends each sentence with a full stop. When the whole is longer than ``MAX_LESSON_CHARS``,
    the sentences carrying most ``focus`` tokens (then the directive ones) are kept first.
    Falls back to the one sentence carrying most ``focus`` tokens when nothing qualifies.
    """
    chosen = lesson_sentences(text, focus)
    if not chosen:
        return _single(text, focus)
    if sum(len(sentence) + 1 for sentence in chosen) > MAX_LESSON_CHARS:
        ranked = sorted(
            range(len(chosen)),
            key=lambda n: (
                -len(analyse(chosen[n])[1] & focus),
                not is_directive(chosen[n]),
                n,
            ),
        )
        budget, picked = MAX_LESSON_CHARS, set[int]()
        for number in ranked:
            if len(chosen[number]) + 1 <= budget or not picked:
                picked.add(number)
                budget -= len(chosen[number]) + 1
        chosen = [chosen[n] for n in sorted(picked)]
    lesson = " ".join(_finish(_general(sentence)) for sentence in chosen)
    if len(lesson) > MAX_LESSON_CHARS:
        lesson = lesson[:MAX_LESSON_CHARS].rsplit(" ", 1)[0].rstrip(" ,;:.") + "."
    return lesson


def _single(text: str, focus: frozenset[str]) -> str:
    """The one sentence carrying most ``focus`` tokens, then the most content, tidied."""
    scored = []
    for number, sentence in enumerate(_sentences(text)):
        tokens = analyse(sentence)[1]
        scored.append((len(tokens & focus), len(tokens), -number, sentence))
    if not scored:
        return ""
    chosen = max(scored)[3]
    lesson = _general(_tidy(chosen))
    if not analyse(lesson)[1]:
        lesson = _TRAILING_FILLER.sub("", " ".join(chosen.split())).strip()
    if len(lesson) > MAX_LESSON_CHARS:
        lesson = lesson[:MAX_LESSON_CHARS].rsplit(" ", 1)[0]
    if not lesson:
        return ""
    return lesson[0].upper() + lesson[1:] + "."
