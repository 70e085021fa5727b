"""General English word classes the pair judgement reads: antonyms, scope, preference, language."""

from __future__ import annotations

from collections.abc import Callable


def _words(text: str) -> tuple[str, ...]:
    return tuple(text.split())


# Common English antonym pairs (adjectives, verbs, adverbs, prepositions), the kind any
# thesaurus lists; none is taken from a test case. Read two words at a time. The
# complementary ones (_COMPLEMENTARY_WORDS, below) are antonyms too.
_ANTONYM_WORDS = _words(
    """
    enable disable  allow deny  allow block  allow ban
    increase decrease  increase reduce  increase lower
    raise lower  grow shrink  before after  earlier later  early late  fast slow
    faster slower  quick slow  quickly slowly  required optional  mandatory optional
    compulsory optional  including excluding  accept decline
    approve reject  approve deny  open close  show hide  reveal hide  lock unlock
    encrypt decrypt  compress decompress  minimum maximum  min max  public private
    internal external  add remove  insert delete  create delete  start stop  begin end
    first last  upper lower  high low  higher lower  more less  more fewer  most least
    long short  longer shorter  large small  big small  larger smaller  bigger smaller
    expand collapse  connect disconnect  mount unmount  subscribe unsubscribe
    install uninstall  synchronous asynchronous  sync async  online offline
    manual automatic  manually automatically  ascending descending  asc desc
    absolute relative  strict lenient  strict loose  safe unsafe  secure insecure
    valid invalid  upload download  import export  push pull  buy sell
    send receive  light dark  hot cold  warm cool  cheap expensive  easy hard
    formal informal  verbose quiet  verbose concise  inside outside  inbound outbound
    incoming outgoing  wide narrow  thick thin  heavy light  full empty
    always rarely  always seldom  often rarely  often seldom  usually rarely
    frequently rarely  keep discard  keep delete  keep drop  retain discard  retain delete
    save discard  trust distrust  like dislike  love hate  prefer avoid  merge split
    join split  attach detach  activate deactivate  plain rich  lowercase uppercase
    singular plural  positive negative  enabled disabled  allowed forbidden
    allowed prohibited  accepted rejected  shown hidden  locked unlocked  old new
    oldest newest  older newer  top bottom  front back  detailed brief  formal casual
    strict relaxed  encourage discourage  recommend discourage  grant revoke  grant deny
    over under  above below  rise fall  raise drop  gain lose  enter exit  entry exit
    input output  lowest highest  smallest largest  earliest latest  simple complex
    simple complicated  tight loose  tighten loosen  fixed variable  static dynamic
    temporary permanent  minimize maximize  minimise maximise  shorten lengthen
    widen narrow  upgrade downgrade  promote demote  hire fire  explicit implicit
    lazy eager  remote local  local global  vertical horizontal  portrait landscape
    inclusive exclusive  polite rude  good bad  better worse  best worst  right wrong
    success failure
    frequent rare  deep shallow  strong weak  clean dirty  wet dry
    loud quiet  soft hard  ahead behind  soon later  arrive depart
    up down  moist dry  damp dry  spicy mild  aggressive conservative  serial parallel
    serially parallel  sequential parallel  sequentially parallel  minimal maximal
    minimalist maximalist  metric imperial  lively quiet  busy quiet  cheap premium
    budget premium
    """
)


# Units of measure and currencies by name: a word swapped for another of these is a changed
# value ("in kilometres" → "in miles"), even with no number beside it.
UNIT_WORDS = frozenset(
    _words(
        """
        millisecond second minute hour day week month year byte kilobyte megabyte gigabyte
        terabyte bit kilobit megabit gigabit metre meter kilometre kilometer centimetre
        centimeter millimetre millimeter mile yard foot feet inch km cm mm ft gram kilogram
        milligram pound ounce ton tonne kg mg lb lbs oz litre liter millilitre milliliter
        gallon pint quart ml cup tablespoon teaspoon tbsp tsp celsius fahrenheit kelvin degree
        percent pixel px pt em rem euro dollar yen yuan franc rupee peso krona krone rand eur
        usd gbp jpy chf cny inr cad aud sek nok dkk
        """
    )
)

# Phrasal verbs folded to one word before antonyms are read ("turn off" = "disable").
PHRASAL = {
    ("turn", "on"): "enable",
    ("turn", "off"): "disable",
    ("switch", "on"): "enable",
    ("switch", "off"): "disable",
    ("opt", "in"): "include",
    ("opt", "out"): "exclude",
    ("leave", "out"): "exclude",
    ("log", "in"): "login",
    ("log", "out"): "logout",
}

# Words that change meaning when joined to the next: "every day" / "everyday", "may be" /
# "maybe", "over time" / "overtime", "in to" / "into".
NEVER_JOINED_FIRST = frozenset(
    _words("a an all any at be by can every for in may no on out over some to under up with")
)
# Particles written apart make a verb ("set up", "log in"), with a hyphen a noun ("set-up").
PARTICLES = frozenset(_words("in into off on one out to up"))
# Articles, owners' pronouns and demonstratives: the words before a noun that say which.
DETERMINERS = frozenset(_words("a an the her his their my our its your this that"))

# Kin counted: "the user's brother" is one person, "the user's brothers" several. (Roles such
# as "customer" are often counted either way in one meaning: "customer complaints".)
PEOPLE = frozenset(
    _words(
        """
        brother sister son daughter child kid parent cousin aunt uncle nephew niece grandchild
        grandparent grandson granddaughter stepson stepdaughter
        """
    )
)

