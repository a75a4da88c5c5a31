"""Pairs of memories as a reflection writes them, for the supersession criterion
(memory/write/supersede.py): true updates, where the second replaces the first (a move, a new
job, a changed taste, a correction), and look-alikes, two facts that both stay true (two
appointments, two pets, two tastes) which a careless model might still say replace each other.

Used by tests/memory/write/test_supersede.py and `make bench-truth` (bench/truth/replace.py).
The replacement rule was written with these pairs in view: they are checked, not a measure.
"""

UPDATES: list[tuple[str, str]] = [
    # moves
    ("Habite à Lyon", "Vient d'emménager à Paris"),
    ("Vit à Lille avec sa sœur", "A déménagé à Rennes"),
    ("Lives in Leeds", "Just moved to Bristol"),
    ("Rents a flat in Camden", "Now lives in a house in Brixton"),
    # jobs
    ("Travaille comme infirmière à Nantes", "A trouvé un nouveau poste de libraire"),
    ("Works as a barista", "Started a new job as a nurse"),
    ("Est au chômage depuis mars", "A été embauchée chez un éditeur"),
    ("Works at a bank in Leeds", "Quit the bank and is a freelance designer"),
    # partners
    ("A un copain qui s'appelle Marc", "A rompu avec Marc"),
    ("Is married to Tom", "Divorced Tom last spring"),
    ("Est célibataire", "Sort avec une fiancée, Inès"),
    # studies
    ("Fait des études de droit", "A changé de fac pour étudier la médecine"),
    ("Studies history at university", "Switched her major to physics"),
    # changed tastes
    ("Aime le café noir", "Ne boit plus de café noir, seulement du thé"),
    ("Adore les sushis", "N'aime plus les sushis depuis une intoxication"),
    ("Likes jazz", "No longer likes jazz, prefers rock"),
    ("Loves horror films", "Can't stand horror films anymore"),
    # corrections
    ("A un chat qui s'appelle Misha", "Son chat s'appelle en fait Mitsou, pas Misha"),
    ("Has a cat named Misha", "Her cat Misha is actually a female"),
    ("Son frère Paul a 30 ans", "Son frère Paul a 32 ans"),
    ("Has a dentist appointment on Tuesday", "The dentist appointment moved to Thursday"),
    ("A rendez-vous chez le dentiste mardi", "Le rendez-vous chez le dentiste est reporté à jeudi"),
    ("Plays the cello in an amateur orchestra", "Stopped playing the cello"),
    ("Joue du violoncelle dans un orchestre", "A arrêté le violoncelle"),
]

LOOKALIKES: list[tuple[str, str]] = [
    # two appointments
    ("Has a dentist appointment on Tuesday", "Has a hairdresser appointment on Friday"),
    ("A rendez-vous chez le dentiste mardi", "A rendez-vous chez le coiffeur vendredi"),
    ("Has a job interview on Friday", "Has a doctor's appointment on Monday"),
    # two pets
    ("Has a cat named Misha", "Has a dog named Rex"),
    ("A un chat qui s'appelle Misha", "A un chien nommé Rex"),
    ("Has two cats", "Has a parrot called Coco"),
    # two tastes
    ("Likes jazz", "Likes rock"),
    ("Aime le café noir", "Aime le chocolat chaud"),
    ("Adore les sushis", "Adore les films d'horreur"),
    ("Loves horror films", "Loves hiking in the Alps"),
    # two people
    ("Son frère Paul a 30 ans", "Sa sœur Léa a 25 ans"),
    ("Has a friend called Sam", "Has a friend called Priya"),
    ("A une amie qui s'appelle Inès", "A un ami qui s'appelle Hugo"),
    # two plans, two things
    ("Va au concert de Muse samedi", "Va au cinéma dimanche"),
    ("Is learning Spanish", "Is learning to swim"),
    ("Plays the cello in an amateur orchestra", "Plays football on Sundays"),
    ("Joue du violoncelle dans un orchestre", "Joue au tennis le mercredi"),
    ("Has a sister in Lyon", "Has a brother in Lille"),
    # about work, but not the person's job: the known false positives of the topic rule
    ("Works as a nurse", "Has a job interview for her brother's company on Friday"),
    ("Travaille comme infirmière", "Son mari travaille dans une banque"),
    ("Lives in Leeds", "Her parents live in Cornwall"),
]
