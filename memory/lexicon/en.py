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

# --- Dedup (memory.write.dedup): words that are the fact itself, in the format of fr.py's (see
# there): members separated by commas, the forms of one member by "=", the first naming it.
# "Has a cat called Pumpkin" / "Has a rabbit called Pumpkin" scored 0.90.
# Known false positives (a word of the class used otherwise, a missed merge when only one
# wording has it): "bass" (the fish), "organ" (the body's), "keyboard" (the computer's),
# "history" ("a history of migraines"), "apple" (the brand).

ANIMALS = """
cat=kitty, kitten, dog=doggo, puppy, rabbit=bunny, hamster, guinea pig, ferret, mouse=mice,
rat, gerbil, chinchilla, parrot, budgie, canary, bird, chicken=hen, rooster, duck, goldfish,
fish, turtle, tortoise, snake, lizard, gecko, iguana, spider, tarantula, horse, pony, donkey,
goat, sheep, cow, pig, bee, wasp, bat, shark, wolf, bear, fox, axolotl, snail, ant, tick
"""

INSTRUMENTS = """
piano, guitar, electric guitar, bass guitar=bass, drums=drum kit, violin=fiddle, viola, cello,
double bass, saxophone=sax, trumpet, trombone, tuba, french horn=horn, clarinet, flute, oboe,
bassoon, harp, accordion, harmonica, ukulele=uke, banjo, mandolin, synth=synthesizer,
keyboard, organ, bagpipes, xylophone, recorder, singing
"""

# "football" is soccer in British English and a different game in American: one member here.
SPORTS = """
football=soccer, futsal, rugby, tennis, table tennis=ping-pong=ping pong, badminton, squash,
basketball, volleyball, beach volleyball, handball, baseball, softball, cricket, hockey,
ice hockey, field hockey, lacrosse, golf, swimming, diving, water polo, surfing=surf,
windsurfing, sailing, rowing, kayaking=canoeing, climbing=bouldering, rock climbing, skiing,
snowboarding, skating, ice skating, rollerblading, skateboarding, cycling=biking, mountain
biking, running=jogging, trail running, marathon, half marathon=half-marathon, triathlon,
ironman, hiking, judo, karate, taekwondo, boxing, kickboxing, muay thai, mma, jiu-jitsu, bjj,
aikido, fencing, wrestling, weightlifting=lifting, powerlifting, crossfit, pilates, yoga,
zumba, dance=dancing, ballet, hip hop, salsa, horse riding=riding, gymnastics, athletics,
parkour, bowling, darts, snooker, chess, padel, archery, frisbee, ultimate frisbee,
netball, dodgeball, american football
"""

JOBS = """
nurse, doctor=gp, surgeon, dentist, pharmacist, physio=physiotherapist, physical therapist,
midwife, paramedic, vet=veterinarian, therapist, psychologist, psychiatrist, counsellor=
counselor, carer=caregiver, teacher, teaching assistant, lecturer, professor, tutor,
headteacher, nanny, childminder, engineer, software engineer, developer=programmer=coder,
web developer, data analyst, data scientist, designer, graphic designer, architect, lawyer=
attorney=solicitor, barrister, paralegal, accountant, banker, consultant, salesman=
salesperson, sales assistant, cashier, receptionist, secretary, estate agent=realtor,
baker, butcher, chef, waiter, waitress, bartender=barman, barista, dishwasher, plumber,
electrician, carpenter=joiner, builder, bricklayer, painter, decorator, roofer, mechanic,
gardener, landscaper, farmer, fisherman, taxi driver, bus driver, lorry driver=truck driver,
delivery driver, courier, postman=postwoman, pilot, flight attendant=cabin crew, firefighter=
fireman, police officer=policeman=policewoman=cop, detective, soldier, security guard,
lifeguard, journalist=reporter, photographer, writer=author, novelist, translator,
interpreter, editor, librarian, researcher, scientist, actor, actress, musician, singer,
dancer, artist, illustrator, sculptor, youtuber, streamer, influencer, hairdresser=
hairstylist, barber, beautician, florist, cleaner, housekeeper, factory worker, warehouse
worker, civil servant, social worker, optician, tattoo artist, data engineer, analyst,
manager, product manager, project manager, cook, driver, coach, judge, guide
"""

# Words of JOBS that are as often something else ("loves to cook", "a guide to"): a job only
# right after one of ARTICLES ("a cook", "works as a driver").
ARTICLE_ONLY = frozenset({"cook", "driver", "coach", "judge", "guide", "cleaner", "painter"})
ARTICLES = frozenset({"a", "an", "as", "the"})

