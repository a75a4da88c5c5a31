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

# Never a recall keyword (fr.NOT_KEYWORDS): chat's yes and no, and "I'm" typed without its
# apostrophe.
NOT_KEYWORDS = frozenset("yes yeah yep nope ok okay im ive got".split())

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

# --- The dedup's spellings (memory.write.dedup_words), in the format of fr.py's (see there):
# entries separated by commas, the forms of one by "=", the first is the spelling compared.

# Chat abbreviations: "Is really into photography" / "is rly into photography" scored 0.50.
# Known false positives: "def" is also a definition, "prob" a problem, "fav" nothing else.
ABBREVIATIONS = """
really=rly=rlly=rily, because=bc=bcs=cuz=cos=coz, probably=prob=prolly, definitely=def=defo,
favorite=fav=fave, birthday=bday=b-day, weekend=wknd=wkend, university=uni, apartment=apt,
year=yr, years=yrs, minutes=mins, hours=hrs, tonight=tonite=2nite,
something=smth=sth, someone=sb, people=ppl, though=tho, through=thru, you=u, your=ur,
are=r, please=pls=plz, thanks=thx=thnx
"""

# British and American spellings of one word: "Favourite food is lasagne" / "Favorite food is
# lasagna". Known false positive: none seen (each pair is one word).
SPELLINGS = """
favorite=favourite, color=colour, colors=colours, flavor=flavour, neighbor=neighbour,
center=centre, theater=theatre, meter=metre, liter=litre, organize=organise, organized=
organised, realize=realise, recognize=recognise, apologize=apologise, traveling=travelling,
traveled=travelled, traveler=traveller, canceled=cancelled, program=programme, gray=grey,
jewelry=jewellery, cozy=cosy, practice=practise, defense=defence, offense=offence,
catalog=catalogue, analyze=analyse, pajamas=pyjamas, tire=tyre, mustache=moustache,
favor=favour, humor=humour, behavior=behaviour, labor=labour, harbor=harbour
"""

# Words that mean the same fact: "Has two kids" / "Has 2 children" scored 0.0, "Is allergic to
# peanuts" / "Has a peanut allergy" 0.0, "Has a sister named Emma" / "Her sister is called
# Emma" 0.50, "Supports Arsenal" / "Is an Arsenal fan" 0.33, "I live in Boston" / "Lives in
# Boston" 0.33. Not "lived" (the past is another fact: "Lived in Boston" / "Lives in Boston").
# Known false positives: "support" is also help ("supports her sister"), "lives" also a plural
# ("saved two lives"), "called" also phoned ("called her mum").
SYNONYMS = """
live=lives=living=resides=reside, afraid=scared=frightened=terrified=fear=fears=phobia=
phobic, allergic=allergy=allergies, named=called, supporter=supports=support=supporters=fan=
fans, loves=adores=adore
"""

# Phrases said another way, compared after the words above: "Is from Ireland" / "Comes from
# Ireland" scored 0.50, "Likes rock music" / "Is into rock music" 0.67 ("into" is a stopword).
# Contractions are spelt out: "doesn't" and "does not", "doesnt" typed without its apostrophe.
# Known false positive: "is into" also moves ("the cat is into the box"), a missed nuance at most.
PHRASES = """
is from=comes from=come from=am from=are from=originally from, likes=is into=am into=m into,
like=are into=re into, really likes=is really into=am really into=m really into,
does not=doesn't=doesnt, do not=don't, did not=didn't=didnt, is not=isn't=isnt,
are not=aren't=arent, was not=wasn't=wasnt, were not=weren't, can not=can't=cant=cannot,
will not=won't, has not=hasn't=hasnt, have not=haven't=havent, could not=couldn't=couldnt,
would not=wouldn't, should not=shouldn't
"""

# Number words compared as their digits: "Has two kids" / "Has 2 children" (above).
NUMBER_VALUES = """
1=one, 2=two, 3=three, 4=four, 5=five, 6=six, 7=seven, 8=eight, 9=nine, 10=ten, 11=eleven,
12=twelve, 13=thirteen, 14=fourteen, 15=fifteen, 16=sixteen, 17=seventeen, 18=eighteen,
19=nineteen, 20=twenty, 30=thirty, 40=forty, 50=fifty, 60=sixty, 70=seventy, 80=eighty,
90=ninety, 100=hundred, 1000=thousand
"""

