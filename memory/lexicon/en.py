"""English word lists. Casefolded, straight apostrophes."""

from __future__ import annotations

STOPWORDS = frozenset(
    """
    a an the and or but of to in on at for with by from as is are was were be been being am
    has have had do does did i me my mine you your he him his she her hers it its we us our
    they them their this that these those there here so than then too very just also really
    s d ll ve re m will would shall should can could about into over under up out user's
    who whom which what when where why how all any some such own same
    """.split()
)

# "I don't like oysters" -> "likes oysters". The tokeniser splits "don't" into "don" + "t",
# so the "t" half marks it; "no" as in "no longer".
# Unapostrophed forms typed in chat are listed too, except "dont" (a French relative pronoun).
NEGATIONS = frozenset(
    {"not", "t", "never", "no", "nothing", "nobody", "neither", "nor", "none", "cannot"}
    | {"doesnt", "didnt", "cant", "isnt", "wasnt", "arent", "havent", "hasnt", "couldnt"}
)

# "one" is kept (no article sense in English); "a"/"an" are not numbers here.
NUMBER_WORDS = frozenset(
    """
    one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen
    sixteen seventeen eighteen nineteen twenty thirty forty fifty sixty seventy eighty ninety
    hundred hundreds thousand thousands million millions billion dozen half quarter first third
    fourth fifth twice once
    """.split()
)

WEEKDAYS = frozenset("monday tuesday wednesday thursday friday saturday sunday".split())

# "may" and "march" are months only when written with a capital inside a sentence: "I may go"
# and "they march" are not dates. See CASED_MONTHS and dedup.carriers.
MONTHS = frozenset(
    "january february april june july august september october november december".split()
)
CASED_MONTHS = frozenset({"may", "march"})

RELATIVE_TIME = frozenset(
    " ".join(phrase.split())
    for phrase in """
    the day after tomorrow|the day before yesterday|tomorrow|yesterday|today|tonight|
    this morning|this evening|this afternoon|this weekend|this week|this month|this year|
    next week|next month|next year|last week|last month|last year|last night|next|last|
    morning|evening|afternoon|night|noon|midnight|weekend|soon|later
    """.split("|")
    if phrase.strip()
)

CURRENCIES = frozenset(
    {"$", "dollar", "dollars", "cent", "cents", "£", "pound", "pounds", "€", "euro", "euros"}
)

USER_WORDS = frozenset({"user", "the user", "user's"})

CHARACTER_WORDS = frozenset({"character", "narrator", "assistant", "bot", "ai"})

SETTING_WORDS = frozenset(
    "scene setting atmosphere story plot tavern inn room hall castle forest world kingdom".split()
)

ATTITUDE_VERBS = frozenset(
    """
    likes loves enjoys appreciates finds adores admires hates fears dreads worries feels
    prefers cherishes pities suspects thinks believes considers fond proud
    touched moved annoyed delighted worried pleased charmed
    """.split()
)

JUDGMENT_WORDS = frozenset(
    """
    adorable endearing charming cute sweet funny annoying lovely wonderful delightful kind
    touching fascinating amusing unbearable irritating likeable likable
    """.split()
)

OPPOSITE_POLARITY = frozenset(
    "hates hate dislikes dislike loathes detests avoids refuses allergic despises".split()
)

CLAUSE_BREAKS = frozenset(
    {"but", "and", "however", "though", "although", "except", "so", "because", "while"}
)

COPULAS = frozenset({"is", "was", "seems", "appears", "looks", "sounds", "being", "be"})

FIRST_PERSON = frozenset({"i", "my", "me", "mine", "myself"})

DETERMINERS = frozenset({"the", "a", "an", "this", "that", "its"})

# What a memory is about, for a replacement the reflection proposes (memory/write/supersede.py):
# a person has one home, one job, one partner, one course of studies at a time, so a new one
# replaces the old even with no word in common ("lives in Lyon" -> "just moved to Paris").
# "job" is here although "has a job interview on Friday" is then about work too: a counted
# false positive of the criterion (tests/corpora/supersession.py).
TOPIC_HOME = frozenset(
    "lives live living moved moving relocated flat apartment house home rent rents".split()
)
TOPIC_WORK = frozenset(
    "works work working job jobs employed unemployed hired fired quit retired career".split()
)
TOPIC_PARTNER = frozenset(
    """
    girlfriend boyfriend partner husband wife fiance fiancee married divorced engaged single
    dating broke separated
    """.split()
)
TOPIC_STUDIES = frozenset("studies studying student degree university college major".split())

# Words that never say on their own what a memory is about: the verbs of taste ("likes jazz"
# and "likes rock" are two tastes), naming ("has a cat named Misha" and "has a dog named Rex"
# are two pets), everyday verbs ("plays the cello", "plays football"; "is learning Spanish",
# "is learning to swim"), things people have several of ("a dentist appointment", "a job
# interview"), and the words of change itself.
NOT_A_SUBJECT = frozenset(
    """
    likes like loves love enjoys enjoy prefers prefer hates hate dislikes adores adore
    named called name
    appointment appointments meeting pet pets animal friend friends child children kid kids
    now new just recently longer anymore actually since started starting became becoming got
    plays play playing played stopped stop learning learns learn goes going years old
    """.split()
)