STUDIES = """
medicine, law, computer science=cs=comp sci, maths=math=mathematics, physics, chemistry,
biology, history, geography, philosophy, psychology=psych, sociology, economics=econ,
business, business studies, management, marketing, finance, accounting, literature, english
literature=english lit, languages, modern languages, architecture, engineering, civil
engineering, mechanical engineering, electrical engineering, nursing, pharmacy, dentistry,
physiotherapy, design, fine art=fine arts, art, art history, music, musicology, film,
film studies, media studies, journalism, communications, politics, political science,
international relations, anthropology, linguistics, archaeology, astrophysics, astronomy,
geology, agriculture, electronics, biochemistry, neuroscience, theology, classics,
criminology, veterinary science, sports science, education, social work, data science
"""

FOODS = """
pizza, pasta, sushi, burger=hamburger, cheeseburger, kebab, tacos=taco, curry, ramen, pho,
paella, risotto, lasagna=lasagne, noodles, dumplings, fondue, steak, bacon, sausage, ham,
chicken, beef, pork, lamb, veal, turkey, duck, meat, fish, salmon, tuna, shrimp=prawns,
oysters, mussels, shellfish, seafood, crab, lobster, salad, soup, fries=chips, crisps, cake,
pie, ice cream, chocolate, dark chocolate, milk chocolate, sweets=candy, cheese, bread, rice,
eggs=egg, milk, dairy, butter, yogurt=yoghurt, honey, sugar, fruit, vegetables=veg, apple,
pear, peach, apricot, plum, banana, orange, lemon, lime, pineapple, mango, kiwi, grapes,
melon, watermelon, strawberry, raspberry, blueberry, cherry, avocado, tomato, carrot,
broccoli, cabbage, cauliflower, spinach, courgette=zucchini, aubergine=eggplant, pepper,
cucumber, mushroom, onion, garlic, coriander=cilantro, parsley, basil, chilli=chili, olive,
lentils, chickpeas, beans, coffee, black coffee, tea, green tea, herbal tea, hot chocolate,
wine, red wine, white wine, beer, cider, champagne, whisky=whiskey, rum, vodka, gin, coke=cola,
soda, juice, orange juice, nuts, tree nuts, peanuts=peanut, almonds=almond, hazelnuts,
walnuts, cashews, pistachios, sesame, soy=soya, gluten, lactose, wheat, mustard, celery,
sulphites, pepperoni, margherita
"""

LANGUAGES = """
english, french, spanish, italian, german, portuguese, dutch, flemish, japanese, chinese,
mandarin, cantonese, korean, vietnamese, thai, arabic, hebrew, turkish, greek, russian,
ukrainian, polish, czech, romanian, hungarian, swedish, norwegian, danish, finnish, icelandic,
irish, gaelic, welsh, basque, catalan, latin, ancient greek, hindi, urdu, bengali, punjabi,
persian=farsi, swahili, tagalog, indonesian, esperanto, sign language, asl, bsl
"""

# Not listed: places that are common words ("Reading", "Bath", "Nice", "Jersey").
PLACES = """
england, scotland, wales, ireland, northern ireland, uk=britain=united kingdom, france,
belgium, switzerland, germany, spain, italy, portugal, netherlands=holland, denmark, sweden,
norway, finland, iceland, poland, austria, greece, croatia, romania, hungary, russia, ukraine,
turkey, morocco, egypt, nigeria, kenya, south africa, usa=america=united states, canada,
mexico, brazil, argentina, chile, peru, colombia, japan, china, korea, south korea, india,
pakistan, vietnam, thailand, philippines, indonesia, australia, new zealand, israel, texas,
california, florida, ohio, new york, london, manchester, birmingham, liverpool, leeds,
sheffield, bristol, newcastle, nottingham, leicester, cardiff, glasgow, edinburgh, belfast,
dublin, cork, brighton, oxford, cambridge, york, cornwall, devon, yorkshire, berlin, vienna,
madrid, barcelona, rome, milan, lisbon, amsterdam, paris, lyon, brussels, geneva, zurich,
prague, budapest, warsaw, stockholm, copenhagen, oslo, tokyo, seoul, beijing, shanghai,
sydney, melbourne, toronto, vancouver, montreal, boston, chicago, seattle, los angeles,
san francisco, miami, delft
"""

# Not listed: "Switch", "Apple", "Windows", "Pixel" alone is listed (a phone as people say it).
BRANDS = """
iphone, ipad, macbook, mac, android, samsung, pixel, huawei, xiaomi, playstation=ps4=ps5, xbox,
nintendo, netflix, hulu, disney, spotify, youtube, twitch, tiktok, instagram, facebook,
amazon, ikea, tesco, sainsbury's=sainsburys, asda, aldi, lidl, waitrose, costco, walmart,
target, starbucks, toyota, honda, ford, volkswagen=vw, tesla, bmw, audi, mercedes, nissan,
kia, hyundai, nike, adidas, zara, airbus
"""

