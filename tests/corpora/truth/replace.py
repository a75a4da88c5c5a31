"""Pairs of one person's current memories, as the write path stores them, for the replacement
rule (memory.write.supersede.may_replace): `update` when the second replaces the first (a move,
a new job, a changed diet, a correction, an appointment moved), `lookalike` when both stay true
(two pets, two appointments, two allergies, a relative's fact beside the person's own).

Written from how people write in chat and how a reflection notes it (short statements, typos,
missing accents, abbreviations, first and third person, relative dates followed by their ISO
date), before any rule was read off it, then split by a seeded shuffle, per language and label,
into DEV (the rules were tuned on its misses) and TEST (kept apart: measured, never tuned on).
The tag names the class of each pair.
"""

from __future__ import annotations

import random
from typing import NamedTuple


class Pair(NamedTuple):
    old: str
    new: str
    label: str  # "update" or "lookalike"
    language: str  # "fr" or "en"
    tag: str


UPDATE, LOOKALIKE = "update", "lookalike"

FR_UPDATES = [
    ("move", "Habite à Bordeaux", "Vit maintenant à Toulouse depuis octobre"),
    ("move", "Vit en colocation à Grenoble", "a demenagé a Annecy avec sa copine"),
    ("move", "Habite chez ses parents à Metz", "A pris un appart à Nancy"),
    ("move", "Elle habite à Marseille", "Elle s'est installée à Montpellier le mois dernier"),
    ("move", "Loge dans un studio à Rouen", "Habite désormais dans une maison à Caen"),
    ("move", "J'habite à Brest", "Je vis à Quimper maintenant"),
    ("move", "Habite à Montréal", "Est rentrée en France, à Dijon"),
    ("move", "habite a st etienne", "vit a clermont ferrand mtn"),
    ("move", "Loue un appartement à Lille", "A acheté une maison à Roubaix et y vit"),
    ("job", "Est serveuse dans un bar à Lille", "Travaille maintenant comme aide-soignante"),
    ("job", "Bosse chez Renault comme ingénieur", "A quitté Renault pour une start-up"),
    ("job", "Est prof de maths au collège", "Est devenue directrice de l'école"),
    ("job", "Cherche du travail", "A décroché un CDI dans une banque"),
    ("job", "Est développeur dans une agence web", "Est au chômage depuis son licenciement"),
    ("job", "Est boulangère", "A pris sa retraite"),
    ("job", "Fait de l'intérim dans la logistique", "Est devenu chauffeur de bus"),
    ("job", "TRAVAILLE CHEZ DECATHLON", "travaille chez Intersport depuis lundi (2026-12-07)"),
    ("job", "Est vendeur chez Fnac", "Se reconvertit : il suit une formation de plombier"),
    ("job", "Travaille de nuit à l'usine", "Est passé en équipe de jour à l'usine"),
    ("partner", "Est en couple avec Julien", "S'est séparée de Julien"),
    ("partner", "Sort avec une fille qui s'appelle Emma", "Est célibataire depuis cet été"),
    ("partner", "Est fiancé à Sarah", "S'est marié avec Sarah en juin"),
    ("partner", "Son copain s'appelle Hugo", "Son nouveau copain s'appelle Mehdi"),
    ("partner", "Est marié", "Est divorcé depuis deux ans"),
    ("partner", "Est célibataire", "Vit avec sa compagne, Nadia"),
    ("diet", "Est végétarienne", "Remange de la viande depuis peu"),
    ("diet", "Mange de tout", "Est devenu vegan"),
    ("diet", "Ne mange pas de gluten", "Peut de nouveau manger du gluten"),
    ("diet", "Est au régime sans sucre", "A arrêté son régime"),
    ("diet", "Ne boit jamais d'alcool", "Boit un verre de vin de temps en temps maintenant"),
    ("studies", "Est en licence de psycho à Nanterre", "Est passée en master de psychologie"),
    ("studies", "Prépare le bac", "A eu son bac et entre en fac de droit"),
    ("studies", "Étudie l'informatique à l'IUT", "A abandonné l'IUT pour une école de commerce"),
    ("studies", "Est en première année de médecine", "Est en deuxième année de médecine"),
    ("studies", "Est en terminale", "A eu son bac avec mention"),
    ("age", "A 16 ans", "Vient d'avoir 17 ans"),
    ("age", "Sa fille a 3 ans", "Sa fille a eu 4 ans samedi (2026-12-05)"),
    ("age", "A 40 ans", "A fêté ses 41 ans hier (2026-12-06)"),
    ("correction", "Son chien s'appelle Filou", "En fait son chien s'appelle Pilou"),
    ("correction", "A deux enfants", "A trois enfants, pas deux"),
    ("correction", "Est née à Lyon", "Est née à Villeurbanne, pas à Lyon"),
    ("correction", "Son anniversaire est le 12 mars", "Son anniversaire est le 21 mars"),
    ("correction", "Conduit une Clio rouge", "Sa Clio est bleue, pas rouge"),
    ("correction", "Mesure 1m80", "Mesure en réalité 1m75"),
    (
        "correction",
        "Sa tortue s'appelle Franklin",
        "Sa tortue s'appelle Caroline, c'est une femelle",
    ),
    (
        "appointment-moved",
        "A rdv chez l'ophtalmo jeudi (2026-12-10)",
        "Son rdv chez l'ophtalmo est décalé à lundi (2026-12-14)",
    ),
    (
        "appointment-moved",
        "Passe son permis le 15 janvier",
        "Son examen du permis est repoussé au 2 février",
    ),
    (
        "appointment-moved",
        "A un entretien d'embauche vendredi à 10h (2026-12-11)",
        "L'entretien de vendredi est avancé à 9h",
    ),
    ("appointment-moved", "Part en vacances en Grèce le 3 août", "Le voyage en Grèce est annulé"),
    (
        "appointment-moved",
        "Dîne chez sa mère dimanche (2026-12-13)",
        "Le dîner chez sa mère est reporté à samedi prochain (2026-12-19)",
    ),
    ("taste-change", "Adore le rap", "N'écoute plus de rap, il s'en est lassé"),
    ("taste-change", "Déteste les épinards", "S'est mis à aimer les épinards"),
    (
        "taste-change",
        "Son plat préféré c'est les lasagnes",
        "Son plat préféré est maintenant le couscous",
    ),
    ("stopped", "Joue à Fortnite tous les soirs", "A arrêté Fortnite"),
    ("stopped", "Fume un paquet par jour", "A arrêté de fumer il y a 3 semaines"),
    ("habit", "Boit beaucoup de café", "A réduit le café à une tasse par jour"),
    ("car", "Roule en Peugeot 206", "A vendu sa 206 et a acheté une Tesla"),
    ("car", "N'a pas de voiture", "Vient d'acheter une voiture d'occasion"),
    ("phone", "A un iPhone 12", "A changé de téléphone pour un Samsung"),
    ("religion", "Est catholique pratiquante", "Ne croit plus en Dieu"),
    ("hair", "A les cheveux longs", "S'est fait couper les cheveux courts"),
    ("hair", "Est blonde", "S'est teint les cheveux en rouge"),
    ("relative-update", "Son frère vit à Nice", "Son frère a déménagé à Lyon"),
    ("relative-update", "Sa mère est infirmière", "Sa mère est à la retraite"),
    ("relative-update", "Sa sœur est enceinte", "Sa sœur a accouché d'un petit garçon"),
    ("health", "S'est cassé la jambe", "N'a plus de plâtre, sa jambe est guérie"),
    ("search-done", "Cherche un appart à Paris", "A trouvé un appart dans le 11e"),
]