# "3x a week" is "three times a week" (with "3x", see dedup_words).
TIMES = frozenset({"times"})

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
    "day after tomorrow": 2,
    "yesterday": -1,
    "last night": -1,
    "the day before yesterday": -2,
    "day before yesterday": -2,
    # Chat spellings: "tmrw", "tmr", "2moro", "tomoz", "tomorow", "tommorow"; "yday", "yest";
    # "tonite", "2nite"; "this arvo" (Australian for this afternoon). Not "2day" ("a 2day
    # course" is two days long), nor "tmw" (also "too much work").
    "tmrw": 1,
    "tmr": 1,
    "tmrow": 1,
    "tmrrw": 1,
    "2moro": 1,
    "2morrow": 1,
    "2morow": 1,
    "2mrw": 1,
    "tomoro": 1,
    "tomorow": 1,
    "tommorow": 1,
    "tommorrow": 1,
    "tomorro": 1,
    "tomoz": 1,
    "day after tmrw": 2,
    "yday": -1,
    "yest": -1,
    "yesterdy": -1,
    "yesturday": -1,
    "tonite": 0,
    "2nite": 0,
    "2night": 0,
    "this arvo": 0,
    "this aft": 0,
}

# The day words that name today in a message asking about a time (read side). Not "today",
# "tonight", "this evening": "I'm so tired today", "I'm going out tonight" name today but ask
# nothing about what was said; known miss: "what did I say today?".
TODAY_ASKED = frozenset({"this morning", "earlier today"})
# A message with a day word naming today asks about it when its sentence is in the past tense
# and says so with one of these ("what did I tell you today?"): "I was so tired today" is past
# but asks nothing.
RECALL = frozenset(
    "say said tell told mention mentioned talk talked discuss discussed chat chatted write wrote "
    "remember".split()
)

# A part of the day may follow a day word and belongs to its phrase: "tomorrow morning" is one
# date, annotated once after "morning", not between the two words.
DAY_PARTS = frozenset({"morning", "afternoon", "evening", "night", "nite"})

WEEKDAY_INDEX = {
    "monday": 0,
    "tuesday": 1,
    "wednesday": 2,
    "thursday": 3,
    "friday": 4,
    "saturday": 5,
    "sunday": 6,
    # Chat abbreviations: "on fri", "next tues", "a quiz on thurs". Not "mon", "wed", "sat",
    # "sun" (a word each: "the sun", "sat down", "got wed").
    "tue": 1,
    "tues": 1,
    "weds": 2,
    "thu": 3,
    "thur": 3,
    "thurs": 3,
    "fri": 4,
}

# Before a weekday: "next Tuesday" is 1 to 7 days ahead; "this Friday" 0 to 6 (said on a Friday,
# that day); "last Monday" 1 to 7 days back. "on Tuesday" and a bare "Tuesday" go where the
# sentence's tense says (see below): "met her on Monday" the Monday gone, 1 to 7 days back (said
# on a Monday, a week ago: that day would be "today"); "sees her on Monday" the one to come.
NEXT_BEFORE = frozenset({"next", "this coming"})
THIS_BEFORE = frozenset({"this"})
LAST_BEFORE = frozenset({"last", "this past"})

# A weekday after these is a habit or a kind of day, not a date: "every Monday she swims", "each
# Friday", "loves a Sunday roast", "hates the Monday blues". Plurals ("on Mondays") are not
# weekday words at all. Known miss: "the Tuesday after next" is left unresolved.
HABITUAL_BEFORE = frozenset({"every", "each", "a", "the"})

# Named days that are not "the next such weekday": "Black Friday" is in late November, "Good
# Friday" before Easter, "Cyber Monday" after Thanksgiving, "gives up chocolate on Ash
# Wednesday".
NAMED_BEFORE = frozenset({"black", "good", "cyber", "blue", "ash", "easter", "palm"})