# Prefixes that negate a word: "unlock", "disconnect", "insecure", "non-blocking".
NEGATING_PREFIXES = ("un", "dis", "in", "im", "non", "de")

# Words after which the rest of a sentence narrows where a rule applies.
# Each marker names its class: "if" and "when" set the same condition.
SCOPE_MARKERS = {
    **dict.fromkeys(_words("if when whenever provided once where"), "if"),
    **dict.fromkeys(_words("unless except but"), "unless"),
    "only": "only",
}
# Words that make a statement a permission rather than a rule.
PERMISSION_WORDS = frozenset(_words("allowed fine ok okay permitted acceptable can may able"))
# Absolute rules: what a scoped exception carves a hole into.
ABSOLUTE_WORDS = frozenset(_words("always never must dont not no every all only avoid"))

# Verbs of feeling: what follows them is a taste of whoever holds it ("Alice prefers …").
FEELING_VERBS = frozenset(_words("like love enjoy favour favor dislike hate prefer"))

# Relational words whose two sides carry a preference or an order: swapping them reverses it.
PREFERENCE_MARKERS: tuple[tuple[str, ...], ...] = (
    ("rather", "than"),
    ("instead", "of"),
    ("in", "place", "of"),
    ("not",),
    ("over",),
    ("above",),
    ("than",),
    ("to",),
    ("vs",),
    ("versus",),
    ("before",),
    ("after",),
)

# The most frequent function words of the languages a reader is most likely to mix with
# English; enough to tell a sentence's language, not a translation lexicon.
FOREIGN_FUNCTION_WORDS = frozenset(
    _words(
        """
        der die das und ist nicht ein eine mit für auf den dem des zu von im innerhalb jeden
        jede immer nie niemals bitte oder aber wenn kein keine sie wir ich du es sich auch
        nach bei le la les et est pas un une des du de pour avec dans sur ne jamais toujours
        ou mais si par el los las y es no por con para en del al siempre nunca pero unos unas
        su sus lo il gli di che non è per una con sono ogni sempre mai ma anche della delle
        nel o os as um uma não com para em nunca sempre mas também het een en niet met voor
        op van zijn altijd nooit maar ook eines einen einem einer ihre ihr uns unsere sind wird
        werden vous nous votre vos leur cada las ogni vostro nostro quando quand cuando wenn
        """
    )
)
ENGLISH_FUNCTION_WORDS = frozenset(
    _words(
        """
        the a an and or but is are was be to of in on at for with by from as it this that
        these those not no never always do does dont should must will can may you your we
        our they their he she his her if when then than before after every each all any into
        over under per via use keep send run make ask set
        """
    )
)


# Antonyms with nothing between them: what is not the one is the other ("never forgets" is
# "always remembers"). Not gradable ones ("not hot" is not "cold"), nor actions a rule may
# order or forbid ("Never disable the firewall" is no order to enable it).
_COMPLEMENTARY_WORDS = _words(
    """
    remember forget  succeed fail  pass fail  include exclude  accept reject  win lose
    present absent  agree disagree  appear disappear  allow forbid  permit forbid
    allow prohibit  permit prohibit  true false  visible hidden
    """
)


def complementary_pairs(stem: Callable[[str], str]) -> frozenset[frozenset[str]]:
    """The complementary antonym pairs, each as a set of two stems under the caller's stemmer."""
    pairs = zip(_COMPLEMENTARY_WORDS[::2], _COMPLEMENTARY_WORDS[1::2], strict=True)
    return frozenset(frozenset((stem(first), stem(second))) for first, second in pairs)


def antonym_table(stem: Callable[[str], str]) -> dict[str, frozenset[str]]:
    """Map each stem to the stems that mean its opposite, under the caller's stemmer."""
    table: dict[str, set[str]] = {}
    words = _ANTONYM_WORDS + _COMPLEMENTARY_WORDS
    for first, second in zip(words[::2], words[1::2], strict=True):
        left, right = stem(first), stem(second)
        table.setdefault(left, set()).add(right)
        table.setdefault(right, set()).add(left)
    return {word: frozenset(opposites) for word, opposites in table.items()}


# Comparisons that say the same thing with their two sides exchanged: "A is older than B" is
# "B is younger than A". A word may have more than one ("shorter": "taller", "longer").
_CONVERSE_PAIRS = (
    ("older", "younger"),
    ("older", "newer"),
    ("taller", "shorter"),
    ("longer", "shorter"),
    ("bigger", "smaller"),
    ("larger", "smaller"),
    ("heavier", "lighter"),
    ("higher", "lower"),
    ("faster", "slower"),
    ("warmer", "colder"),
    ("hotter", "colder"),
    ("earlier", "later"),
    ("above", "below"),
    ("over", "under"),
    ("before", "after"),
    ("more", "less"),
    ("more", "fewer"),
    ("ahead", "behind"),
    ("precedes", "follows"),
    ("harder", "easier"),
    ("better", "worse"),
    ("stronger", "weaker"),
    ("closer", "farther"),
    ("closer", "further"),
    ("wider", "narrower"),
    ("thicker", "thinner"),
    ("deeper", "shallower"),
    ("louder", "quieter"),
    ("richer", "poorer"),
    ("safer", "riskier"),
    ("cheaper", "pricier"),
)
CONVERSE_OF = {
    word: frozenset(
        other for pair in _CONVERSE_PAIRS if word in pair for other in pair if other != word
    )
    for pair in _CONVERSE_PAIRS
    for word in pair
}