FR_LOOKALIKES = [
    ("two-pets", "A un chat roux nommé Caramel", "A adopté un lapin, Noisette"),
    ("two-pets", "A un chien, un labrador", "A aussi deux poissons rouges"),
    ("two-pets", "Son chat s'appelle Moustache", "Son chien s'appelle Rocky"),
    ("two-pets", "A une chatte qui s'appelle Luna", "A recueilli un chaton trouvé dans la rue"),
    ("two-pets", "A un chien qui s'appelle Oscar", "A un chien qui s'appelle Pixel"),
    (
        "two-appointments",
        "A rdv chez le médecin mardi (2026-12-08)",
        "A rdv chez l'ostéo jeudi (2026-12-10)",
    ),
    (
        "two-appointments",
        "A un entretien chez Orange lundi (2026-12-07)",
        "A un entretien chez SFR mercredi (2026-12-09)",
    ),
    (
        "two-appointments",
        "Doit aller à la banque demain (2026-12-08)",
        "Doit aller à la poste vendredi (2026-12-11)",
    ),
    (
        "two-appointments",
        "a un rdv chez le coiffeur samedi (2026-12-12)",
        "a rdv avec sa banquière samedi (2026-12-12)",
    ),
    ("two-appointments", "Voit le dentiste le 14", "Voit le kiné le 20"),
    (
        "two-meetings",
        "A une réunion avec son chef lundi matin (2026-12-07)",
        "A une réunion d'équipe jeudi (2026-12-10)",
    ),
    ("two-allergies", "Est allergique aux arachides", "Est allergique aux poils de chat"),
    ("two-allergies", "Allergique à la pénicilline", "Fait une allergie au pollen au printemps"),
    ("two-allergies", "Ne supporte pas le lactose", "Est allergique aux fruits de mer"),
    ("two-allergies", "Est allergique au pollen", "Est allergique aux acariens"),
    ("two-trips", "Part à Barcelone en mai", "Part à Rome en septembre"),
    (
        "two-trips",
        "Prend le train pour Lyon vendredi (2026-12-11)",
        "Prend le train pour Lille le 20 décembre",
    ),
    ("two-trips", "Est allée au Japon l'an dernier", "Va en Islande cet été"),
    ("two-trips", "A un vol pour Montréal le 2 janvier", "A réservé un vol pour Nice en février"),
    (
        "two-lessons",
        "A cours de piano mercredi (2026-12-09)",
        "A cours de natation samedi (2026-12-12)",
    ),
    ("two-lessons", "Prend des cours de guitare", "Prend des cours d'espagnol le soir"),
    (
        "two-lessons",
        "A un cours de yoga lundi (2026-12-07)",
        "A un cours de yoga jeudi (2026-12-10)",
    ),
    (
        "two-exams",
        "A un contrôle de maths demain (2026-12-08)",
        "A un contrôle d'histoire vendredi (2026-12-11)",
    ),
    ("relative-vs-self", "Habite à Rennes", "Sa sœur habite à Brest"),
    ("relative-vs-self", "Son père habite à Pau", "Habite à Bayonne"),
    ("relative-vs-self", "Travaille comme comptable", "Sa femme travaille comme avocate"),
    ("relative-vs-self", "Est prof d'anglais", "Son mari est prof de sport"),
    ("relative-vs-self", "Est végétarien", "Sa copine est végétarienne"),
    ("relative-vs-self", "A 25 ans", "Son frère a 30 ans"),
    ("relative-vs-self", "Étudie le droit à Assas", "Son fils étudie la médecine à Lille"),
    ("relative-vs-self", "Vit à Toulon", "Ses parents vivent à Toulon depuis toujours"),
    ("relative-vs-self", "Le frère de Marie travaille chez Airbus", "Marie travaille chez Thales"),
    ("relative-vs-self", "Est célibataire", "Sa meilleure amie vient de se marier"),
    ("relative-vs-self", "a un job de caissière", "sa coloc a trouvé un job de caissière aussi"),
    ("two-relatives", "Son frère habite à Nice", "Sa sœur habite à Lyon"),
    ("two-relatives", "Sa mère est infirmière", "Son père est médecin"),
    ("two-relatives", "Sa fille a 8 ans", "Son fils a 5 ans"),
    ("two-siblings", "A un frère, Thomas", "A une sœur, Camille"),
    ("two-relatives", "Son cousin vit au Canada", "Sa tante vit en Belgique"),
    ("two-friends", "Son meilleur ami s'appelle Yanis", "Sa collègue Sophie est devenue une amie"),
    ("two-friends", "A une amie d'enfance, Chloé", "S'est fait un nouvel ami au club, Karim"),
    ("two-tastes", "Aime le foot", "Aime aussi le basket"),
    ("two-tastes", "Adore les films de Miyazaki", "Adore les séries coréennes"),
    ("two-tastes", "Son plat préféré est le couscous", "Son dessert préféré est le tiramisu"),
    ("two-tastes", "Sa couleur préférée est le vert", "Son film préféré est Amélie"),
    ("two-hobbies", "Fait de l'escalade le week-end", "Fait du vélo pour aller au travail"),
    ("two-hobbies", "Joue du piano depuis 10 ans", "Joue de la batterie dans un groupe"),
    ("two-hobbies", "Collectionne les vinyles", "Collectionne les timbres"),
    ("car-event", "A une voiture électrique", "Sa voiture est au garage pour la vidange"),
    ("home-vs-work", "Habite à Lyon", "Travaille à Villeurbanne"),
    ("work-vs-health", "Travaille dans un hôpital", "A été hospitalisée la semaine dernière"),
    ("job-detail", "Est infirmière", "Fait des gardes de nuit ce mois-ci"),
    ("home-plan", "Habite à Nantes", "Cherche une maison plus grande à Nantes"),
    (
        "work-event",
        "Travaille chez Orange",
        "A un entretien annuel avec son manager vendredi (2026-12-11)",
    ),
    (
        "studies-event",
        "Est en master de chimie",
        "A un partiel de chimie organique lundi (2026-12-07)",
    ),
    ("partner-event", "Est mariée à Paul", "Fête ses 10 ans de mariage en juin"),
    ("age-vs-event", "A 30 ans", "Court un 10 km dimanche (2026-12-13)"),
    ("past-and-present", "A perdu son chat en mars", "A un nouveau chat, Simba"),
    ("two-projects", "Écrit un roman de science-fiction", "Écrit une pièce de théâtre"),
    ("two-projects", "Rénove sa salle de bain", "Refait la cuisine le mois prochain"),
    ("two-languages", "Parle anglais couramment", "Apprend le japonais"),
    ("two-shows", "Regarde One Piece", "Regarde aussi Naruto"),
    ("two-jobs", "Travaille dans une boulangerie le matin", "Donne des cours particuliers le soir"),
]