# A weekday or a day word after these is a name: "has a dog named Tuesday", "a song called
# Yesterday". A title otherwise shows by its capital inside a sentence ("loves the song
# Yesterday", "watched Edge of Tomorrow", "the Today show") or by its quotes ("'Yesterday Once
# More'"): see memory.lexicon.dates.
NAMING_BEFORE = frozenset({"named", "called", "titled", "nicknamed"})

# A weekday after these is ahead whatever the tense: "booked a table for Friday", "her flight
# got moved to Sunday", "until Thursday". After "since" it is behind: "has been ill since
# Monday". Known false positive: "drove from Lyon to Paris, to Monday's meeting" (never seen).
AHEAD_BEFORE = frozenset({"for", "to", "until", "till"})
BEHIND_BEFORE = frozenset({"since"})
# Two weekdays joined by these are a span of every week ("works Monday to Friday"), not a date.
# ("Monday-Friday" is no weekday word at all: a dash joins it to the next.)
RANGE_BETWEEN = frozenset({"to", "through", "thru", "till", "until"})

# The tense: past is a simple past ("went", "-ed"), "did", "was", "were", "had"; ahead "will",
# "'ll", "'d", "going to", "gonna", "is meeting" (is/are + -ing), and the past forms that set a
# date ahead ("booked", "planned", "promised"). The nearest mark to the weekday counts, in its
# clause first ("finished his exams yesterday and flies home on Saturday": a verb after "and"
# starts a clause; "saw Paul and Léa on Monday" does not).
PAST_WORDS = frozenset(
    """
    did didn't was wasn't were weren't had hadn't went saw met got came told said made took
    gave found left bought ate ran began spent sent lost won broke fell felt heard kept paid sat
    slept spoke stood thought wore wrote drove flew swam sang rode threw caught brought taught
    fought sold held forgot woke became chose drank grew knew led meant rang shook stole hid
    bit blew dug fed hung lit overslept
    """.split()
)
# "-ed", five letters or more, not a name (capitalised in a sentence), not these adjectives and
# nouns ("a hundred", "is naked"), not after a verb of state ("is excited about Friday", "feels
# stressed", "is scheduled for Monday").
PAST_ENDINGS = ("ed",)
NOT_PAST = frozenset(
    """
    need needs indeed proceed succeed exceed speed breed bleed hundred sacred naked wicked
    kindred beloved rugged ragged crooked wretched bed red shed sled await
    """.split()
)
STATE_BEFORE = frozenset(
    """
    is are am be been being i'm he's she's it's you're we're they're that's get gets getting
    feel feels seem seems look looks very so really too more most
    """.split()
)
FUTURE_WORDS = frozenset(
    """
    will won't gonna shall would could might plans planning wants hopes intends expects needs
    must should
    """.split()
)
FUTURE_ENDINGS = ("'ll", "'d")
NOT_FUTURE: frozenset[str] = frozenset()
# "is/are/am + -ing" is a plan ("is flying home on Saturday").
PROGRESSIVE_BEFORE = frozenset(
    {"is", "are", "am", "i'm", "he's", "she's", "it's", "you're", "we're", "they're"}
)
PLAN_WORDS = frozenset(
    """
    booked planned scheduled arranged promised agreed decided postponed rescheduled delayed
    invited registered enrolled signed
    """.split()
)
CONJUNCTIONS = frozenset({"and", "but", "then"})
# Words that open a noun after a conjunction (the tense reader: « et un oral jeudi »).
TENSE_DETERMINERS = frozenset(
    "the a an his her their my our your its some this that these those".split()
)

# "in two weeks", "in 3 days"; the number may be a word (CARDINALS).
IN_BEFORE = frozenset({"in"})
# "two days ago": a window when asked; in a memory, the day that many units before it was said
# ("adopted a cat three days ago"). Known false positive: none seen; known miss: "a few days
# ago" (no number) is left as said.
AGO_AFTER = frozenset({"ago"})

