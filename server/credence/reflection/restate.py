"""A kept belief restated with the one value a user's correction replaces in it."""

from __future__ import annotations

import functools
import re
from typing import Final, Literal, NamedTuple

# A token as written: words, numbers, codes and dotted names ("analytics.orders", "8080").
_TOKEN: Final = re.compile(r"[A-Za-z0-9](?:[\w.\-/]*[A-Za-z0-9])?")
_SENTENCE_END: Final = re.compile(r"[.!?]\s*$")
_VOWELS: Final = frozenset("aeiouAEIOU")

Shape = Literal["number", "code", "name"]


class _Value(NamedTuple):
    """A run of value tokens as written, with its place in the text and its shape."""

    text: str
    start: int
    end: int
    shape: Shape

    @property
    def key(self) -> str:
        return self.text.casefold()


# A name may be corrected to a code and back ("Royal Mail" → "DPD").
_OTHER_PROPER: Final[dict[Shape, tuple[Shape, ...]]] = {"code": ("name",), "name": ("code",)}


def _shape(token: str, opens_sentence: bool) -> Shape | None:
    """What kind of value a token is by how it is written, or None for an ordinary word: a
    number ("8080"), a code in capitals ("SFO"), or a name capitalised where a sentence does
    not open ("Priya", "GitHub"). One capital letter alone ("I", "A") is no value."""
    if any(ch.isdigit() for ch in token):
        return "number"
    if len(token) > 1 and token.isupper():
        return "code"
    if token[:1].isupper() and not opens_sentence and len(token) > 1:
        return "name"
    return None


# Cached: the reflector asks of each kept belief once per sentence of every correction.
@functools.lru_cache(maxsize=1024)
def _values(text: str) -> tuple[_Value, ...]:
    """The values written in ``text``, adjacent names joined ("Royal Mail", "GitHub Actions")."""
    values: list[_Value] = []
    for match in _TOKEN.finditer(text):
        before = text[: match.start()].rstrip(" \"'‘“(")
        shape = _shape(
            match.group(), opens_sentence=not before or bool(_SENTENCE_END.search(before))
        )
        if shape is None:
            continue
        previous = values[-1] if values else None
        if (
            previous is not None
            and shape == previous.shape == "name"
            and text[previous.end : match.start()] == " "
        ):
            values[-1] = _Value(
                text[previous.start : match.end()], previous.start, match.end(), shape
            )
        else:
            values.append(_Value(match.group(), match.start(), match.end(), shape))
    return tuple(values)


@functools.lru_cache(maxsize=1024)
def _whole(value: str) -> re.Pattern[str]:
    return re.compile(rf"(?<![\w.]){re.escape(value)}(?![\w])", re.IGNORECASE)


def _mentions(text: str, value: _Value) -> bool:
    return _whole(value.text).search(text) is not None


def names_a_value_of(belief: str, text: str) -> bool:
    """Whether ``text`` names, in any case, one of the values written in ``belief``: a number,
    a code in capitals or a capitalised name, whole ("Salesforce"; "New York", not "new")."""
    return any(_mentions(text, value) for value in _values(belief))


def offers_a_value_for(belief: str, text: str) -> bool:
    """Whether ``text`` puts forward a code or a name that ``belief`` does not hold, of a shape
    one of its values has ("we switched to BCE/CE" against "dates are written with BC/AD")."""
    held = {value.shape for value in _values(belief)} & {"code", "name"}
    return any(value.shape in held and not _mentions(belief, value) for value in _values(text))


def with_new_value(belief: str, correction: str) -> str | None:
    """``belief`` with its value replaced by the one the user's ``correction`` puts in its
    place, or None when the correction does not name exactly one such swap.

    The user names what is wrong and what is true now ("I fly out of SEA now, not SFO" against
    "The user's home airport is SFO"): the old value is one the belief holds and the correction
    mentions, the new one a value of the same shape (number, code in capitals, or name) that
    only the correction holds, or else a name for a code or a code for a name. There must be
    exactly one such pair, and a belief holding several values must have all of them named;
    otherwise the correction says more than one value changed, or leaves unsaid which one did,
    or says it in words that do not show a value (lower-case names), and the user's own words
    stay the lesson.
    """
    held = _values(belief)
    fresh = [value for value in _values(correction) if not _mentions(belief, value)]
    named = [value for value in held if _mentions(correction, value)]
    if len(named) < len(held) > 1:
        # "Acme pays via PayPal now" against "Send invoices to Acme via Stripe": the value the
        # user left unsaid may be the one that changed, and the one they named its subject.
        return None
    # Another shape counts only when no value of the old one's shape is on offer: "SEA now,
    # not SFO" said beside "Seattle" means SEA.
    swaps: list[tuple[_Value, _Value]] = []
    for same_shape in (True, False):
        for old in named:
            shapes = (old.shape,) if same_shape else _OTHER_PROPER.get(old.shape, ())
            new = {value.key: value for value in fresh if value.shape in shapes}
            if len(new) == 1:
                swaps.extend((old, value) for value in new.values())
        if swaps:
            break
    if len(swaps) != 1:
        return None
    old_value, new_value = swaps[0]
    head = _article_for(belief[: old_value.start], new_value.text)
    return head + new_value.text + belief[old_value.end :]


def _article_for(head: str, word: str) -> str:
    """``head`` with a closing "a"/"an" agreeing with the ``word`` that follows it."""
    match = re.search(r"\b(a|an|A|An) $", head)
    if match is None:
        return head
    article = "an" if word[:1] in _VOWELS else "a"
    if match.group(1)[:1].isupper():
        article = article.capitalize()
    return head[: match.start(1)] + article + " "
