"""Pairs of memories, labelled: `same` (two wordings of one fact: they should merge) or
`different` (two facts: merging them erases one). Written from how people write in chat and how a
reflection stores a memory (short statements, « A un… », "Has a…"), FR and EN, typos, missing
accents and case included, before any dedup rule was read off them.

Each pair carries a class: `swap:<kind>` (one word that is the fact swapped for another of its
kind: job, sport, animal, instrument, study, food, language, place, brand, name), `polarity`
(liking against hating, well against badly), `relation` (the same fact about someone else: a
relative put before the subject), and for variants `variant:reword`, `variant:detail`,
`variant:typo`, `variant:synonym`, `variant:relation` (the same relative on both sides).

Split in two halves by a seeded shuffle within each (language, label, class): `DEV`, the half the
rules were tuned on, and `TEST`, kept apart (bench/truth/dedup.py reports both).
"""

from __future__ import annotations

import random
from dataclasses import dataclass

SAME = "same"
DIFFERENT = "different"
SEED = 37


@dataclass(frozen=True)
class Pair:
    a: str
    b: str
    label: str  # SAME or DIFFERENT
    kind: str  # the class, e.g. "swap:job"
    language: str  # "fr" or "en"


_FR_DIFFERENT: dict[str, list[tuple[str, str]]] = {
    "swap:job": [
        ("Est infirmière de nuit à l'hôpital", "Est aide-soignante de nuit à l'hôpital"),
        (
            "Travaille comme boulanger dans une petite boutique du quartier",
            "Travaille comme boucher dans une petite boutique du quartier",
        ),
        ("Sa mère est pharmacienne", "Sa mère est kiné"),
        (
            "Bosse comme serveur dans un resto le week-end",
            "Bosse comme plongeur dans un resto le week-end",
        ),
        ("Mon père est plombier depuis vingt ans", "Mon père est électricien depuis vingt ans"),
        ("Elle est avocate dans un cabinet à Paris", "Elle est comptable dans un cabinet à Paris"),
        (
            "Travaille en tant que développeur web en télétravail",
            "Travaille en tant que graphiste en télétravail",
        ),
        ("Veut devenir vétérinaire plus tard", "Veut devenir pompier plus tard"),
        ("est caissiere au supermarché du coin", "est vendeuse au supermarché du coin"),
        (
            "A travaillé comme journaliste pendant dix ans avant de changer de voie",
            "A travaillé comme photographe pendant dix ans avant de changer de voie",
        ),
        ("Son copain est chauffeur routier", "Son copain est ambulancier"),
    ],
    "swap:sport": [
        ("Fait du judo deux fois par semaine", "Fait du karaté deux fois par semaine"),
        (
            "Joue au foot avec ses potes le dimanche matin",
            "Joue au basket avec ses potes le dimanche matin",
        ),
        ("je fais de l'escalade en salle", "je fais de la boxe en salle"),
        ("S'entraîne pour un marathon", "S'entraîne pour un triathlon"),
        (
            "Pratique l'équitation depuis qu'elle est petite",
            "Pratique la danse classique depuis qu'elle est petite",
        ),
        (
            "A repris le tennis après sa blessure au genou",
            "A repris le vélo après sa blessure au genou",
        ),
        ("Va à la muscu tous les soirs après le taf", "Va au yoga tous les soirs après le taf"),
        ("Est dans un club de rugby", "Est dans un club de handball"),
        (
            "Regarde tous les matchs de foot à la télé",
            "Regarde tous les matchs de tennis à la télé",
        ),
    ],
    "swap:animal": [
        ("A un chat qui s'appelle Mochi", "A un lapin qui s'appelle Mochi"),
        ("Ma fille voudrait un hamster pour Noël", "Ma fille voudrait un chien pour Noël"),
        ("Possède deux tortues", "Possède deux perruches"),
        ("A peur des araignées depuis toujours", "A peur des serpents depuis toujours"),
        ("Son chien est mort l'an dernier", "Son chat est mort l'an dernier"),
        ("A adopté un chaton au refuge", "A adopté un furet au refuge"),
        (
            "Garde le poisson rouge de sa voisine pendant les vacances",
            "Garde le perroquet de sa voisine pendant les vacances",
        ),
        ("Est allergique aux chats", "Est allergique aux chevaux"),
        ("Élève des poules dans son jardin", "Élève des lapins dans son jardin"),
    ],
    "swap:instrument": [
        ("Joue du piano depuis l'âge de six ans", "Joue de la guitare depuis l'âge de six ans"),
        (
            "Apprend la batterie avec un prof particulier",
            "Apprend la basse avec un prof particulier",
        ),
        (
            "Joue du violon dans l'orchestre du conservatoire",
            "Joue de l'alto dans l'orchestre du conservatoire",
        ),
        ("je fais du saxo dans une fanfare", "je fais de la trompette dans une fanfare"),
        ("A acheté un ukulélé d'occasion", "A acheté une guitare d'occasion"),
        ("Son fils prend des cours de flûte", "Son fils prend des cours de clarinette"),
        ("Rêve d'apprendre le violoncelle", "Rêve d'apprendre la harpe"),
        ("Joue de l'accordéon aux fêtes de famille", "Joue de l'harmonica aux fêtes de famille"),
    ],
    "swap:study": [
        ("Étudie le droit à la fac de Nantes", "Étudie la médecine à la fac de Nantes"),
        ("Est en master de psycho", "Est en master de socio"),
        ("fait une licence d'info", "fait une licence d'histoire"),
        ("Prépare un doctorat en chimie", "Prépare un doctorat en physique"),
        (
            "Reprend des études d'architecture à 35 ans",
            "Reprend des études de philosophie à 35 ans",
        ),
        ("Sa fille est en école d'ingé", "Sa fille est en école de commerce"),
        ("A un diplôme en biologie", "A un diplôme en géographie"),
        (
            "Passe son bac option maths cette année",
            "Passe son bac option arts plastiques cette année",
        ),
    ],
    "swap:food": [
        ("Est allergique aux arachides", "Est allergique aux fruits de mer"),
        ("Adore les sushis", "Adore les lasagnes"),
        ("Ne mange pas de porc", "Ne mange pas de bœuf"),
        ("Boit son café sans sucre le matin", "Boit son thé sans sucre le matin"),
        ("Est intolérante au lactose", "Est intolérante au gluten"),
        ("Son plat préféré c'est la raclette", "Son plat préféré c'est le couscous"),
        ("Commande toujours une pizza margherita", "Commande toujours un kebab"),
        ("Mange une pomme tous les jours à 10h", "Mange une banane tous les jours à 10h"),
        ("Ne supporte pas la coriandre", "Ne supporte pas les champignons"),
    ],
    "swap:language": [
        ("Apprend l'espagnol sur Duolingo", "Apprend l'italien sur Duolingo"),
        ("Parle couramment allemand", "Parle couramment russe"),
        ("je prends des cours de japonais le soir", "je prends des cours de coréen le soir"),
        ("Sa mère lui parle en arabe", "Sa mère lui parle en portugais"),
        (
            "Veut apprendre le chinois pour son travail",
            "Veut apprendre le néerlandais pour son travail",
        ),
        ("Est bilingue français-anglais", "Est bilingue français-espagnol"),
        ("Enseigne le latin dans un lycée", "Enseigne le grec dans un lycée"),
        ("Regarde ses séries en VO anglaise", "Regarde ses séries en VO coréenne"),
    ],
    "swap:place": [
        ("Habite à Bordeaux depuis deux ans", "Habite à Toulouse depuis deux ans"),
        ("part en vacances en Grèce cet été", "part en vacances en Croatie cet été"),
        ("habite a lyon", "habite a lille"),
        ("Ses parents vivent en Bretagne", "Ses parents vivent en Normandie"),
        ("Va s'installer au Canada l'an prochain", "Va s'installer en Belgique l'an prochain"),
        ("A grandi à Marseille", "A grandi à Montpellier"),
        ("Travaille à la mairie de Rennes", "Travaille à la mairie de Brest"),
        ("Rêve d'aller au japon", "Rêve d'aller en islande"),
    ],
    "swap:brand": [
        ("A un iPhone depuis peu", "A un Samsung depuis peu"),
        ("Joue à la Switch tous les soirs", "Joue à la PS5 tous les soirs"),
        ("Conduit une vieille Peugeot", "Conduit une vieille Renault"),
        ("Ne jure que par Nike pour ses baskets", "Ne jure que par Adidas pour ses baskets"),
        ("Est abonné à Netflix", "Est abonné à Disney+"),
        ("écoute sa musique sur spotify", "écoute sa musique sur deezer"),
        ("Fait ses courses chez Lidl", "Fait ses courses chez Carrefour"),
    ],
    "swap:name": [
        ("Sa meilleure amie s'appelle Inès", "Sa meilleure amie s'appelle Jade"),
        ("Léa est sa cousine préférée", "Chloé est sa cousine préférée"),
        ("Son fils Hugo entre au CP en septembre", "Son fils Théo entre au CP en septembre"),
        ("sort avec un certain julien", "sort avec un certain romain"),
        ("Mathilde l'aide pour ses devoirs", "Camille l'aide pour ses devoirs"),
        ("A un chien nommé Rex", "A un chien nommé Filou"),
    ],
    "polarity": [
        ("Adore les films d'horreur", "Déteste les films d'horreur"),
        ("Aime beaucoup cuisiner le week-end", "Déteste cuisiner le week-end"),
        ("kiffe le rap français", "deteste le rap français"),
        ("Apprécie les longues balades en forêt", "A horreur des longues balades en forêt"),
        ("Aime le froid", "Déteste le froid"),
        ("Aime son travail à la banque", "N'aime pas son travail à la banque"),
        ("Adore prendre l'avion", "A peur de prendre l'avion"),
        ("Dort mal depuis son déménagement", "Dort bien depuis son déménagement"),
        ("J'adore les réunions de famille", "Je déteste les réunions de famille"),
        ("Aime bien son nouveau coloc", "Ne supporte plus son nouveau coloc"),
    ],
    "relation": [
        ("La mère de Lucas travaille à la poste", "Lucas travaille à la poste"),
        ("Le mari de Nadia est au chômage", "Nadia est au chômage"),
        ("Sa sœur vit à Genève", "Vit à Genève"),
        ("Sa copine est enceinte", "Est enceinte"),
        ("Le fils de sa voisine prend des cours de piano", "Sa voisine prend des cours de piano"),
        ("Son père a du diabète", "A du diabète"),
        ("Le meilleur ami de Karim part vivre au Québec", "Karim part vivre au Québec"),
        ("Sa grand-mère est à l'hôpital depuis lundi", "Est à l'hôpital depuis lundi"),
        ("Son frère cherche un appart à Lille", "Sa sœur cherche un appart à Lille"),
        ("La femme de son collègue attend des jumeaux", "Son collègue attend des jumeaux"),
        ("Mon oncle est prof de yoga", "Mon cousin est prof de yoga"),
        ("L'ex de Julie s'est installé à Nantes", "Julie s'est installée à Nantes"),
    ],
}