CARDINALS = {
    "a": 1,
    "an": 1,
    "one": 1,
    "a couple of": 2,
    "a couple": 2,  # "a couple days ago", as typed
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
    "this past week": ("week", -1),
    "this past weekend": ("weekend", -1),
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
    # Chat spellings: "nxt week", "this wk", "last wk", "this wknd", "this w/e" (British). Not
    # "wk" alone ("a 3 wk course") nor "we" ("next we go home"): only after next, this, last.
    "nxt week": ("week", 1),
    "next wk": ("week", 1),
    "nxt wk": ("week", 1),
    "this wk": ("week", 0),
    "last wk": ("week", -1),
    "this wknd": ("weekend", 0),
    "this wkend": ("weekend", 0),
    "this w/e": ("weekend", 0),
    "next wknd": ("weekend", 1),
    "nxt wknd": ("weekend", 1),
    "nxt weekend": ("weekend", 1),
    "next wkend": ("weekend", 1),
    "next w/e": ("weekend", 1),
    "last wknd": ("weekend", -1),
    "last wkend": ("weekend", -1),
    "last w/e": ("weekend", -1),
    "nxt month": ("month", 1),
    "next mth": ("month", 1),
    "last mth": ("month", -1),
    "nxt year": ("year", 1),
    "next yr": ("year", 1),
    "last yr": ("year", -1),
}

# Part of a period (read side): "at the start of the month" is its first ten days, the end its
# last ten (from the 21st), "earlier this week" its days so far, today included: a window
# filters what is recalled, and one a day too wide loses nothing meant (this morning's talk),
# one a day too narrow may. Known false positive (by choice): a reader who ends it yesterday, as
# the blind corpus's author does, gets today's memories too. (unit, offset, part)
PERIOD_PARTS = {
    "at the start of the month": ("month", 0, "start"),
    "at the beginning of the month": ("month", 0, "start"),
    "early this month": ("month", 0, "start"),
    "at the start of last month": ("month", -1, "start"),
    "at the end of last month": ("month", -1, "end"),
    "at the end of the month": ("month", 0, "end"),
    # Without "at": "what's on for the end of the month?" (a time to come asked about).
    "the end of the month": ("month", 0, "end"),
    "end of the month": ("month", 0, "end"),
    "at the start of the week": ("week", 0, "start"),
    "at the beginning of the week": ("week", 0, "start"),
    "earlier this week": ("week", 0, "sofar"),
    "earlier this month": ("month", 0, "sofar"),
}

# "in March" (read side: the last March not in the future). Only after "in": "they march"
# and "I may" are not months; known false positive: "fall in march formation". "the month of
# May" is not listed: "I love the month of May" names no time anything was said.
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
MONTH_BEFORE = frozenset({"in", "back in", "during"})
# Parts of a month (read side): "early January" the 1st to the 10th, "mid-November" the 11th to
# the 20th, "late November" the 21st to its end. Known false positive: "I'm running late may I
# call you back" (unpunctuated) reads as late May.
MONTH_PART_BEFORE = {
    "early": "start",
    "in early": "start",
    "at the start of": "start",
    "at the beginning of": "start",
    "mid": "mid",
    "in mid": "mid",
    "in the middle of": "mid",
    "late": "end",
    "in late": "end",
    "at the end of": "end",
    "towards the end of": "end",
}

# A message asks about the time it names (read side: a time to come) when its sentence ends
# with "?" or holds one of these: a question word anywhere ("what do i have tmrw"), a verb
# before its subject ("do I have work on saturday", "is there something i need to do this
# week"), a request ("remind me what's on monday"). Not "when" ("when I get home tomorrow I'll
# call you" tells), nor "how" alone ("how I spend tomorrow is up to me"). Known false positive:
# "what" in a statement ("that's what I'm doing tomorrow").
ASKING = frozenset(
    """
    what whats what's wat wut anything remind where where's wheres how's hows
    """.split()
) | frozenset(
    {
        "do i",
        "do you",
        "do we",
        "am i",
        "are you",
        "are we",
        "r u",
        "is there",
        "is it",
        "will it",
        "will i",
        "will you",
        "should i",
        "can you",
        "could you",
        "have i",
        "tell me",
    }
)
# A sentence with one of these supposes rather than asks: "if I quit my job tomorrow would you
# still talk to me?", "imagine we went to paris next week", "what if I skipped class tomorrow?".
SUPPOSING = frozenset({"if", "imagine", "suppose", "supposing", "pretend"})

