"""The recall bench's corpora, in English and French.

18 reference memories about one person, 6 messages, and for each message the memories it calls
for — 10 in all, labelled by the fact (the memory the message is about), never by the topic: a
topic label ("pets") declared every animal memory relevant and made the model look blind. The
references are drowned in distractors of the same shapes (same templates, other facts) generated
from a seed, so each of the 5 distractor sets is different and reproducible.
"""

from __future__ import annotations

import itertools
import random
from dataclasses import dataclass


@dataclass(frozen=True)
class Corpus:
    language: str
    references: list[str]
    queries: list[tuple[str, set[int]]]  # message, indexes of the relevant references
    templates: list[tuple[str, dict[str, list[str]]]]
    scene: str
    query_prefix: str
    document_prefix: str


EN = Corpus(
    language="en",
    references=[
        "Has a ginger cat called Felix",  # 0
        "Works night shifts as a nurse at St Mary's hospital",  # 1
        "Her sister Claire is getting married in June",  # 2
        "Is afraid of flying since a rough flight to Lisbon",  # 3
        "Plays the cello in an amateur orchestra on Thursdays",  # 4
        "Does not drink coffee, only green tea",  # 5
        "Grew up in a small village by the sea in Brittany",  # 6
        "Is training for a half marathon in April",  # 7
        "Her grandmother taught her to knit",  # 8
        "Wants to learn Japanese to read manga",  # 9
        "Lost her wedding ring on the beach last summer",  # 10
        "Is allergic to peanuts",  # 11
        "Drives an old blue Volvo",  # 12
        "Promised to send the photos of the trip to Rome",  # 13
        "Her son Leo is starting primary school",  # 14
        "Loves rainy Sunday afternoons with a book",  # 15
        "Is writing a fantasy novel about a lighthouse keeper",  # 16
        "Moved to Leeds two years ago for work",  # 17
    ],
    queries=[
        ("How is Felix doing? Still knocking everything off the table?", {0}),
        ("Three nights in a row on the ward, I'm exhausted and I miss the sea", {1, 6}),
        ("Should I take the train rather than the plane to get to the wedding?", {2, 3}),
        ("Rehearsal got moved and I really need to practise my instrument", {4}),
        ("Any idea for a snack and a hot drink for tonight?", {5, 11}),
        ("My little boy is nervous about his first day, and I'm nervous about my race", {14, 7}),
    ],
    templates=[
        (
            "Has a {colour} {animal} called {name}",
            {
                "colour": [
                    "black",
                    "white",
                    "grey",
                    "brown",
                    "spotted",
                    "tabby",
                    "golden",
                    "silver",
                ],
                "animal": [
                    "dog",
                    "rabbit",
                    "parrot",
                    "hamster",
                    "tortoise",
                    "horse",
                    "goat",
                    "ferret",
                ],
                "name": [
                    "Rex",
                    "Luna",
                    "Max",
                    "Bella",
                    "Oscar",
                    "Milo",
                    "Daisy",
                    "Toby",
                    "Nala",
                    "Pip",
                ],
            },
        ),
        (
            "Works {shift} shifts as a {job} at the {place}",
            {
                "shift": ["morning", "weekend", "evening", "early", "split", "long"],
                "job": [
                    "cashier",
                    "baker",
                    "librarian",
                    "mechanic",
                    "teacher",
                    "waiter",
                    "driver",
                    "gardener",
                    "receptionist",
                    "pharmacist",
                ],
                "place": [
                    "supermarket",
                    "bakery",
                    "town library",
                    "garage",
                    "school",
                    "train station",
                    "museum",
                    "post office",
                    "city hall",
                    "garden centre",
                ],
            },
        ),
        (
            "Her {relative} {name} is {event} in {month}",
            {
                "relative": [
                    "cousin",
                    "brother",
                    "uncle",
                    "aunt",
                    "friend",
                    "neighbour",
                    "colleague",
                ],
                "name": ["Paul", "Sophie", "Marc", "Julia", "Tom", "Emma", "Hugo", "Lina", "Sam"],
                "event": [
                    "moving house",
                    "retiring",
                    "changing jobs",
                    "going abroad",
                    "opening a shop",
                    "having a baby",
                    "graduating",
                ],
                "month": [
                    "January",
                    "February",
                    "March",
                    "May",
                    "July",
                    "August",
                    "September",
                    "October",
                    "November",
                    "December",
                ],
            },
        ),
        (
            "Is afraid of {fear} since {origin}",
            {
                "fear": [
                    "spiders",
                    "deep water",
                    "thunderstorms",
                    "crowds",
                    "the dark",
                    "heights",
                    "dogs",
                    "needles",
                    "lifts",
                    "wasps",
                ],
                "origin": [
                    "childhood",
                    "a bad dream",
                    "a holiday in Spain",
                    "school",
                    "a film",
                    "an accident",
                    "last winter",
                    "a camping trip",
                ],
            },
        ),
        (
            "Plays {game} with {who} on {day}",
            {
                "game": [
                    "chess",
                    "tennis",
                    "football",
                    "cards",
                    "badminton",
                    "board games",
                    "video games",
                    "darts",
                    "bowls",
                ],
                "who": [
                    "friends",
                    "colleagues",
                    "her father",
                    "the neighbours",
                    "a club",
                    "her cousins",
                    "old classmates",
                ],
                "day": [
                    "Mondays",
                    "Tuesdays",
                    "Wednesdays",
                    "Fridays",
                    "Saturdays",
                    "Sunday mornings",
                ],
            },
        ),
        (
            "{likes} {food} {when}",
            {
                "likes": ["Likes", "Loves", "Enjoys", "Dislikes", "Hates", "Often cooks"],
                "food": [
                    "spicy curry",
                    "roast chicken",
                    "sushi",
                    "pasta with pesto",
                    "lentil soup",
                    "apple pie",
                    "fresh bread",
                    "pancakes",
                    "grilled fish",
                    "cheese omelette",
                ],
                "when": [
                    "on weekends",
                    "for lunch",
                    "in winter",
                    "at parties",
                    "after work",
                    "on holidays",
                    "with friends",
                ],
            },
        ),
        (
            "Grew up in {place} near {landmark}",
            {
                "place": [
                    "a big city",
                    "a mountain town",
                    "a farm",
                    "a suburb",
                    "a river town",
                    "a market town",
                    "an industrial town",
                ],
                "landmark": [
                    "a forest",
                    "a castle",
                    "a lake",
                    "a motorway",
                    "a cathedral",
                    "a football stadium",
                    "a vineyard",
                    "an airport",
                ],
            },
        ),
        (
            "Is {doing} for {goal} in {month}",
            {
                "doing": ["saving money", "studying", "preparing", "practising", "planning"],
                "goal": [
                    "a driving test",
                    "a piano exam",
                    "a job interview",
                    "a trip to Canada",
                    "a cooking contest",
                    "a chess tournament",
                    "a dance show",
                    "a new flat",
                ],
                "month": [
                    "January",
                    "February",
                    "March",
                    "May",
                    "July",
                    "August",
                    "September",
                    "October",
                    "November",
                    "December",
                ],
            },
        ),
        (
            "{Taught} her to {skill}",
            {
                "Taught": [
                    "Her father taught",
                    "An old teacher taught",
                    "A neighbour taught",
                    "Her uncle taught",
                    "A friend taught",
                    "Her mother taught",
                ],
                "skill": [
                    "fish",
                    "sew",
                    "paint",
                    "ride a bike",
                    "swim",
                    "bake bread",
                    "play darts",
                    "grow tomatoes",
                    "repair bikes",
                    "sing",
                ],
            },
        ),
        (
            "Wants to learn {language} to {purpose}",
            {
                "language": [
                    "Spanish",
                    "German",
                    "Italian",
                    "Portuguese",
                    "Arabic",
                    "Russian",
                    "Dutch",
                    "Greek",
                    "Swedish",
                ],
                "purpose": [
                    "travel",
                    "talk to her in-laws",
                    "watch films",
                    "get a promotion",
                    "read poetry",
                    "work abroad",
                    "help her kids",
                ],
            },
        ),
        (
            "Drives {a} {age} {colour} {car}",
            {
                "a": ["a", "a borrowed", "a rented"],
                "age": ["new", "second-hand", "small", "noisy", "fast"],
                "colour": ["red", "green", "white", "black", "grey"],
                "car": ["Fiat", "Peugeot", "Toyota", "Ford", "Renault", "Skoda", "Mini"],
            },
        ),
        (
            "Moved to {city} {when} for {reason}",
            {
                "city": [
                    "Bristol",
                    "York",
                    "Glasgow",
                    "Cardiff",
                    "Oxford",
                    "Brighton",
                    "Norwich",
                    "Bath",
                ],
                "when": [
                    "last year",
                    "a month ago",
                    "five years ago",
                    "in the spring",
                    "after university",
                ],
                "reason": [
                    "love",
                    "her studies",
                    "a cheaper flat",
                    "her parents",
                    "a new job",
                    "the countryside",
                ],
            },
        ),
        (
            "Her friend {name} from {city} {did} {thing} {when}",
            {
                "name": ["Alice", "Ben", "Chloe", "David", "Eva", "George", "Hannah", "Ivan"],
                "city": [
                    "Bristol",
                    "York",
                    "Glasgow",
                    "Cardiff",
                    "Oxford",
                    "Brighton",
                    "Norwich",
                    "Bath",
                ],
                "did": ["bought", "sold", "painted", "fixed", "lost", "found"],
                "thing": [
                    "a bike",
                    "a piano",
                    "a boat",
                    "a sofa",
                    "a camera",
                    "a tent",
                    "a guitar",
                    "a lamp",
                ],
                "when": [
                    "last week",
                    "yesterday",
                    "in the spring",
                    "over the holidays",
                    "on Sunday",
                ],
            },
        ),
        (
            "Visited {city} {when} with {who} for {reason}",
            {
                "city": [
                    "Madrid",
                    "Berlin",
                    "Vienna",
                    "Prague",
                    "Dublin",
                    "Oslo",
                    "Athens",
                    "Krakow",
                    "Seville",
                    "Porto",
                ],
                "when": ["last spring", "in 2019", "twice", "as a student", "for a weekend"],
                "who": [
                    "friends",
                    "colleagues",
                    "her father",
                    "her cousins",
                    "a choir",
                    "her partner",
                    "a school group",
                ],
                "reason": [
                    "a concert",
                    "a wedding",
                    "a conference",
                    "a football match",
                    "a festival",
                    "the museums",
                ],
            },
        ),
        (
            "Keeps {object} {where} since {when}",
            {
                "object": [
                    "an old radio",
                    "a jar of buttons",
                    "a postcard collection",
                    "a bonsai",
                    "a toy train",
                    "her first skates",
                    "a map of Europe",
                    "a brass compass",
                    "a box of letters",
                    "a cactus",
                ],
                "where": [
                    "on the shelf",
                    "in the attic",
                    "by the window",
                    "under the bed",
                    "in the kitchen",
                    "on her desk",
                ],
                "when": [
                    "childhood",
                    "the move",
                    "her twenties",
                    "a trip",
                    "last year",
                    "university",
                ],
            },
        ),
    ],
    scene=(
        "Story: An evening at the lighthouse café. Scene: rain taps on the windows while the two "
        "friends talk over a pot of tea, the keeper's old lamp swinging above the counter."
    ),
    query_prefix="query: ",
    document_prefix="passage: ",
)