_FR_SAME: dict[str, list[tuple[str, str]]] = {
    "variant:reword": [
        ("Habite à Nantes", "Vit à Nantes"),
        ("Travaille comme infirmière de nuit", "Est infirmière de nuit"),
        ("A un chat qui s'appelle Caramel", "Son chat s'appelle Caramel"),
        ("Fait du yoga tous les matins", "Pratique le yoga tous les matins"),
        ("Joue de la guitare dans un groupe de rock", "Est guitariste dans un groupe de rock"),
        ("Est allergique aux arachides", "Allergique aux arachides"),
        ("Étudie le droit à Lyon", "Fait des études de droit à Lyon"),
        ("Parle couramment l'espagnol", "Parle espagnol couramment"),
        ("Sa sœur s'appelle Margaux", "A une sœur qui s'appelle Margaux"),
        ("A déménagé à Lille en mars", "S'est installé à Lille en mars"),
        ("Déteste les épinards", "A horreur des épinards"),
        ("Adore la pizza", "Aime énormément la pizza"),
        ("Ne boit pas d'alcool", "Ne boit jamais d'alcool"),
        (
            "Se lève tous les jours à 6h pour courir",
            "Se lève à 6h tous les jours pour aller courir",
        ),
        ("Prend le train pour aller au boulot", "Va au boulot en train"),
        (
            "Son mari est cuisinier dans un restaurant étoilé",
            "Son mari travaille comme cuisinier dans un restaurant étoilé",
        ),
        ("A deux enfants, une fille et un garçon", "A deux enfants : une fille et un garçon"),
        ("Joue aux échecs en ligne le soir", "Le soir, joue aux échecs en ligne"),
        ("Regarde beaucoup d'animés japonais", "Regarde énormément d'animés japonais"),
        (
            "Cherche un nouveau travail dans l'informatique",
            "Cherche un nouvel emploi dans l'informatique",
        ),
        ("Est végétarienne depuis trois ans", "Ne mange plus de viande depuis trois ans"),
        ("Son chien Rex a 12 ans", "Rex, son chien, a 12 ans"),
        ("Lit beaucoup de romans policiers", "Lit énormément de polars"),
        ("Sort avec Julien depuis le lycée", "Est en couple avec Julien depuis le lycée"),
        ("Travaille de chez lui la plupart du temps", "Télétravaille la plupart du temps"),
    ],
    "variant:detail": [
        ("Joue au tennis", "Joue au tennis le samedi avec son club"),
        ("Est infirmière", "Est infirmière aux urgences"),
        ("A un chien", "A un chien, un golden retriever très joueur"),
        ("Apprend le japonais", "Apprend le japonais pour pouvoir lire des mangas"),
        ("Habite à Grenoble", "Habite à Grenoble, près de la gare"),
        ("Aime le jazz", "Aime le jazz, surtout les vieux enregistrements"),
        ("Fait de l'escalade", "Fait de l'escalade en salle avec ses collègues"),
        (
            "Travaille dans une librairie",
            "Travaille dans une petite librairie indépendante du centre-ville",
        ),
        (
            "Est allergique au gluten",
            "Est allergique au gluten, elle doit faire très attention au restaurant",
        ),
        ("Joue du violon", "Joue du violon depuis l'enfance"),
        ("Adore les chats", "Adore les chats et en a déjà eu plusieurs"),
        (
            "Prépare le concours de médecine",
            "Prépare le concours de médecine pour la deuxième fois",
        ),
        ("A une tortue", "A une tortue qui s'appelle Franklin"),
        (
            "Fait du vélo pour aller au travail",
            "Fait du vélo pour aller au travail, même sous la pluie",
        ),
        ("Son frère vit au Canada", "Son frère vit au Canada, à Montréal"),
        ("Aime cuisiner des plats italiens", "Aime cuisiner des plats italiens pour ses amis"),
        ("Est fan de foot", "Est fan de foot et supporte l'OM"),
        ("Ne mange pas de viande", "Ne mange pas de viande ni de poisson"),
        ("Veut devenir prof des écoles", "Veut devenir prof des écoles après son master"),
        ("Joue à la Switch", "Joue à la Switch, surtout à Zelda"),
    ],
    "variant:typo": [
        ("Habite à Montréal", "habite a montreal"),
        ("Est infirmière à l'hôpital de Caen", "est infirmiere a l'hopital de caen"),
        ("Joue du piano tous les soirs", "joue du pianno tous les soirs"),
        ("Aime beaucoup les chats", "aime bcp les chats"),
        ("Fait de la natation le mercredi", "fait de la natation le mercredi"),
        ("Déteste les réveils matinaux", "deteste les reveils matinaux"),
        ("Apprend l'allemand pour son travail", "apprend l'allemant pour son travail"),
        ("Son frère travaille à la SNCF", "son frère travaille a la sncf"),
        ("Est végétarien depuis deux ans", "Est végétarien depuis 2 ans"),
        ("A un chien qui s'appelle Oslo", "A un chien qui s'apelle Oslo"),
        ("Prend des cours de chant le soir", "Prend des cours de chant le soire"),
        ("Travaille comme développeur", "Travaille comme developpeur"),
        ("Est allergique aux fruits à coque", "Est alergique aux fruits à coque"),
        ("Fait du théâtre dans une troupe amateur", "Fait du theatre dans une troupe amateur"),
        ("Sa copine s'appelle Anaïs", "Sa copine s'appelle Anais"),
    ],
    "variant:synonym": [
        ("Adore les randonnées en montagne", "Aime beaucoup les randonnées en montagne"),
        ("Déteste les araignées", "Hait les araignées"),
        ("Adore le chocolat noir", "Raffole du chocolat noir"),
        ("Aime la musique classique", "Apprécie la musique classique"),
        ("Aime lire des mangas le soir", "Adore lire des mangas le soir"),
        ("Ne supporte pas le bruit", "Ne supporte pas du tout le bruit"),
        ("Est passionnée de photographie", "Est passionnée par la photographie"),
        ("Adore son chat", "Aime énormément son chat"),
        ("Aime les films de science-fiction", "Adore les films de science-fiction"),
        ("Déteste le froid de l'hiver", "Ne supporte pas le froid de l'hiver"),
        ("Kiffe les jeux vidéo rétro", "Adore les jeux vidéo rétro"),
        ("Son père est médecin", "Son papa est médecin"),
    ],
    "variant:relation": [
        ("Le frère de Yanis est cuisinier", "Le frère de Yanis travaille comme cuisinier"),
        ("Sa mère habite à Toulouse", "Sa maman habite à Toulouse"),
        ("Son mari s'appelle Thomas", "Son époux s'appelle Thomas"),
        ("Sa fille fait de la danse", "Sa fille fait de la danse classique"),
        ("Mon frère est plombier", "mon frere est plombier"),
        ("Son copain travaille dans la restauration", "Son copain bosse dans la restauration"),
        ("Ses parents habitent en Bretagne", "Ses parents vivent en Bretagne"),
        (
            "Le mari de Sonia est ingénieur chez Airbus",
            "Le mari de Sonia est ingénieur chez Airbus à Toulouse",
        ),
    ],
}