# What a memory is about, for a replacement the reflection proposes (memory/write/supersede.py):
# what a person has one of at a time (one home, one job, one partner, one course of studies, a
# diet, a car…), so a new one replaces the old even with no word in common ("lives in Lyon" ->
# "just moved to Paris"). Compared word-stemmed ("moved", "moving"). A memory about an occasion
# (an interview, a class) does not share its topic with a standing fact: "has a job interview
# on Friday" leaves the job. Known false positives: two facts of one topic that both hold
# ("lives in Leeds" / "rents a room"), a home's detail taken for a move.
TOPIC_HOME = frozenset(
    """
    lives live living lived moved moving relocated flat apartment house home rent rents renting
    roommates flatmates based
    """.split()
)
TOPIC_WORK = frozenset(
    """
    works work working job jobs employed unemployed hired fired quit retired retiring career
    promoted promotion laid resigned internship position role office company startup teaches
    """.split()
)
# A job said by its name ("is a nurse" -> "got a job as a paralegal"): the commonest ones.
# Known false positive: a trade named as a hobby ("is a keen cook").
PROFESSIONS = frozenset(
    """
    nurse teacher cook chef engineer developer programmer accountant lawyer attorney doctor
    cashier waiter waitress barista driver electrician plumber carpenter mechanic paralegal
    pharmacist dentist vet secretary receptionist cleaner firefighter police officer soldier
    farmer baker butcher hairdresser designer architect journalist librarian manager principal
    professor lecturer consultant salesman saleswoman clerk caregiver carer paramedic midwife
    """.split()
)
TOPIC_PARTNER = frozenset(
    """
    girlfriend boyfriend gf bf partner husband wife fiance fiancee married divorced engaged
    single dating broke separated relationship
    """.split()
)
TOPIC_STUDIES = frozenset(
    """
    studies studying student degree university uni college major sophomore junior freshman
    senior graduated graduate mba phd masters bachelor's highschool
    """.split()
) | {
    # A stage of studies said in two words ("is in high school" -> "started college"). Not
    # "school" alone: "works at a school", "drives her kids to school" are no studies of hers.
    # Known false positive: "in the first year of her marriage" reads as a year of studies.
    "high school",
    "middle school",
    "secondary school",
    "grad school",
    "law school",
    "med school",
    "nursing school",
    "sixth form",
    "first year",
    "second year",
    "third year",
    "final year",
    "senior year",
}
# One diet at a time: "is vegetarian" -> "eats meat again".
TOPIC_DIET = frozenset(
    """
    vegetarian vegan pescatarian meat keto diet gluten halal kosher carbs eats drinking
    alcohol sober
    """.split()
)
TOPIC_CAR = frozenset("car drives driving motorbike scooter license licence".split())
TOPIC_PHONE = frozenset(
    "phone smartphone number cellphone mobile iphone android samsung pixel".split()
)
# Pregnant, then a mother: "is pregnant" -> "had a baby girl".
TOPIC_PREGNANCY = frozenset("pregnant expecting pregnancy birth newborn".split())
TOPIC_RELIGION = frozenset("catholic muslim jewish christian atheist believes religion god".split())
TOPIC_HAIR = frozenset("hair blonde blond brunette redhead haircut".split())
TOPIC_BODY = frozenset("weighs weight height tall kg pounds lbs".split())
TOPIC_BIRTH = frozenset("born birthday birthplace".split())