FR = Corpus(
    language="fr",
    references=[
        "A un chat roux qui s'appelle Félix",
        "Travaille de nuit comme infirmière à l'hôpital Saint-Jacques",
        "Sa sœur Claire se marie en juin",
        "A peur de l'avion depuis un vol agité vers Lisbonne",
        "Joue du violoncelle dans un orchestre amateur le jeudi",
        "Ne boit pas de café, seulement du thé vert",
        "A grandi dans un petit village au bord de la mer en Bretagne",
        "S'entraîne pour un semi-marathon en avril",
        "Sa grand-mère lui a appris à tricoter",
        "Veut apprendre le japonais pour lire des mangas",
        "A perdu son alliance sur la plage l'été dernier",
        "Est allergique aux cacahuètes",
        "Conduit une vieille Volvo bleue",
        "A promis d'envoyer les photos du voyage à Rome",
        "Son fils Léo entre à l'école primaire",
        "Adore les dimanches après-midi pluvieux avec un livre",
        "Écrit un roman fantastique sur un gardien de phare",
        "A déménagé à Lille il y a deux ans pour le travail",
    ],
    queries=[
        ("Comment va Félix ? Il fait toujours tomber tout ce qui traîne sur la table ?", {0}),
        ("Trois nuits d'affilée dans le service, je suis épuisée et la mer me manque", {1, 6}),
        ("Je devrais prendre le train plutôt que l'avion pour aller au mariage ?", {2, 3}),
        ("La répétition a été déplacée et il faut vraiment que je travaille mon instrument", {4}),
        ("Une idée de grignotage et de boisson chaude pour ce soir ?", {5, 11}),
        ("Mon petit garçon a le trac pour sa rentrée, et moi pour ma course", {14, 7}),
    ],
    templates=[
        (
            "A un {animal} {colour} qui s'appelle {name}",
            {
                "animal": ["chien", "lapin", "perroquet", "hamster", "cheval", "furet", "bouc"],
                "colour": ["noir", "blanc", "gris", "brun", "tacheté", "doré", "argenté"],
                "name": ["Rex", "Luna", "Max", "Bella", "Oscar", "Milo", "Daisy", "Toby", "Nala"],
            },
        ),
        (
            "Travaille {shift} comme {job} {place}",
            {
                "shift": [
                    "le matin",
                    "le week-end",
                    "en soirée",
                    "tôt",
                    "à mi-temps",
                    "en horaires décalés",
                ],
                "job": [
                    "caissière",
                    "boulangère",
                    "bibliothécaire",
                    "mécanicienne",
                    "professeure",
                    "serveuse",
                    "chauffeuse",
                    "jardinière",
                    "réceptionniste",
                    "pharmacienne",
                ],
                "place": [
                    "au supermarché",
                    "à la boulangerie",
                    "à la médiathèque",
                    "au garage",
                    "à l'école",
                    "à la gare",
                    "au musée",
                    "à la poste",
                    "à la mairie",
                ],
            },
        ),
        (
            "Son {relative} {name} {event} en {month}",
            {
                "relative": ["cousin", "frère", "oncle", "ami", "voisin", "collègue", "parrain"],
                "name": ["Paul", "Marc", "Tom", "Hugo", "Sam", "Louis", "Nathan", "Jules"],
                "event": [
                    "déménage",
                    "part à la retraite",
                    "change de travail",
                    "part à l'étranger",
                    "ouvre une boutique",
                    "devient papa",
                    "passe son diplôme",
                ],
                "month": [
                    "janvier",
                    "février",
                    "mars",
                    "mai",
                    "juillet",
                    "août",
                    "septembre",
                    "octobre",
                    "novembre",
                    "décembre",
                ],
            },
        ),
        (
            "A peur {fear} depuis {origin}",
            {
                "fear": [
                    "des araignées",
                    "de l'eau profonde",
                    "des orages",
                    "de la foule",
                    "du noir",
                    "du vide",
                    "des chiens",
                    "des piqûres",
                    "des ascenseurs",
                    "des guêpes",
                ],
                "origin": [
                    "l'enfance",
                    "un cauchemar",
                    "des vacances en Espagne",
                    "l'école",
                    "un film",
                    "un accident",
                    "l'hiver dernier",
                    "un camping",
                ],
            },
        ),
        (
            "Joue {game} avec {who} le {day}",
            {
                "game": [
                    "aux échecs",
                    "au tennis",
                    "au foot",
                    "aux cartes",
                    "au badminton",
                    "aux jeux de société",
                    "aux jeux vidéo",
                    "aux fléchettes",
                    "à la pétanque",
                ],
                "who": [
                    "des amis",
                    "des collègues",
                    "son père",
                    "les voisins",
                    "un club",
                    "ses cousins",
                    "d'anciens camarades",
                    "sa nièce",
                    "son neveu",
                ],
                "day": [
                    "lundi",
                    "mardi",
                    "mercredi",
                    "vendredi",
                    "samedi",
                    "dimanche matin",
                    "dimanche soir",
                    "samedi après-midi",
                ],
            },
        ),
        (
            "{likes} {food} {when}",
            {
                "likes": ["Aime", "Adore", "Apprécie", "N'aime pas", "Déteste", "Cuisine souvent"],
                "food": [
                    "le curry épicé",
                    "le poulet rôti",
                    "les sushis",
                    "les pâtes au pesto",
                    "la soupe de lentilles",
                    "la tarte aux pommes",
                    "le pain frais",
                    "les crêpes",
                    "le poisson grillé",
                    "l'omelette au fromage",
                ],
                "when": [
                    "le week-end",
                    "au déjeuner",
                    "en hiver",
                    "en soirée",
                    "après le travail",
                    "en vacances",
                    "entre amis",
                ],
            },
        ),
        (
            "A grandi dans {place} près {landmark}",
            {
                "place": [
                    "une grande ville",
                    "une ville de montagne",
                    "une ferme",
                    "une banlieue",
                    "un bourg",
                    "une ville industrielle",
                    "une ville au bord d'un fleuve",
                ],
                "landmark": [
                    "d'une forêt",
                    "d'un château",
                    "d'un lac",
                    "d'une autoroute",
                    "d'une cathédrale",
                    "d'un stade",
                    "d'un vignoble",
                    "d'un aéroport",
                ],
            },
        ),
        (
            "{doing} pour {goal} en {month}",
            {
                "doing": ["Économise", "Révise", "Se prépare", "S'exerce", "S'organise"],
                "goal": [
                    "le permis de conduire",
                    "un examen de piano",
                    "un entretien d'embauche",
                    "un voyage au Canada",
                    "un concours de cuisine",
                    "un tournoi d'échecs",
                    "un spectacle de danse",
                    "un nouvel appartement",
                ],
                "month": [
                    "janvier",
                    "février",
                    "mars",
                    "mai",
                    "juillet",
                    "août",
                    "septembre",
                    "octobre",
                    "novembre",
                    "décembre",
                ],
            },
        ),
        (
            "{Taught} lui a appris à {skill}",
            {
                "Taught": [
                    "Son père",
                    "Un vieux professeur",
                    "Une voisine",
                    "Son oncle",
                    "Une amie",
                    "Sa mère",
                ],
                "skill": [
                    "pêcher",
                    "coudre",
                    "peindre",
                    "faire du vélo",
                    "nager",
                    "faire du pain",
                    "jouer aux fléchettes",
                    "cultiver des tomates",
                    "réparer des vélos",
                    "chanter",
                ],
            },
        ),
        (
            "Veut apprendre {language} pour {purpose}",
            {
                "language": [
                    "l'espagnol",
                    "l'allemand",
                    "l'italien",
                    "le portugais",
                    "l'arabe",
                    "le russe",
                    "le néerlandais",
                    "le grec",
                    "le suédois",
                ],
                "purpose": [
                    "voyager",
                    "parler avec sa belle-famille",
                    "regarder des films",
                    "avoir une promotion",
                    "lire de la poésie",
                    "travailler à l'étranger",
                    "aider ses enfants",
                ],
            },
        ),
        (
            "Conduit une {car} {colour} {age}",
            {
                "car": ["Fiat", "Peugeot", "Toyota", "Ford", "Renault", "Skoda", "Mini"],
                "colour": ["rouge", "verte", "blanche", "noire", "grise"],
                "age": ["neuve", "d'occasion", "petite", "bruyante", "rapide", "empruntée"],
            },
        ),
        (
            "A déménagé à {city} {when} pour {reason}",
            {
                "city": [
                    "Nantes",
                    "Lyon",
                    "Grenoble",
                    "Bordeaux",
                    "Rennes",
                    "Dijon",
                    "Tours",
                    "Caen",
                ],
                "when": [
                    "l'an dernier",
                    "il y a un mois",
                    "il y a cinq ans",
                    "au printemps",
                    "après ses études",
                ],
                "reason": [
                    "l'amour",
                    "ses études",
                    "un loyer moins cher",
                    "ses parents",
                    "un nouveau travail",
                    "la campagne",
                ],
            },
        ),
        (
            "Son amie {name} de {city} a {did} {thing} {when}",
            {
                "name": ["Alice", "Chloé", "Eva", "Inès", "Jade", "Léa", "Manon", "Zoé"],
                "city": [
                    "Nantes",
                    "Lyon",
                    "Grenoble",
                    "Bordeaux",
                    "Rennes",
                    "Dijon",
                    "Tours",
                    "Caen",
                ],
                "did": ["acheté", "vendu", "peint", "réparé", "perdu", "trouvé"],
                "thing": [
                    "un vélo",
                    "un piano",
                    "un bateau",
                    "un canapé",
                    "un appareil photo",
                    "une tente",
                    "une guitare",
                    "une lampe",
                ],
                "when": [
                    "la semaine dernière",
                    "hier",
                    "au printemps",
                    "pendant les vacances",
                    "dimanche",
                ],
            },
        ),
        (
            "A visité {city} {when} avec {who} pour {reason}",
            {
                "city": [
                    "Madrid",
                    "Berlin",
                    "Vienne",
                    "Prague",
                    "Dublin",
                    "Oslo",
                    "Athènes",
                    "Cracovie",
                    "Séville",
                    "Porto",
                ],
                "when": [
                    "au printemps dernier",
                    "en 2019",
                    "deux fois",
                    "étudiante",
                    "un week-end",
                    "l'hiver dernier",
                ],
                "who": [
                    "des amis",
                    "des collègues",
                    "son père",
                    "ses cousins",
                    "une chorale",
                    "son compagnon",
                    "un groupe scolaire",
                ],
                "reason": [
                    "un concert",
                    "un mariage",
                    "une conférence",
                    "un match de foot",
                    "un festival",
                    "les musées",
                ],
            },
        ),
        (
            "Garde {object} {where} depuis {when}",
            {
                "object": [
                    "une vieille radio",
                    "un bocal de boutons",
                    "une collection de cartes postales",
                    "un bonsaï",
                    "un petit train",
                    "ses premiers patins",
                    "une carte de l'Europe",
                    "une boussole en laiton",
                    "une boîte de lettres",
                    "un cactus",
                ],
                "where": [
                    "sur l'étagère",
                    "au grenier",
                    "près de la fenêtre",
                    "sous le lit",
                    "dans la cuisine",
                    "sur son bureau",
                ],
                "when": [
                    "l'enfance",
                    "le déménagement",
                    "ses vingt ans",
                    "un voyage",
                    "l'an dernier",
                    "la fac",
                    "son mariage",
                ],
            },
        ),
    ],
    scene=(
        "Histoire : une soirée au café du phare. Scène : la pluie tape contre les vitres pendant "
        "que les deux amies parlent autour d'une théière, la vieille lampe du gardien se "
        "balançant au-dessus du comptoir."
    ),
    query_prefix="query: ",
    document_prefix="passage: ",
)

CORPORA = {"en": EN, "fr": FR}


def distractors(corpus: Corpus, count: int, seed: int) -> list[str]:
    """Return `count` distinct distractors of the corpus's shapes, shuffled by `seed`."""
    pool: list[str] = []
    for template, slots in corpus.templates:
        names = list(slots)
        for values in itertools.product(*(slots[n] for n in names)):
            pool.append(template.format(**dict(zip(names, values, strict=True))))
    references = set(corpus.references)
    pool = sorted(set(pool) - references)
    if count > len(pool):
        raise ValueError(f"only {len(pool)} distinct distractors in {corpus.language}")
    return random.Random(seed).sample(pool, count)