FIRST_NAMES = """
james, john, robert, michael, david, richard, joseph, thomas, charles, christopher=chris,
daniel=dan, matthew=matt, anthony, paul, steven=steve, andrew=andy, joshua=josh, kevin, brian,
george, edward=ed, ryan, jacob, ben, benjamin, sam, samuel, alex, alexander, jack, harry,
oliver, charlie, leo, noah, liam, ethan, lucas, mason, logan, jake, tom, tim, luke, adam,
nick, mike, dave, pete, kyle, tyler, jordan, aaron, connor, callum, jamie, owen, dylan,
nathan, sean, kieran, liam, rhys, ali, omar, hamza, mohammed, tariq, raj, arjun, ravi,
mary, patricia, jennifer, linda, elizabeth=liz, barbara, susan, jessica=jess, sarah, karen,
lisa, betty, margaret, sandra, ashley, emily, emma, olivia, ava, sophia, isabella, mia,
charlotte, amelia, harper, evelyn, abigail, ella, chloe, zoe, hannah, megan, rachel, rebecca,
laura, amy, kate, katie, lucy, sophie, anna, julia, jenny, helen, claire, alice, ellie,
molly, freya, isla, aisha, priya, fatima, yasmin, nadia, sonia, leah, holly, jade, gemma,
natalie, nicole, stephanie, michelle, melissa, amanda, heather, tina, tracy, wendy, zara,
bella, maya, layla, lily, millie, evie, phoebe, imogen, niamh, siobhan, aoife, ciara,
eleanor, georgia, harriet, jasmine, kayla, madison, taylor, brooke
"""

DISLIKES = """
hate=hates=hated=hating, dislike=dislikes=disliked, loathe=loathes=loathed, detest=detests=
detested, despise=despises=despised, abhor=abhors, afraid, scared, terrified, frightened,
phobia, fear=fears, dread=dreads, disgusted, disgusts
"""

BADLY = """
badly=poorly=terribly
"""

NAMING = frozenset({"named", "called", "nicknamed"})

# Relatives written another way (`RELATIVES`), and people named by a relation it lacks: "Julie's
# ex moved to Bristol" is not Julie.
RELATIONS = """
mother=mum=mom=mommy=mummy, father=dad=daddy, husband=hubby, wife=wifey, brother=bro,
sister=sis, grandmother=grandma=granny=nan=nana=gran, grandfather=grandpa=granddad=grandad,
boyfriend=bf, girlfriend=gf, fiance=fiancé, fiancee=fiancée, ex, best friend=bestie=bff,
kid=child=kids=children, roommate=flatmate=housemate, colleague=coworker=co-worker,
neighbour=neighbor, godmother, godfather, stepbrother, stepsister, in-laws
"""