_EN_DIFFERENT: dict[str, list[tuple[str, str]]] = {
    "swap:job": [
        (
            "Works as a nurse at the children's hospital",
            "Works as a receptionist at the children's hospital",
        ),
        ("She's a teacher at a primary school", "She's a cook at a primary school"),
        ("My dad is a plumber", "My dad is an electrician"),
        ("Is a software engineer at a startup", "Is a data analyst at a startup"),
        ("Works part time as a barista", "Works part time as a cashier"),
        ("Her husband is a firefighter", "Her husband is a paramedic"),
        ("Wants to become a vet", "Wants to become a pilot"),
        ("has been a lawyer for 10 years", "has been an accountant for 10 years"),
        (
            "Used to be a journalist before switching careers",
            "Used to be a chef before switching careers",
        ),
        ("works as a bartender on weekends", "works as a lifeguard on weekends"),
        ("Her mum is a hairdresser", "Her mum is a dentist"),
    ],
    "swap:sport": [
        ("Plays football every Sunday with his mates", "Plays rugby every Sunday with his mates"),
        ("Goes climbing at the gym after work", "Goes swimming at the gym after work"),
        ("Is training for a marathon", "Is training for an ironman"),
        ("Has been doing karate since she was a kid", "Has been doing ballet since she was a kid"),
        ("plays volleyball on the beach in summer", "plays frisbee on the beach in summer"),
        ("Watches every basketball game on TV", "Watches every baseball game on TV"),
        ("Took up golf after retiring", "Took up tennis after retiring"),
        ("Does yoga three times a week", "Does pilates three times a week"),
        ("Is on the school hockey team", "Is on the school lacrosse team"),
    ],
    "swap:animal": [
        ("Has a cat called Pumpkin", "Has a rabbit called Pumpkin"),
        ("Her son wants a puppy for his birthday", "Her son wants a kitten for his birthday"),
        ("Is scared of spiders", "Is scared of snakes"),
        ("owns two guinea pigs", "owns two ferrets"),
        ("Their dog died last year", "Their horse died last year"),
        ("Is allergic to cats", "Is allergic to dogs"),
        ("Volunteers at a dog shelter on weekends", "Volunteers at a cat shelter on weekends"),
        ("Keeps chickens in the back garden", "Keeps bees in the back garden"),
        ("Has a pet parrot named Kiwi", "Has a pet gecko named Kiwi"),
    ],
    "swap:instrument": [
        ("Plays the piano in a jazz band", "Plays the saxophone in a jazz band"),
        ("Is learning the guitar from YouTube videos", "Is learning the drums from YouTube videos"),
        ("Plays cello in the university orchestra", "Plays viola in the university orchestra"),
        ("Bought a secondhand trumpet", "Bought a secondhand keyboard"),
        ("Her daughter takes violin lessons", "Her daughter takes flute lessons"),
        ("wants to learn the banjo", "wants to learn the harmonica"),
        ("Has played bass in a punk band for years", "Has played drums in a punk band for years"),
        (
            "Teaches clarinet at the local music school",
            "Teaches trombone at the local music school",
        ),
    ],
    "swap:study": [
        ("Studies law at Edinburgh", "Studies medicine at Edinburgh"),
        ("is doing a masters in psychology", "is doing a masters in sociology"),
        ("Has a degree in chemistry", "Has a degree in economics"),
        ("Is majoring in computer science", "Is majoring in political science"),
        ("Is doing a PhD in physics", "Is doing a PhD in linguistics"),
        ("Went back to uni to study nursing", "Went back to uni to study history"),
        ("Her brother studies engineering in Delft", "Her brother studies architecture in Delft"),
        ("is revising for her biology exam", "is revising for her geography exam"),
    ],
    "swap:food": [
        ("Is allergic to peanuts", "Is allergic to shellfish"),
        ("Loves sushi", "Loves tacos"),
        ("Doesn't eat pork", "Doesn't eat beef"),
        ("Drinks green tea every morning", "Drinks black coffee every morning"),
        ("Is lactose intolerant", "Is gluten intolerant"),
        ("Her favourite food is lasagna", "Her favourite food is ramen"),
        ("Always orders a pepperoni pizza", "Always orders a cheeseburger"),
        ("Can't stand mushrooms", "Can't stand olives"),
        ("Eats an apple every day at lunch", "Eats a banana every day at lunch"),
    ],
    "swap:language": [
        ("Is learning Spanish on Duolingo", "Is learning Italian on Duolingo"),
        ("speaks fluent german", "speaks fluent russian"),
        ("Takes Japanese classes on Tuesday evenings", "Takes Korean classes on Tuesday evenings"),
        ("Her grandmother only speaks Portuguese", "Her grandmother only speaks Arabic"),
        ("Wants to learn Mandarin for work", "Wants to learn Dutch for work"),
        ("Teaches Latin at a grammar school", "Teaches Greek at a grammar school"),
        ("is fluent in french and english", "is fluent in french and spanish"),
        ("Reads novels in German to practise", "Reads novels in Swedish to practise"),
    ],
    "swap:place": [
        ("Lives in Manchester", "Lives in Birmingham"),
        ("Is moving to Berlin next spring", "Is moving to Vienna next spring"),
        ("grew up in texas", "grew up in ohio"),
        ("Her parents live in Scotland", "Her parents live in Wales"),
        ("Went to Portugal for her honeymoon", "Went to Iceland for her honeymoon"),
        ("Works at the hospital in Bristol", "Works at the hospital in Cardiff"),
        ("wants to move to canada someday", "wants to move to australia someday"),
        ("Studied abroad in Madrid", "Studied abroad in Barcelona"),
    ],
    "swap:brand": [
        ("Just got a new iPhone", "Just got a new Pixel"),
        ("Plays Xbox every night", "Plays PlayStation every night"),
        ("Drives an old Toyota", "Drives an old Honda"),
        ("Only wears Nike trainers", "Only wears Adidas trainers"),
        ("Has a Netflix subscription", "Has a Hulu subscription"),
        ("listens to podcasts on spotify", "listens to podcasts on youtube"),
        ("Does her weekly shop at Tesco", "Does her weekly shop at Aldi"),
    ],
    "swap:name": [
        ("Her best friend is called Megan", "Her best friend is called Hannah"),
        ("Jake is his older brother", "Ryan is his older brother"),
        ("His son Oliver starts school in September", "His son Harry starts school in September"),
        ("is dating a guy named josh", "is dating a guy named kyle"),
        ("Sophie helps him with his homework", "Lucy helps him with his homework"),
        ("Has a dog named Biscuit", "Has a dog named Waffles"),
    ],
    "polarity": [
        ("Loves horror movies", "Hates horror movies"),
        ("Really enjoys cooking on weekends", "Really hates cooking on weekends"),
        ("likes country music", "dislikes country music"),
        ("Loves long walks in the rain", "Can't stand long walks in the rain"),
        ("Enjoys flying", "Is afraid of flying"),
        ("Loves her job at the bank", "Hates her job at the bank"),
        ("I love family gatherings", "I hate family gatherings"),
        ("Sleeps well since the move", "Sleeps badly since the move"),
        ("Is a big fan of jazz", "Is not a fan of jazz"),
        ("Gets on well with her new flatmate", "Can't stand her new flatmate"),
    ],
    "relation": [
        ("Emily's brother is a firefighter", "Emily is a firefighter"),
        ("Nadia's husband is unemployed", "Nadia is unemployed"),
        ("His sister lives in Glasgow", "Lives in Glasgow"),
        ("Her girlfriend is a vegan", "Is a vegan"),
        ("His neighbour's son plays the drums", "His neighbour plays the drums"),
        ("His father has diabetes", "Has diabetes"),
        ("Karim's best friend is moving to Canada", "Karim is moving to Canada"),
        ("Her grandma is in hospital", "Is in hospital"),
        ("His brother is looking for a flat in Leeds", "His sister is looking for a flat in Leeds"),
        ("My colleague's wife is expecting twins", "My colleague is expecting twins"),
        ("My uncle teaches yoga", "My cousin teaches yoga"),
        ("Julie's ex moved to Bristol", "Julie moved to Bristol"),
    ],
}