# Words that never say on their own what a memory is about: the verbs of taste ("likes jazz"
# and "likes rock" are two tastes), naming ("has a cat named Misha" and "has a dog named Rex"
# are two pets), everyday verbs ("plays the cello", "plays football"; "is learning Spanish",
# "is learning to swim"), the words of change itself, and the things people have several of
# at once: pets, allergies, trips, classes, appointments ("allergic to peanuts" / "allergic to
# latex" are two allergies).
NOT_A_SUBJECT = frozenset(
    """
    likes like loves love enjoys enjoy prefers prefer hates hate dislikes adores adore
    named called name
    appointment appointments appt meeting pet pets animal friend friends child children kid kids
    now new just recently longer anymore actually since started starting became becoming got
    plays play playing played stopped stop learning learns learn goes going years old
    cat cats dog dogs kitten puppy rabbit fish bird hamster
    allergic allergy allergies intolerant
    trip trips holiday vacation train flight flights ticket
    class classes lesson lessons test exam interview review session
    takes taking sees seeing needs collects watches writing speaks
    """.split()
)

# A memory about an occasion, something that happens once at a time: two of them are two
# occasions ("has a piano lesson on Wednesday" / "has a swimming lesson on Saturday") unless
# the second says the first moved (REPLANNED). "celebrates" too: "celebrates 10 years of
# marriage" is not a marriage.
OCCASIONS = frozenset(
    """
    appointment appt interview meeting class lesson test exam flight train trip dinner lunch
    party concert session surgery review celebrates celebrating
    """.split()
)
# An occasion moved or called off: "the eye exam got pushed to Monday".
REPLANNED = frozenset(
    """
    moved pushed postponed rescheduled cancelled canceled called delayed brought changed now
    instead
    """.split()
)
# A taste or a habit turned: "can't listen to country anymore", "quit smoking".
TURNED = frozenset(
    """
    anymore quit quitting stopped gave dropped switched again now started became around sold
    healed recovered left
    """.split()
) | {"no longer", "not anymore", "no more"}
# "left" as « a quitté »: "works at Amazon" -> "left Amazon and joined Microsoft". Known false
# positive: a trip out of the place ("lives in Leeds" -> "left Leeds for the weekend").
# Words that say the old memory was wrong: "was actually born in Michigan".
CORRECTED = frozenset(
    {"actually", "in fact", "really", "misspoke", "mistaken", "wrong", "correction"}
)
# Words that may open a memory before what it is about: whose fact it is and the thing it names
# are read after them ("Correction: her cat is called Lola" is about her cat, as "her cat is
# called Luna" is). Not "really" ("really likes her cat" opens with no aside).
OPENING_ASIDES = frozenset(
    {"actually", "in fact", "correction", "update", "to be precise", "oops", "sorry"}
)
# Words that add one more beside the old: "also likes tennis", "got a second dog".
ADDED = frozenset({"also", "as well", "another", "a second", "one more", "in addition"})
# A wish, an attempt or a search is not the new state: "is looking for a bigger house in
# Bristol" leaves "lives in Bristol" true, as "would like to move to Berlin", "dreams of
# becoming a nurse", "is trying to quit smoking", "might move to Leeds" leave theirs. Known
# miss: "wants to quit her job" is a step towards a change. Known false positive: a plan word
# in a fact that happened ("quit the job she was trying to keep") refuses the replacement.
PLANS = frozenset(
    """
    looking wants hoping hopes considering thinking planning plans searching trying tries
    dreams dreaming wishes wishing aims aiming intends intending aspires might
    """.split()
) | {"would like", "d like", "would love", "d love", "saving up", "saving for"}
# Words between a possessive and the relative or thing it names: "her best friend", "his
# little sister", "her favourite film" (the film, not a favourite, is what it is about).
RELATIVE_QUALIFIERS = frozenset(
    "best little big older younger elder new ex future late step favourite favorite old".split()
)
POSSESSIVES = frozenset("his her their my our the".split())
# Two names of one relative: "her mom is a teacher" and "her mother retired".
RELATIVE_ALIASES = {
    "mom": "mother",
    "mum": "mother",
    "mommy": "mother",
    "dad": "father",
    "daddy": "father",
    "sis": "sister",
    "bro": "brother",
    "hubby": "husband",
    "gf": "girlfriend",
    "bf": "boyfriend",
    "grandma": "grandmother",
    "granny": "grandmother",
    "nan": "grandmother",
    "grandpa": "grandfather",
}
