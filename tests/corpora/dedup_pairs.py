"""Memories as a reflection writes them, grouped: texts in one group are variants of one fact.

Every pair across groups is a pair of distinct facts. Used by the dedup tests and by
bench/dedup/minlen.py, which reads the minimum length at which difflib's ratio can be trusted.
Short groups are deliberate: at small lengths unrelated texts share most of their characters.
"""

GROUPS: list[list[str]] = [
    ["Aime le thé", "Aime le thé vert"],
    ["Aime le thym"],
    ["A un chat", "Possède un chat"],
    ["A un chien"],
    ["Vit à Lyon", "Habite à Lyon"],
    ["Vit à Lille"],
    ["Likes tea", "Enjoys tea"],
    ["Likes jazz"],
    ["Has a cat named Félix", "Has a cat called Félix", "Owns a cat named Félix"],
    ["Has a hat named Félix"],
    ["Lives in Leeds", "Lives in Leeds now"],
    ["Lives in Lens"],
    [
        "Marie travaille comme infirmière à l'hôpital de Nantes",
        "Marie est infirmière à l'hôpital de Nantes",
        "Marie travaille comme infirmière à l'hôpital de Nantes depuis peu",
    ],
    ["Marie travaille comme libraire à la médiathèque de Nantes"],
    [
        "Son frère Paul fait des études de médecine à Toulouse",
        "Son frère Paul étudie la médecine à Toulouse",
    ],
    ["Son frère Paul fait des études de droit à Bordeaux"],
    [
        "Elle a peur de l'avion depuis un vol difficile",
        "Elle a peur de l'avion depuis un vol très difficile",
    ],
    ["Elle a peur des chiens depuis une morsure"],
    [
        "Elle joue du violoncelle dans un orchestre amateur",
        "Elle joue du violoncelle dans un petit orchestre amateur",
    ],
    ["Elle joue du violon dans un orchestre de quartier"],
    [
        "Prefers to be called Sam rather than Samantha",
        "Prefers being called Sam rather than Samantha",
    ],
    ["Prefers to be called Alex rather than Alexander"],
    [
        "His daughter Emma just started primary school",
        "His daughter Emma has just started primary school",
    ],
    ["His daughter Ella just started secondary school"],
    [
        "Is training for a half marathon in the spring",
        "Is training for a half-marathon this spring",
    ],
    ["Is training for a triathlon in the autumn"],
    [
        "Works night shifts at a bakery on weekends",
        "Works night shifts at the bakery on weekends",
    ],
    ["Works day shifts at a bookshop on weekdays"],
    [
        "Is learning Japanese to read manga in the original",
        "Is learning Japanese so as to read manga in the original",
    ],
    ["Is learning Korean to watch dramas without subtitles"],
    ["Aime le café noir sans sucre", "Aime le café noir, sans sucre"],
    ["Aime le café au lait sucré"],
    ["Déteste les réunions du lundi matin", "Déteste les réunions du lundi matin au travail"],
    ["Déteste les réunions du vendredi soir"],
    ["Garde un carnet de rêves au chevet", "Garde un carnet de rêves près de son lit"],
    ["Garde un carnet de recettes en cuisine"],
    ["Keeps a dream journal by the bed", "Keeps a dream journal next to the bed"],
    ["Keeps a recipe journal in the kitchen"],
    ["Plays chess online most evenings", "Plays online chess most evenings"],
    ["Plays guitar online most weekends"],
    # A name that opens one wording and sits inside the other is the same name.
    ["Lina's café is on Rue Cler", "On Rue Cler is Lina's café"],
    ["Emma teaches piano at the conservatoire", "At the conservatoire, Emma teaches piano"],
    ["Marie habite à Lyon depuis trois ans", "Depuis trois ans, Marie habite à Lyon"],
    [
        "Sophie est sa meilleure amie depuis le lycée",
        "Sa meilleure amie depuis le lycée est Sophie",
    ],
    ["Tom walks his dog Rex every morning", "Every morning Tom walks his dog Rex"],
    # ...and another name, or the same names in the other roles, is another fact.
    ["At the conservatoire, Ella teaches piano"],
    ["Depuis trois ans, Julie habite à Lyon"],
    ["Sa meilleure amie depuis le lycée est Julie"],
    ["Emma gave Paul her old piano"],
    ["Paul gave Emma his old piano"],
]