_EN_SAME: dict[str, list[tuple[str, str]]] = {
    "variant:reword": [
        ("Lives in Bristol", "Is living in Bristol"),
        ("Works as a nurse on night shifts", "Is a night shift nurse"),
        ("Has a cat named Pepper", "Her cat is called Pepper"),
        ("Does yoga every morning", "Practises yoga every morning"),
        ("Plays guitar in a rock band", "Is the guitarist in a rock band"),
        ("Is allergic to peanuts", "Has a peanut allergy"),
        ("Studies law in London", "Is a law student in London"),
        ("Speaks fluent Spanish", "Is fluent in Spanish"),
        ("His sister is called Grace", "He has a sister called Grace"),
        ("Moved to Leeds in March", "Relocated to Leeds in March"),
        ("Hates spinach", "Really dislikes spinach"),
        ("Loves pizza", "Absolutely loves pizza"),
        ("Doesn't drink alcohol", "Never drinks alcohol"),
        (
            "Gets up at 6am every day to go running",
            "Gets up every day at 6am to go for a run",
        ),
        ("Takes the train to work", "Commutes to work by train"),
        (
            "Her husband is a chef at a fancy restaurant",
            "Her husband works as a chef at a fancy restaurant",
        ),
        ("Has two kids, a boy and a girl", "Has two kids: a girl and a boy"),
        ("Plays chess online in the evenings", "In the evenings, plays chess online"),
        ("Watches a lot of anime", "Watches loads of anime"),
        ("Is looking for a new job in IT", "Is looking for a new IT job"),
        ("Has been vegetarian for three years", "Hasn't eaten meat for three years"),
        ("Her dog Max is 12", "Max, her dog, is 12"),
        ("Reads a lot of crime novels", "Reads lots of crime fiction"),
        ("Has been dating Tom since high school", "Has been with Tom since high school"),
        ("Works from home most days", "Works remotely most days"),
    ],
    "variant:detail": [
        ("Plays tennis", "Plays tennis with her club on Saturdays"),
        ("Is a nurse", "Is a nurse in A&E"),
        ("Has a dog", "Has a dog, a very playful golden retriever"),
        ("Is learning Japanese", "Is learning Japanese so she can read manga"),
        ("Lives in Sheffield", "Lives in Sheffield near the station"),
        ("Likes jazz", "Likes jazz, especially old vinyl records"),
        ("Goes climbing", "Goes climbing at an indoor wall with colleagues"),
        ("Works in a bookshop", "Works in a small independent bookshop in town"),
        ("Is gluten intolerant", "Is gluten intolerant and has to be careful eating out"),
        ("Plays the violin", "Has played the violin since childhood"),
        ("Loves cats", "Loves cats and has had several"),
        (
            "Is retaking the medical entrance exam",
            "Is retaking the medical entrance exam this summer",
        ),
        ("Has a tortoise", "Has a tortoise called Sheldon"),
        ("Cycles to work", "Cycles to work, even in the rain"),
        ("Her brother lives in Canada", "Her brother lives in Canada, in Toronto"),
        ("Likes cooking Italian food", "Likes cooking Italian food for friends"),
        ("Is a football fan", "Is a football fan and supports Arsenal"),
        ("Doesn't eat meat", "Doesn't eat meat or fish"),
        (
            "Wants to become a primary school teacher",
            "Wants to become a primary school teacher after her degree",
        ),
        ("Plays on the Switch", "Plays on the Switch, mostly Zelda"),
    ],
    "variant:typo": [
        ("Lives in Montreal", "lives in montreal"),
        ("Works as a nurse at St Mary's hospital", "works as a nurse at st marys hospital"),
        ("Really likes cats", "rly likes cats"),
        ("Goes swimming on Wednesdays", "goes swimming on wednesdays"),
        ("Hates early mornings", "hates early mornigns"),
        ("Is learning German for work", "is learning german for work"),
        ("His brother works for the council", "his bro works for the council"),
        ("Has been vegetarian for two years", "Has been vegetarian for 2 years"),
        ("Has a dog called Oslo", "Has a dog caled Oslo"),
        ("Takes singing lessons in the evening", "Takes singing lesons in the evening"),
        ("Works as a software developer", "Works as a sofware developer"),
        ("Is allergic to tree nuts", "Is alergic to tree nuts"),
        ("Does amateur theatre with a local group", "Does amateur theater with a local group"),
        ("Her girlfriend is called Zoë", "Her girlfriend is called Zoe"),
        ("Doesn't like horror films", "doesnt like horror films"),
    ],
    "variant:synonym": [
        ("Loves hiking in the mountains", "Adores hiking in the mountains"),
        ("Hates spiders", "Loathes spiders"),
        ("Loves dark chocolate", "Is crazy about dark chocolate"),
        ("Likes classical music", "Enjoys classical music"),
        ("Likes reading manga at night", "Loves reading manga at night"),
        ("Can't stand noise", "Really can't stand noise"),
        ("Is passionate about photography", "Is really passionate about photography"),
        ("Adores her cat", "Loves her cat to bits"),
        ("Likes science fiction films", "Loves science fiction films"),
        ("Hates the cold in winter", "Can't stand the cold in winter"),
        ("Is into retro video games", "Loves retro video games"),
        ("His dad is a doctor", "His father is a doctor"),
    ],
    "variant:relation": [
        ("Yasmin's brother is a cook", "Yasmin's brother works as a cook"),
        ("Her mother lives in Leeds", "Her mum lives in Leeds"),
        ("Her husband is called Tom", "Her hubby is called Tom"),
        ("His daughter does ballet", "His daughter does classical ballet"),
        ("My brother is a plumber", "my brother's a plumber"),
        ("Her boyfriend works in hospitality", "Her bf works in hospitality"),
        ("His parents live in Cornwall", "His parents are living in Cornwall"),
        (
            "Sonia's husband is an engineer at Airbus",
            "Sonia's husband is an engineer at Airbus in Toulouse",
        ),
    ],
}