EN_UPDATES = [
    ("move", "Lives in Manchester", "Moved to Glasgow last month"),
    ("move", "Shares a flat with two friends in Bristol", "Got her own place in Bath"),
    ("move", "lives w/ parents in ohio", "moved out to chicago"),
    ("move", "She lives in Austin", "She relocated to Denver"),
    ("move", "I live in Dublin", "I'm living in Cork now"),
    ("move", "Lives on a houseboat in Amsterdam", "Now rents a room in Utrecht"),
    ("move", "Based in Berlin", "Is back in London for good"),
    ("move", "LIVES IN SEATTLE", "moved to portland in nov"),
    ("move", "Rents a one-bedroom in Queens", "Bought a house in New Jersey"),
    ("job", "Works as a cashier at Tesco", "Got a job as a paralegal"),
    ("job", "Is a software engineer at Google", "Left Google to start her own company"),
    ("job", "Teaches high school chemistry", "Became the vice principal"),
    ("job", "Is between jobs", "Landed a full-time role at a hospital"),
    ("job", "Is a line cook", "Got promoted to sous chef"),
    ("job", "Drives for Uber", "Is now a delivery driver for Amazon"),
    ("job", "Is a nurse", "Retired from nursing last year"),
    ("job", "Works at Starbucks", "works at a local bakery since Monday (2026-12-07)"),
    ("job", "Works remotely for a startup", "Has to go back to the office full time"),
    ("job", "Is an accountant", "Is retraining to become an electrician"),
    ("partner", "Has a girlfriend named Mia", "Broke up with Mia"),
    ("partner", "Is single", "Started seeing someone from her climbing gym"),
    ("partner", "Is engaged to Daniel", "Married Daniel in October"),
    ("partner", "Her boyfriend is called Leo", "Her new boyfriend is called Sami"),
    ("partner", "Is married to Rachel", "Is separated from Rachel"),
    ("partner", "Is in a long-distance relationship", "Her gf moved in with her"),
    ("diet", "Is vegetarian", "Eats meat again"),
    ("diet", "Eats everything", "Went vegan in January"),
    ("diet", "Is on keto", "Quit keto and eats carbs again"),
    ("diet", "Doesn't drink alcohol", "Started drinking wine with dinner"),
    ("diet", "Is pescatarian", "Stopped eating fish too, fully vegetarian now"),
    ("studies", "Is a sophomore at NYU", "Is a junior at NYU now"),
    ("studies", "Studies computer science at Leeds", "Dropped out of uni to work full time"),
    ("studies", "Is in nursing school", "Graduated from nursing school"),
    ("studies", "Is doing an MBA", "Switched from the MBA to a law degree"),
    ("studies", "Is learning to drive", "Passed her driving test"),
    ("age", "Is 15", "Just turned 16"),
    ("age", "Her son is 2", "Her son turned 3 on Sunday (2026-12-06)"),
    ("age", "Is 29 years old", "Celebrated his 30th birthday yesterday (2026-12-06)"),
    ("correction", "Her dog is called Bailey", "Her dog's name is Bella, she misspoke earlier"),
    ("correction", "Has one sister", "Has two sisters, not one"),
    ("correction", "Was born in Ohio", "Was actually born in Michigan"),
    ("correction", "Birthday is on May 4", "Birthday is May 14, not May 4"),
    ("correction", "Drives a black Honda Civic", "The Civic is silver, not black"),
    ("correction", "Weighs 80 kg", "Lost weight, now weighs 72 kg"),
    (
        "appointment-moved",
        "Has an eye exam on Thursday (2026-12-10)",
        "The eye exam got pushed to Monday (2026-12-14)",
    ),
    ("appointment-moved", "Driving test is on January 15", "Driving test moved to February 2"),
    (
        "appointment-moved",
        "Job interview on Friday at 10am (2026-12-11)",
        "The Friday interview is now at 2pm",
    ),
    ("appointment-moved", "Flying to Lisbon on March 3", "Cancelled the Lisbon trip"),
    (
        "appointment-moved",
        "Having dinner at her mom's on Sunday (2026-12-13)",
        "Dinner at mom's moved to next Saturday (2026-12-19)",
    ),
    ("taste-change", "Loves country music", "Can't listen to country anymore"),
    ("taste-change", "Hates mushrooms", "Has come around to mushrooms"),
    ("taste-change", "Favourite show is The Office", "Favorite show is now Severance"),
    ("taste-change", "Supports Arsenal", "Switched to supporting Spurs, to his dad's horror"),
    ("stopped", "Plays Valorant every night", "Quit Valorant"),
    ("stopped", "Smokes", "Quit smoking three weeks ago"),
    ("stopped", "Is training for a marathon", "Gave up on the marathon after a knee injury"),
    ("habit", "Drinks five coffees a day", "Cut down to one coffee a day"),
    ("car", "Drives a Ford Fiesta", "Sold the Fiesta and bought a Tesla"),
    ("car", "Doesn't own a car", "Bought a used car"),
    ("phone", "Has an iPhone 12", "Switched to a Pixel"),
    ("phone", "Uses Windows", "Switched to a Mac"),
    ("religion", "Is a practising Catholic", "No longer believes in God"),
    ("hair", "Has long hair", "Cut her hair short"),
    ("hair", "Is a brunette", "Dyed her hair pink"),
    ("name", "Goes by Alex", "Wants to be called Sam from now on"),
    ("relative-update", "His brother lives in Perth", "His brother moved to Sydney"),
    ("relative-update", "Her mom works as a teacher", "Her mom retired"),
    ("relative-update", "His sister is pregnant", "His sister had a baby girl"),
    ("health", "Broke his arm", "His arm has healed and the cast is off"),
    ("health", "Wears glasses", "Had laser eye surgery, no more glasses"),
    ("search-done", "Is looking for an apartment in Boston", "Found an apartment in Somerville"),
]