# A relative of RELATIVES that is also a French word ("son": his or her) counts only after
# one of these: "her son", "Claire's son", "an only son".
BEFORE_RELATIVE = frozenset(
    {
        "his",
        "her",
        "my",
        "their",
        "our",
        "your",
        "s",
        "the",
        "a",
        "an",
        "only",
        "eldest",
        "youngest",
        "older",
        "younger",
        "little",
        "baby",
        "step",
        "adopted",
    }
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

# People a memory may be about instead of the person: "Claire's sister lives in Lyon" is not
# "Claire lives in Lyon", "Her husband works at the bank" is not "Works at the bank". Used by the
# dedup (a relation is a carrier) and the replacement rule (whose fact).
RELATIVES = frozenset(
    """
    sister brother sis bro mother mom mum mommy mother-in-law father dad daddy father-in-law
    husband wife hubby son daughter cousin uncle aunt auntie nephew niece grandmother grandma
    granny nan grandfather grandpa grandparents parents sibling siblings stepmother stepfather
    stepson stepdaughter boyfriend girlfriend bf gf partner fiance fiancee friend bestie
    colleague coworker co-worker neighbour neighbor boss manager roommate flatmate housemate
    kid kids child baby grandson granddaughter brother-in-law sister-in-law
    """.split()
)

# --- Dates (memory.lexicon.dates): relative expressions resolved against the day they were said.

# Days by their offset from the day said. "tonight"/"this evening" are that same day: "Léa has a
# concert tonight" is false the next morning. "last night" is the evening before ("I slept badly
# last night", told at breakfast). Known false positive: "today" meaning nowadays ("Today she
# lives in Lyon") is dated too (harmless: the date it was said).
DAY_OFFSETS = {
    "today": 0,
    "tonight": 0,
    "this morning": 0,
    "this afternoon": 0,
    "this evening": 0,
    "earlier today": 0,
    "tomorrow": 1,
    "the day after tomorrow": 2,
    "yesterday": -1,
    "last night": -1,
    "the day before yesterday": -2,
}

# The day words that name today in a message asking about a time (read side). Not "today",
# "tonight", "this evening": "I'm so tired today", "I'm going out tonight" name today but ask
# nothing about what was said; known miss: "what did I say today?".
TODAY_ASKED = frozenset({"this morning", "earlier today"})

# A part of the day may follow a day word and belongs to its phrase: "tomorrow morning" is one
# date, annotated once after "morning", not between the two words.
DAY_PARTS = frozenset({"morning", "afternoon", "evening", "night"})

WEEKDAY_INDEX = {
    "monday": 0,
    "tuesday": 1,
    "wednesday": 2,
    "thursday": 3,
    "friday": 4,
    "saturday": 5,
    "sunday": 6,
}

# Before a weekday: "next Tuesday" is 1 to 7 days ahead; "this Friday" 0 to 6 (said on a Friday,
# that day); "last Monday" 1 to 7 days back. "on Tuesday" and a bare "Tuesday" count as "next".
# Known false positive: a weekday in the past tense ("we met on Monday") resolves forward; only
# "last <weekday>" goes back.
NEXT_BEFORE = frozenset({"next", "this coming"})
THIS_BEFORE = frozenset({"this"})
LAST_BEFORE = frozenset({"last"})

# A weekday after these is a habit or a kind of day, not a date: "every Monday she swims", "each
# Friday", "loves a Sunday roast", "hates the Monday blues". Plurals ("on Mondays") are not
# weekday words at all. Known miss: "the Tuesday after next" is left unresolved.
HABITUAL_BEFORE = frozenset({"every", "each", "a", "the"})

# Named days that are not "the next such weekday": "Black Friday" is in late November, "Good
# Friday" before Easter, "Cyber Monday" after Thanksgiving, "gives up chocolate on Ash
# Wednesday".
NAMED_BEFORE = frozenset({"black", "good", "cyber", "blue", "ash", "easter", "palm"})

# "in two weeks", "in 3 days"; the number may be a word (CARDINALS).
IN_BEFORE = frozenset({"in"})
# "two days ago" (read side: a window).
AGO_AFTER = frozenset({"ago"})

CARDINALS = {
    "a": 1,
    "an": 1,
    "one": 1,
    "a couple of": 2,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "eleven": 11,
    "twelve": 12,
    "fifteen": 15,
    "twenty": 20,
    "thirty": 30,
}

# Units of "in N <unit>" and "N <unit> ago". Not listed: "hours"/"minutes" ("in two hours" is
# today, and the day said already says that). Known false positive: a duration after "in" ("she
# learned Spanish in three months") reads as a date three months on.
UNITS = {
    "day": "day",
    "days": "day",
    "week": "week",
    "weeks": "week",
    "month": "month",
    "months": "month",
    "year": "year",
    "years": "year",
}

# Whole phrases worth a fixed number of days: "in a fortnight" is British for two weeks.
DURATIONS = {"a fortnight": 14}

# A named period relative to the one said in: (unit, offset). Weeks start on Monday (ISO);
# known miss: an American "next week" said on a Sunday may mean the week starting that day.
PERIODS = {
    "this week": ("week", 0),
    "next week": ("week", 1),
    "last week": ("week", -1),
    "this weekend": ("weekend", 0),
    "next weekend": ("weekend", 1),
    "last weekend": ("weekend", -1),
    "this month": ("month", 0),
    "next month": ("month", 1),
    "last month": ("month", -1),
    "this year": ("year", 0),
    "next year": ("year", 1),
    "last year": ("year", -1),
}

# Part of a period (read side): "at the start of the month" is its first ten days, the end its
# last ten (from the 21st), "earlier this week" its days so far. (unit, offset, part)
PERIOD_PARTS = {
    "at the start of the month": ("month", 0, "start"),
    "at the beginning of the month": ("month", 0, "start"),
    "early this month": ("month", 0, "start"),
    "at the start of last month": ("month", -1, "start"),
    "at the end of last month": ("month", -1, "end"),
    "at the end of the month": ("month", 0, "end"),
    "at the start of the week": ("week", 0, "start"),
    "at the beginning of the week": ("week", 0, "start"),
    "earlier this week": ("week", 0, "sofar"),
    "earlier this month": ("month", 0, "sofar"),
}

# "in March" (read side: the last March not in the future). Only after "in": "they march"
# and "I may" are not months; known false positive: "fall in march formation".
MONTH_INDEX = {
    "january": 1,
    "february": 2,
    "march": 3,
    "april": 4,
    "may": 5,
    "june": 6,
    "july": 7,
    "august": 8,
    "september": 9,
    "october": 10,
    "november": 11,
    "december": 12,
}
MONTH_BEFORE = frozenset({"in", "in early", "in late", "back in"})

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