def _pairs() -> list[Pair]:
    out = []
    for language, label, table in (
        ("fr", DIFFERENT, _FR_DIFFERENT),
        ("fr", SAME, _FR_SAME),
        ("en", DIFFERENT, _EN_DIFFERENT),
        ("en", SAME, _EN_SAME),
    ):
        for kind, pairs in table.items():
            out += [Pair(a, b, label, kind, language) for a, b in pairs]
    return out


PAIRS: list[Pair] = _pairs()


def _split(pairs: list[Pair]) -> tuple[list[Pair], list[Pair]]:
    """Shuffle each (language, label, class) with SEED and cut it in two, the odd one out going
    to the half that has fewer so far: both halves hold every class of both languages."""
    rng = random.Random(SEED)
    strata: dict[tuple[str, str, str], list[Pair]] = {}
    for pair in pairs:
        strata.setdefault((pair.language, pair.label, pair.kind), []).append(pair)
    dev: list[Pair] = []
    test: list[Pair] = []
    for key in sorted(strata):
        stratum = strata[key]
        rng.shuffle(stratum)
        cut = len(stratum) // 2 + (len(stratum) % 2 if len(dev) <= len(test) else 0)
        dev += stratum[:cut]
        test += stratum[cut:]
    return dev, test


DEV, TEST = _split(PAIRS)