EN_LOOKALIKES = [
    ("two-pets", "Has a ginger cat called Biscuit", "Adopted a rabbit named Clover"),
    ("two-pets", "Has a golden retriever", "Also keeps two goldfish"),
    ("two-pets", "Her cat is named Pepper", "Her hamster is named Nugget"),
    ("two-pets", "Has a cat called Luna", "Took in a stray kitten"),
    ("two-pets", "Has a dog named Oscar", "Got a second dog, a pug called Pixel"),
    (
        "two-appointments",
        "Has a doctor's appointment on Tuesday (2026-12-08)",
        "Has a physio appointment on Thursday (2026-12-10)",
    ),
    (
        "two-appointments",
        "Has an interview with Amazon on Monday (2026-12-07)",
        "Has an interview with Spotify on Wednesday (2026-12-09)",
    ),
    (
        "two-appointments",
        "Needs to go to the bank tomorrow (2026-12-08)",
        "Needs to pick up a parcel at the post office on Friday (2026-12-11)",
    ),
    ("two-appointments", "Sees the dentist on the 14th", "Sees her therapist on the 20th"),
    (
        "two-appointments",
        "has a haircut appt saturday (2026-12-12)",
        "has a meeting w/ her bank advisor saturday (2026-12-12)",
    ),
    (
        "two-meetings",
        "Has a meeting with her boss on Monday morning (2026-12-07)",
        "Has a team meeting on Thursday (2026-12-10)",
    ),
    ("two-allergies", "Is allergic to peanuts", "Is allergic to cats"),
    ("two-allergies", "Allergic to penicillin", "Gets hay fever every spring"),
    ("two-allergies", "Is lactose intolerant", "Is allergic to shellfish"),
    ("two-allergies", "Is allergic to bee stings", "Is allergic to latex"),
    ("two-trips", "Going to Prague in April", "Going to Seville in October"),
    (
        "two-trips",
        "Taking the train to York on Friday (2026-12-11)",
        "Taking the train to Edinburgh on December 20",
    ),
    ("two-trips", "Went to Peru last year", "Is going to Norway this summer"),
    ("two-trips", "Has a flight to Toronto on January 2", "Booked a flight to Miami for February"),
    (
        "two-lessons",
        "Has a piano lesson on Wednesday (2026-12-09)",
        "Has a swimming lesson on Saturday (2026-12-12)",
    ),
    ("two-lessons", "Takes pottery classes", "Takes Italian lessons online"),
    (
        "two-lessons",
        "Has a spin class on Monday (2026-12-07)",
        "Has a spin class on Thursday (2026-12-10)",
    ),
    (
        "two-exams",
        "Has a biology test tomorrow (2026-12-08)",
        "Has a geography exam on Friday (2026-12-11)",
    ),
    ("relative-vs-self", "Lives in Cardiff", "Her sister lives in Swansea"),
    ("relative-vs-self", "His dad lives in Phoenix", "Lives in Tucson"),
    ("relative-vs-self", "Works as an accountant", "His wife works as a lawyer"),
    ("relative-vs-self", "Is a PE teacher", "Her husband is a math teacher"),
    ("relative-vs-self", "Is vegetarian", "His girlfriend is vegan"),
    ("relative-vs-self", "Is 25", "Her brother is 30"),
    ("relative-vs-self", "Studies law at UCL", "Her son studies medicine in Leeds"),
    ("relative-vs-self", "Lives in Brighton", "Her parents have lived in Brighton forever"),
    ("relative-vs-self", "Emma's brother works at Boeing", "Emma works at Airbus"),
    ("relative-vs-self", "Is single", "Her best friend just got married"),
    ("relative-vs-self", "Works at a call centre", "His roommate works at the same call centre"),
    ("two-relatives", "Her brother lives in Leeds", "Her sister lives in Hull"),
    ("two-relatives", "His mom is a nurse", "His dad is a firefighter"),
    ("two-relatives", "Her daughter is 8", "Her son is 5"),
    ("two-siblings", "Has a brother, Tom", "Has a sister, Kate"),
    ("two-relatives", "Her grandma lives in Cork", "Her uncle lives in Galway"),
    ("two-friends", "Best friend is called Jay", "Became friends with a coworker, Sophie"),
    ("two-friends", "Has a childhood friend, Chloe", "Made a new friend at the climbing gym, Omar"),
    ("two-tastes", "Likes hockey", "Also likes tennis"),
    ("two-tastes", "Loves Pixar films", "Loves true crime podcasts"),
    ("two-tastes", "Favourite food is ramen", "Favourite dessert is cheesecake"),
    ("two-tastes", "Favorite color is teal", "Favorite band is Radiohead"),
    ("two-hobbies", "Goes bouldering on weekends", "Cycles to work"),
    ("two-hobbies", "Has played the violin for ten years", "Plays bass in a punk band"),
    ("two-hobbies", "Collects Pokémon cards", "Collects old coins"),
    ("car-event", "Drives an electric car", "Her car is at the garage for a service"),
    ("home-vs-work", "Lives in Leeds", "Works in Bradford"),
    ("work-vs-health", "Works in a hospital", "Was in hospital last week"),
    ("job-detail", "Is a paramedic", "Is doing night shifts this month"),
    ("home-plan", "Lives in Bristol", "Is looking for a bigger house in Bristol"),
    (
        "work-event",
        "Works at a bank",
        "Has a performance review with her manager on Friday (2026-12-11)",
    ),
    ("studies-event", "Is doing a physics degree", "Has a quantum mechanics exam on Monday"),
    ("partner-event", "Is married to Priya", "Celebrates 10 years of marriage in June"),
    ("age-vs-event", "Is 30", "Is running a 10k on Sunday (2026-12-13)"),
    ("past-and-present", "Lost her cat in March", "Has a new cat, Simba"),
    ("two-projects", "Is writing a fantasy novel", "Is writing a song for her sister's wedding"),
    ("two-projects", "Is renovating the bathroom", "Will redo the kitchen next month"),
    ("two-languages", "Speaks fluent German", "Is learning Korean"),
    ("two-games", "Plays Elden Ring", "Plays Minecraft with her son"),
    ("two-jobs", "Works at a bakery in the mornings", "Also tutors kids in the evenings"),
    ("home-and-holiday-home", "Lives in Lyon", "Has a holiday cottage in Cornwall"),
]


def _pairs(language: str, label: str, rows: list[tuple[str, str, str]]) -> list[Pair]:
    return [Pair(old, new, label, language, tag) for tag, old, new in rows]


PAIRS = [
    *_pairs("fr", UPDATE, FR_UPDATES),
    *_pairs("fr", LOOKALIKE, FR_LOOKALIKES),
    *_pairs("en", UPDATE, EN_UPDATES),
    *_pairs("en", LOOKALIKE, EN_LOOKALIKES),
]

SEED = 37


def _split(pairs: list[Pair]) -> tuple[list[Pair], list[Pair]]:
    """Halve each (language, label) group by a seeded shuffle: the dev half, the test half."""
    dev: list[Pair] = []
    test: list[Pair] = []
    for language in ("fr", "en"):
        for label in (UPDATE, LOOKALIKE):
            group = [p for p in pairs if p.language == language and p.label == label]
            random.Random(f"{SEED}:{language}:{label}").shuffle(group)
            dev += group[: len(group) // 2]
            test += group[len(group) // 2 :]
    return dev, test


DEV, TEST = _split(PAIRS)
