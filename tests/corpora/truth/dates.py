"""Relative dates in memories and time windows in messages, written apart from the rules
(memory.lexicon.dates): how people write in chat (typos, missing accents, abbreviations, phonetic
spellings, first and third person) and how a reflection notes a memory (short statements).

Each case has its own instant it was said at (a weekday, an hour and a time zone among those
below) and a tag naming its class. DATES: (tag, said, memory text, the days its relative dates
mean as `Span.label` writes them; () when it names none). WINDOWS: (tag, said, message,
[first day, day after the last) it asks about, or None).

What the labels decide: a weekday in a past-tense sentence is the last such day, one to seven
days back (the same weekday as the day said is a week ago: today would be "today"); in any
other sentence the next one, one to seven days ahead. "this weekend" in a past sentence said
from Monday to Friday is the weekend just gone. A title or a name is not a date. In a message, a
bare weekday or "this weekend" asks about the past only in a past-tense sentence; a month part
is the 1st to the 10th (early, « début »), the 11th to the 20th (mid, « mi- »), the 21st to the
end (late, « fin »).

Written before any rule was read off it, then halved by a seeded shuffle per kind, language and
label (a date or none) into DEV (the rules were tuned on its misses) and TEST (kept apart).
"""

from __future__ import annotations

import random
from typing import NamedTuple, TypeVar

# The instants said at, local time, and their zones.
SAT_PARIS = ("2026-12-12T18:30", "Europe/Paris")
MON_NEW_YORK = ("2026-12-14T09:15", "America/New_York")
SUN_PARIS = ("2026-11-29T21:00", "Europe/Paris")
WED_NEW_YORK = ("2026-12-09T13:00", "America/New_York")
THU_PARIS = ("2027-01-07T08:00", "Europe/Paris")
TUE_NEW_YORK = ("2026-10-27T23:30", "America/New_York")
FRI_PARIS = ("2026-12-04T17:00", "Europe/Paris")
MON_PARIS_AFTER_DST = ("2026-03-30T10:00", "Europe/Paris")


class DateCase(NamedTuple):
    text: str
    said: tuple[str, str]  # local ISO time, IANA zone
    expected: tuple[str, ...]
    language: str
    tag: str


class WindowCase(NamedTuple):
    text: str
    said: tuple[str, str]
    expected: tuple[str, str] | None
    language: str
    tag: str


FR_DATES: list[tuple[str, tuple[str, str], str, tuple[str, ...]]] = [
    ("chat-spelling", SAT_PARIS, "A un exam dem1 matin", ("2026-12-13",)),
    ("chat-spelling", MON_NEW_YORK, "doit rendre son dossier 2main", ("2026-12-15",)),
    ("chat-spelling", SUN_PARIS, "Va chez le coiffeur ajd", ("2026-11-29",)),
    ("chat-spelling", WED_NEW_YORK, "Voit sa sœur cet aprem", ("2026-12-09",)),
    ("chat-spelling", FRI_PARIS, "jsuis de garde cet aprèm, pas dispo", ("2026-12-04",)),
    ("chat-spelling", THU_PARIS, "A son permis demain aprem", ("2027-01-08",)),
    ("chat-spelling", TUE_NEW_YORK, "Passe un entretien auj à 14h", ("2026-10-27",)),
    ("chat-spelling", THU_PARIS, "Part en week-end dmain avec Karim", ("2027-01-08",)),
    ("chat-spelling", SUN_PARIS, "Doit appeler sa banque aujourdhui", ("2026-11-29",)),
    ("day-after", SAT_PARIS, "Rentre de vacances aprés-demain", ("2026-12-14",)),
    ("day-after", MON_NEW_YORK, "a piscine apres demain", ("2026-12-16",)),
    ("day-before", WED_NEW_YORK, "A vu le médecin avant hier", ("2026-12-07",)),
    ("plain-day", FRI_PARIS, "Joue au foot ce soir avec ses potes", ("2026-12-04",)),
    ("plain-day", MON_PARIS_AFTER_DST, "Fête son anniv demain", ("2026-03-31",)),
    ("past-weekday", SAT_PARIS, "Est allée au cinéma mardi", ("2026-12-08",)),
    ("past-weekday", MON_NEW_YORK, "A mangé chez ses parents dimanche", ("2026-12-13",)),
    ("past-weekday", WED_NEW_YORK, "On a fêté son anniversaire vendredi", ("2026-12-04",)),
    ("past-weekday", SUN_PARIS, "S'est disputé avec son coloc lundi", ("2026-11-23",)),
    ("past-weekday", THU_PARIS, "C'était son dernier jour de boulot jeudi", ("2026-12-31",)),
    ("past-weekday", TUE_NEW_YORK, "A raté son train mercredi soir", ("2026-10-21",)),
    ("past-weekday", SAT_PARIS, "J'ai couru 10 km samedi", ("2026-12-05",)),
    ("past-weekday", WED_NEW_YORK, "Elle était malade lundi", ("2026-12-07",)),
    ("past-weekday", MON_NEW_YORK, "Samedi, il a perdu son portefeuille", ("2026-12-12",)),
    ("past-weekday", FRI_PARIS, "N'a pas dormi de la nuit jeudi", ("2026-12-03",)),
    ("past-weekday", MON_PARIS_AFTER_DST, "Est rentrée de Lyon dimanche soir", ("2026-03-29",)),
    ("past-weekday", FRI_PARIS, "A eu 30 ans dimanche", ("2026-11-29",)),
    ("past-weekday", WED_NEW_YORK, "A fait un malaise jeudi au travail", ("2026-12-03",)),
    ("past-weekday", MON_NEW_YORK, "Son copain l'a quittée samedi", ("2026-12-12",)),
    ("past-weekday", THU_PARIS, "a croisé son ex mercredi au supermarché", ("2027-01-06",)),
    ("last-weekday", FRI_PARIS, "A reçu une promotion mardi dernier", ("2026-12-01",)),
    ("future-weekday", SAT_PARIS, "A un rendez-vous chez l'ophtalmo jeudi", ("2026-12-17",)),
    ("future-weekday", WED_NEW_YORK, "Va voir un concert samedi", ("2026-12-12",)),
    ("future-weekday", SUN_PARIS, "Commence son stage lundi", ("2026-11-30",)),
    ("future-weekday", MON_NEW_YORK, "A réservé un resto pour vendredi", ("2026-12-18",)),
    ("future-weekday", THU_PARIS, "A prévu de partir mercredi", ("2027-01-13",)),
    ("future-weekday", FRI_PARIS, "Dit qu'elle passerait mardi", ("2026-12-08",)),
    ("future-weekday", TUE_NEW_YORK, "Son vol a été décalé à dimanche", ("2026-11-01",)),
    ("future-weekday", MON_PARIS_AFTER_DST, "A rdv chez le kiné vendredi", ("2026-04-03",)),
    ("future-weekday", MON_NEW_YORK, "Doit rendre un mémoire mardi", ("2026-12-15",)),
    ("future-weekday", SUN_PARIS, "Aura les résultats vendredi", ("2026-12-04",)),
    ("next-weekday", WED_NEW_YORK, "Part à Rome jeudi prochain", ("2026-12-10",)),
    ("next-weekday", SAT_PARIS, "Va à l'anniv de sa nièce samedi prochain", ("2026-12-19",)),
    ("mixed", SAT_PARIS, "J'ai un partiel demain et un oral jeudi", ("2026-12-13", "2026-12-17")),
    (
        "mixed",
        WED_NEW_YORK,
        "A fini ses partiels hier et part en vacances samedi",
        ("2026-12-08", "2026-12-12"),
    ),
    ("ago", SAT_PARIS, "A adopté un chat il y a trois jours", ("2026-12-09",)),
    ("ago", MON_NEW_YORK, "S'est cassé le poignet il y a 2 semaines", ("2026-11-30",)),
    ("ago", FRI_PARIS, "a commencé le yoga y a deux jours", ("2026-12-02",)),
    ("ago", THU_PARIS, "A quitté son job il y a un mois", ("2026-12-07",)),
    ("ago", WED_NEW_YORK, "A déménagé il y a 4 jours", ("2026-12-05",)),
    ("period", THU_PARIS, "Passe son bac l'année prochaine", ("2028",)),
    ("period", MON_NEW_YORK, "A changé de travail le mois dernier", ("2026-11",)),
    ("period", SAT_PARIS, "Part au ski la semaine prochaine", ("2026-12-14/2026-12-20",)),
    ("period", WED_NEW_YORK, "A été malade toute la semaine dernière", ("2026-11-30/2026-12-06",)),
    (
        "weekend-past",
        MON_NEW_YORK,
        "Est allé voir ses parents ce week-end",
        ("2026-12-12/2026-12-13",),
    ),
    ("weekend", WED_NEW_YORK, "Fait une randonnée ce week-end", ("2026-12-12/2026-12-13",)),
    ("weekend-past", SUN_PARIS, "On a fait la fête ce weekend", ("2026-11-28/2026-11-29",)),
    (
        "period",
        TUE_NEW_YORK,
        "A passé le week-end dernier chez sa tante",
        ("2026-10-24/2026-10-25",),
    ),
    ("in-units", TUE_NEW_YORK, "Se marie dans 3 mois", ("2027-01-27",)),
    ("in-units", FRI_PARIS, "Passe le code dans 10 jours", ("2026-12-14",)),
    ("in-units", MON_PARIS_AFTER_DST, "Rentre du Japon dans huit jours", ("2026-04-06",)),
    ("title", SAT_PARIS, "A adoré le film « Demain » de Cyril Dion", ()),
    ("title", MON_NEW_YORK, "Écoute en boucle la chanson Hier encore d'Aznavour", ()),
    ("title", FRI_PARIS, 'A regardé "Demain tout commence" avec Omar Sy', ()),
    ("title", SUN_PARIS, "Relit le roman Demain les chiens de Simak", ()),
    ("title", WED_NEW_YORK, "A lu « Hier » d'Agota Kristof", ()),
    ("title", THU_PARIS, "Veut revoir le film Aujourd'hui au ciné", ()),
    ("name", MON_PARIS_AFTER_DST, "A un chat qui s'appelle Mardi", ()),
    ("name", TUE_NEW_YORK, "Joue dans un groupe qui s'appelle Samedi Soir", ()),
    ("name", SAT_PARIS, "Adore le festival Tomorrowland", ()),
    ("habit", MON_NEW_YORK, "Aime les dimanches en famille", ()),
    ("habit", SUN_PARIS, "Travaille le samedi matin", ()),
    ("habit", WED_NEW_YORK, "Prend le train tous les lundis", ()),
    ("habit", FRI_PARIS, "Fait du vélo le dimanche", ()),
    ("habit", THU_PARIS, "Voit sa psy un mardi sur deux", ()),
    ("habit", SAT_PARIS, "Déteste les lundis matin", ()),
    ("habit", TUE_NEW_YORK, "Bosse du lundi au vendredi dans une banque", ()),
    ("none", MON_PARIS_AFTER_DST, "Habite à Lyon depuis trois ans", ()),
    ("none", SAT_PARIS, "A un abonnement à la salle de sport", ()),
    ("none", MON_NEW_YORK, "A grandi à Marseille", ()),
    ("none", SUN_PARIS, "Est végétarienne", ()),
    ("none", WED_NEW_YORK, "A deux enfants, Léo et Jeanne", ()),
    ("none", FRI_PARIS, "Regarde Quotidien tous les soirs", ()),
    ("none", THU_PARIS, "Aime la lumière du matin", ()),
    ("none", TUE_NEW_YORK, "a peur des chiens depuis qu'elle est petite", ()),
]

EN_DATES: list[tuple[str, tuple[str, str], str, tuple[str, ...]]] = [
    ("chat-spelling", SAT_PARIS, "has a dentist appt tmrw", ("2026-12-13",)),
    ("chat-spelling", MON_NEW_YORK, "Exam tmr morning, super nervous", ("2026-12-15",)),
    ("chat-spelling", WED_NEW_YORK, "moving into the new flat 2moro", ("2026-12-10",)),
    ("chat-spelling", FRI_PARIS, "Is seeing her therapist tomorow", ("2026-12-05",)),
    ("chat-spelling", SUN_PARIS, "Has a date tonite", ("2026-11-29",)),
    ("chat-spelling", THU_PARIS, "got her results back yday", ("2027-01-06",)),
    ("chat-spelling", TUE_NEW_YORK, "Her flight is tommorow night", ("2026-10-28",)),
    ("chat-spelling", MON_PARIS_AFTER_DST, "Has band practice 2nite", ("2026-03-30",)),
    ("chat-spelling", WED_NEW_YORK, "Job interview this arvo", ("2026-12-09",)),
    ("day-after", SAT_PARIS, "Is babysitting her nephew day after tomorrow", ("2026-12-14",)),
    (
        "day-after",
        SUN_PARIS,
        "Has a vet appointment day after tomorrow for the dog",
        ("2026-12-01",),
    ),
    ("day-before", MON_NEW_YORK, "Ran into her ex the day before yesterday", ("2026-12-12",)),
    ("day-before", FRI_PARIS, "Broke up with her bf day before yesterday", ("2026-12-02",)),
    ("plain-day", MON_PARIS_AFTER_DST, "Got a parking ticket yesterday", ("2026-03-29",)),
    ("plain-day", MON_PARIS_AFTER_DST, "Is off work today", ("2026-03-30",)),
    ("past-weekday", SAT_PARIS, "Went to a concert on Tuesday", ("2026-12-08",)),
    ("past-weekday", MON_NEW_YORK, "Had dinner with his parents on Sunday", ("2026-12-13",)),
    ("past-weekday", WED_NEW_YORK, "Celebrated her birthday Friday", ("2026-12-04",)),
    ("past-weekday", SUN_PARIS, "Argued with her roommate on Monday", ("2026-11-23",)),
    ("past-weekday", THU_PARIS, "Was sick on Thursday", ("2026-12-31",)),
    ("past-weekday", TUE_NEW_YORK, "Missed the train Wednesday evening", ("2026-10-21",)),
    ("past-weekday", SAT_PARIS, "I ran 10k on Saturday", ("2026-12-05",)),
    ("past-weekday", MON_NEW_YORK, "On Saturday she lost her wallet", ("2026-12-12",)),
    ("past-weekday", FRI_PARIS, "Didn't sleep at all Thursday night", ("2026-12-03",)),
    ("past-weekday", MON_PARIS_AFTER_DST, "Got back from Lyon on Sunday evening", ("2026-03-29",)),
    ("past-weekday", WED_NEW_YORK, "Saw Paul and Léa on Monday", ("2026-12-07",)),
    ("past-weekday", THU_PARIS, "Met his new boss on Wednesday", ("2027-01-06",)),
    ("past-weekday", FRI_PARIS, "Her cat died on Tuesday", ("2026-12-01",)),
    ("past-weekday", SAT_PARIS, "Took her driving test Friday and passed", ("2026-12-11",)),
    ("past-weekday", FRI_PARIS, "Turned 30 on Sunday", ("2026-11-29",)),
    ("past-weekday", WED_NEW_YORK, "Had a panic attack on thursday", ("2026-12-03",)),
    ("past-weekday", MON_NEW_YORK, "Her boyfriend dumped her on saturday", ("2026-12-12",)),
    ("future-weekday", SAT_PARIS, "Has an eye appointment Thursday", ("2026-12-17",)),
    ("future-weekday", WED_NEW_YORK, "Is going to a gig on Saturday", ("2026-12-12",)),
    ("future-weekday", SUN_PARIS, "Starts her internship Monday", ("2026-11-30",)),
    ("future-weekday", MON_NEW_YORK, "Booked a table for Friday", ("2026-12-18",)),
    ("future-weekday", FRI_PARIS, "Said she'd come over on Tuesday", ("2026-12-08",)),
    ("future-weekday", TUE_NEW_YORK, "Her flight got moved to Sunday", ("2026-11-01",)),
    ("future-weekday", THU_PARIS, "Will call his mom on Wednesday", ("2027-01-13",)),
    ("future-weekday", MON_PARIS_AFTER_DST, "Is meeting a recruiter on fri", ("2026-04-03",)),
    ("next-weekday", SAT_PARIS, "Has a dentist appt next tues", ("2026-12-15",)),
    ("next-weekday", SAT_PARIS, "Is going to his niece's party next Saturday", ("2026-12-19",)),
    ("mixed", SAT_PARIS, "Has a paper due tmrw and a quiz on thurs", ("2026-12-13", "2026-12-17")),
    (
        "mixed",
        WED_NEW_YORK,
        "Finished his exams yesterday and flies home on Saturday",
        ("2026-12-08", "2026-12-12"),
    ),
    ("ago", SAT_PARIS, "Adopted a cat three days ago", ("2026-12-09",)),
    ("ago", MON_NEW_YORK, "Broke her wrist 2 weeks ago", ("2026-11-30",)),
    ("ago", FRI_PARIS, "Started yoga a couple days ago", ("2026-12-02",)),
    ("ago", THU_PARIS, "Quit her job a month ago", ("2026-12-07",)),
    ("ago", WED_NEW_YORK, "Moved out 4 days ago", ("2026-12-05",)),
    ("period", SAT_PARIS, "Is going skiing next week", ("2026-12-14/2026-12-20",)),
    ("period", WED_NEW_YORK, "Was ill all last week", ("2026-11-30/2026-12-06",)),
    ("weekend-past", MON_NEW_YORK, "Visited her parents this weekend", ("2026-12-12/2026-12-13",)),
    ("weekend", WED_NEW_YORK, "Is going hiking this weekend", ("2026-12-12/2026-12-13",)),
    ("weekend-past", SUN_PARIS, "Went clubbing this weekend", ("2026-11-28/2026-11-29",)),
    ("period", TUE_NEW_YORK, "Spent last weekend at her aunt's", ("2026-10-24/2026-10-25",)),
    ("in-units", TUE_NEW_YORK, "Is getting married in 3 months", ("2027-01-27",)),
    ("in-units", FRI_PARIS, "Takes her driving test in 10 days", ("2026-12-14",)),
    ("period", MON_NEW_YORK, "Changed jobs last month", ("2026-11",)),
    ("period", THU_PARIS, "Is retaking the exam next year", ("2028",)),
    ("title", SUN_PARIS, "Rewatched The Day After Tomorrow last night", ("2026-11-28",)),
    ("title", MON_NEW_YORK, "Loves the song Yesterday by the Beatles", ()),
    ("title", WED_NEW_YORK, "Is reading Tomorrow, and Tomorrow, and Tomorrow", ()),
    ("title", FRI_PARIS, "Watched Edge of Tomorrow with her brother", ()),
    ("title", THU_PARIS, "Plays a cover of Yesterday on guitar", ()),
    ("title", SAT_PARIS, "Watches the Today show every morning", ()),
    ("title", TUE_NEW_YORK, "Listened to 'Yesterday Once More' on repeat", ()),
    ("title", MON_PARIS_AFTER_DST, "Is a big fan of The Tonight Show", ()),
    ("name", SAT_PARIS, "Went to Tomorrowland in Belgium", ()),
    ("name", SUN_PARIS, "Her favourite band is Tomorrow X Together", ()),
    ("name", MON_NEW_YORK, "Has a dog named Tuesday", ()),
    ("habit", WED_NEW_YORK, "Works Monday to Friday at a bakery", ()),
    ("habit", THU_PARIS, "Hates Mondays", ()),
    ("habit", FRI_PARIS, "Goes swimming every Sunday", ()),
    ("habit", TUE_NEW_YORK, "Plays five-a-side on Thursdays", ()),
    ("habit", MON_PARIS_AFTER_DST, "Does a Sunday roast for the family", ()),
    ("none", SAT_PARIS, "Lives in Leeds with her girlfriend", ()),
    ("none", MON_NEW_YORK, "Is allergic to peanuts", ()),
    ("none", SUN_PARIS, "Grew up in Ohio", ()),
    ("none", WED_NEW_YORK, "Prefers the morning shift", ()),
    ("none", THU_PARIS, "Has two kids and a cat", ()),
    ("none", TUE_NEW_YORK, "Thinks the weekend is too short", ()),
]

FR_WINDOWS: list[tuple[str, tuple[str, str], str, tuple[str, str] | None]] = [
    (
        "plain-day",
        SAT_PARIS,
        "tu te rappelles ce que je t'ai dit hier ?",
        ("2026-12-11", "2026-12-12"),
    ),
    (
        "plain-day",
        MON_NEW_YORK,
        "qu'est-ce que je t'ai raconté avant-hier",
        ("2026-12-12", "2026-12-13"),
    ),
    ("weekday-question", SAT_PARIS, "je t'ai dit quoi mardi ?", ("2026-12-08", "2026-12-09")),
    (
        "weekday-question",
        MON_NEW_YORK,
        "qu'est ce que j'ai dit samedi",
        ("2026-12-12", "2026-12-13"),
    ),
    ("weekday-question", WED_NEW_YORK, "de quoi on a parlé lundi", ("2026-12-07", "2026-12-08")),
    (
        "weekday-question",
        SUN_PARIS,
        "tu te souviens de ce que je t'ai dit dimanche ?",
        ("2026-11-22", "2026-11-23"),
    ),
    (
        "weekday-question",
        SAT_PARIS,
        "qu'est-ce que je t'ai dit vendredi soir",
        ("2026-12-11", "2026-12-12"),
    ),
    (
        "weekday-question",
        THU_PARIS,
        "on s'est parlé mercredi je crois",
        ("2027-01-06", "2027-01-07"),
    ),
    ("last-weekday", FRI_PARIS, "tu te souviens de jeudi dernier ?", ("2026-12-03", "2026-12-04")),
    (
        "last-weekday",
        WED_NEW_YORK,
        "je t'avais dit quoi dimanche dernier",
        ("2026-12-06", "2026-12-07"),
    ),
    (
        "weekend-past",
        MON_NEW_YORK,
        "on a parlé de quoi ce week-end ?",
        ("2026-12-12", "2026-12-14"),
    ),
    (
        "weekend-past",
        MON_PARIS_AFTER_DST,
        "qu'est-ce que je t'ai dit ce weekend",
        ("2026-03-28", "2026-03-30"),
    ),
    ("weekend-past", SAT_PARIS, "je t'ai raconté quoi ce week-end ?", ("2026-12-12", "2026-12-14")),
    (
        "period",
        WED_NEW_YORK,
        "tu te rappelles ce que je t'ai dit le week-end dernier ?",
        ("2026-12-05", "2026-12-07"),
    ),
    ("month-part", SAT_PARIS, "je t'en ai parlé mi-novembre", ("2026-11-11", "2026-11-21")),
    ("month-part", MON_NEW_YORK, "c'était fin novembre je crois", ("2026-11-21", "2026-12-01")),
    ("month-part", THU_PARIS, "je t'avais dit un truc début janvier", ("2027-01-01", "2027-01-11")),
    ("month-part", SAT_PARIS, "on en a discuté à la mi-octobre", ("2026-10-11", "2026-10-21")),
    (
        "month-part",
        TUE_NEW_YORK,
        "je t'ai parlé de mon projet fin septembre",
        ("2026-09-21", "2026-10-01"),
    ),
    ("month", SAT_PARIS, "je t'ai parlé de ça courant novembre", ("2026-11-01", "2026-12-01")),
    ("month", FRI_PARIS, "en mars je t'ai dit où j'habitais", ("2026-03-01", "2026-04-01")),
    ("month", MON_NEW_YORK, "au mois d'août on a parlé de vacances", ("2026-08-01", "2026-09-01")),
    ("today-asked", WED_NEW_YORK, "je t'ai dit quoi cet aprem ?", ("2026-12-09", "2026-12-10")),
    ("today-asked", FRI_PARIS, "qu'est-ce que je t'ai dit ajd", ("2026-12-04", "2026-12-05")),
    (
        "today-asked",
        SUN_PARIS,
        "qu'est-ce que je t'ai dit aujourd'hui ?",
        ("2026-11-29", "2026-11-30"),
    ),
    (
        "today-asked",
        MON_PARIS_AFTER_DST,
        "ce matin je t'ai dit un truc",
        ("2026-03-30", "2026-03-31"),
    ),
    ("plain-day", SAT_PARIS, "hier soir je t'ai raconté un secret", ("2026-12-11", "2026-12-12")),
    ("plain-day", SUN_PARIS, "je t'ai dit quoi hier aprem", ("2026-11-28", "2026-11-29")),
    (
        "plain-day",
        FRI_PARIS,
        "c'était quoi le film dont je t'ai parlé hier",
        ("2026-12-03", "2026-12-04"),
    ),
    ("ago", SAT_PARIS, "je t'ai dit quoi il y a 3 jours", ("2026-12-09", "2026-12-10")),
    (
        "ago",
        MON_NEW_YORK,
        "y a deux semaines je t'ai parlé de ma sœur",
        ("2026-11-30", "2026-12-07"),
    ),
    ("ago", THU_PARIS, "il y a un mois je t'ai raconté mon voyage", ("2026-12-01", "2027-01-01")),
    ("ago", SAT_PARIS, "tu te rappelles ce que j'ai dit ya 2 jours", ("2026-12-10", "2026-12-11")),
    (
        "ago",
        MON_PARIS_AFTER_DST,
        "y a 3 jours je t'ai parlé d'un resto",
        ("2026-03-27", "2026-03-28"),
    ),
    (
        "period",
        WED_NEW_YORK,
        "la semaine dernière je t'ai parlé de quoi ?",
        ("2026-11-30", "2026-12-07"),
    ),
    (
        "period",
        TUE_NEW_YORK,
        "le mois dernier je t'ai dit un truc important",
        ("2026-09-01", "2026-10-01"),
    ),
    ("period", THU_PARIS, "l'an dernier je t'avais parlé de Léa", ("2026-01-01", "2027-01-01")),
    ("period", TUE_NEW_YORK, "je t'ai dit quoi cette semaine ?", ("2026-10-26", "2026-11-02")),
    (
        "period-part",
        WED_NEW_YORK,
        "plus tôt cette semaine je t'ai parlé de mon chat",
        ("2026-12-07", "2026-12-10"),
    ),
    (
        "period-part",
        MON_NEW_YORK,
        "au début du mois je t'ai parlé d'un projet",
        ("2026-12-01", "2026-12-11"),
    ),
    (
        "period-part",
        FRI_PARIS,
        "en début de semaine je t'ai dit un truc",
        ("2026-11-30", "2026-12-03"),
    ),
    ("not-asked", SAT_PARIS, "je suis crevé aujourd'hui", None),
    ("not-asked", MON_NEW_YORK, "je sors ce soir", None),
    ("future", WED_NEW_YORK, "à demain !", None),
    ("future", FRI_PARIS, "dem1 j'ai un exam", None),
    ("future", WED_NEW_YORK, "tu fais quoi ce week-end ?", None),
    ("future", WED_NEW_YORK, "tu fais quoi samedi ?", None),
    ("future", MON_NEW_YORK, "je te raconte mardi", None),
    ("future", SUN_PARIS, "la semaine prochaine je pars à Rome", None),
    ("none", THU_PARIS, "salut ça va ?", None),
    ("none", TUE_NEW_YORK, "j'adore le mois de mai", None),
    ("none", MON_PARIS_AFTER_DST, "la mission vers Mars est reportée", None),
    ("habit", SAT_PARIS, "le lundi je vais à la piscine", None),
    ("habit", FRI_PARIS, "je bosse du lundi au vendredi", None),
    ("title", SUN_PARIS, "on a regardé Demain ensemble, trop bien", None),
]

EN_WINDOWS: list[tuple[str, tuple[str, str], str, tuple[str, str] | None]] = [
    ("plain-day", SAT_PARIS, "what did I tell you yesterday?", ("2026-12-11", "2026-12-12")),
    ("chat-spelling", MON_NEW_YORK, "what did I say yday", ("2026-12-13", "2026-12-14")),
    (
        "weekday-question",
        SAT_PARIS,
        "remember what I said on Tuesday?",
        ("2026-12-08", "2026-12-09"),
    ),
    (
        "weekday-question",
        MON_NEW_YORK,
        "what did I tell you Saturday",
        ("2026-12-12", "2026-12-13"),
    ),
    (
        "weekday-question",
        WED_NEW_YORK,
        "what did we talk about on Monday?",
        ("2026-12-07", "2026-12-08"),
    ),
    (
        "weekday-question",
        SUN_PARIS,
        "do you remember what I told you on Sunday?",
        ("2026-11-22", "2026-11-23"),
    ),
    ("weekday-question", SAT_PARIS, "what did I say Friday night", ("2026-12-11", "2026-12-12")),
    ("weekday-question", THU_PARIS, "we talked on Wednesday I think", ("2027-01-06", "2027-01-07")),
    ("last-weekday", FRI_PARIS, "remember last Thursday?", ("2026-12-03", "2026-12-04")),
    ("last-weekday", WED_NEW_YORK, "what did I tell you last Sunday", ("2026-12-06", "2026-12-07")),
    (
        "weekend-past",
        MON_NEW_YORK,
        "what did we chat about this weekend?",
        ("2026-12-12", "2026-12-14"),
    ),
    (
        "weekend-past",
        MON_PARIS_AFTER_DST,
        "what did I tell you this weekend",
        ("2026-03-28", "2026-03-30"),
    ),
    ("weekend-past", SAT_PARIS, "what did I say this weekend?", ("2026-12-12", "2026-12-14")),
    (
        "weekend-past",
        MON_PARIS_AFTER_DST,
        "what did I tell you this past weekend",
        ("2026-03-28", "2026-03-30"),
    ),
    ("period", WED_NEW_YORK, "remember what I said last weekend?", ("2026-12-05", "2026-12-07")),
    ("month-part", SAT_PARIS, "I told you about it mid-November", ("2026-11-11", "2026-11-21")),
    ("month-part", MON_NEW_YORK, "it was late November I think", ("2026-11-21", "2026-12-01")),
    (
        "month-part",
        THU_PARIS,
        "I mentioned something in early January",
        ("2027-01-01", "2027-01-11"),
    ),
    ("month-part", SAT_PARIS, "we discussed it in mid October", ("2026-10-11", "2026-10-21")),
    (
        "month-part",
        TUE_NEW_YORK,
        "I told you about my project at the end of September",
        ("2026-09-21", "2026-10-01"),
    ),
    ("month", SAT_PARIS, "we talked about it in November", ("2026-11-01", "2026-12-01")),
    ("month", FRI_PARIS, "in March I told you where I lived", ("2026-03-01", "2026-04-01")),
    (
        "month",
        MON_NEW_YORK,
        "back in August we talked about holidays",
        ("2026-08-01", "2026-09-01"),
    ),
    (
        "today-asked",
        WED_NEW_YORK,
        "what did I tell you this afternoon?",
        ("2026-12-09", "2026-12-10"),
    ),
    ("today-asked", FRI_PARIS, "what did I say earlier today", ("2026-12-04", "2026-12-05")),
    ("today-asked", SUN_PARIS, "what did I tell you today?", ("2026-11-29", "2026-11-30")),
    (
        "today-asked",
        MON_PARIS_AFTER_DST,
        "this morning I told you something",
        ("2026-03-30", "2026-03-31"),
    ),
    ("plain-day", SAT_PARIS, "last night I told you a secret", ("2026-12-11", "2026-12-12")),
    (
        "plain-day",
        SUN_PARIS,
        "what did I tell you yesterday afternoon",
        ("2026-11-28", "2026-11-29"),
    ),
    (
        "plain-day",
        FRI_PARIS,
        "what was the movie I told you about yesterday",
        ("2026-12-03", "2026-12-04"),
    ),
    ("ago", SAT_PARIS, "what did I tell you 3 days ago", ("2026-12-09", "2026-12-10")),
    ("ago", MON_NEW_YORK, "two weeks ago I told you about my sister", ("2026-11-30", "2026-12-07")),
    ("ago", THU_PARIS, "a month ago I told you about my trip", ("2026-12-01", "2027-01-01")),
    ("ago", SAT_PARIS, "remember what I said a couple days ago?", ("2026-12-10", "2026-12-11")),
    (
        "ago",
        MON_PARIS_AFTER_DST,
        "3 days ago I told you about a restaurant",
        ("2026-03-27", "2026-03-28"),
    ),
    ("period", WED_NEW_YORK, "what did I tell you last week?", ("2026-11-30", "2026-12-07")),
    (
        "period",
        TUE_NEW_YORK,
        "last month I told you something important",
        ("2026-09-01", "2026-10-01"),
    ),
    ("period", THU_PARIS, "last year I told you about Léa", ("2026-01-01", "2027-01-01")),
    ("period", TUE_NEW_YORK, "what have I told you this week?", ("2026-10-26", "2026-11-02")),
    (
        "period-part",
        WED_NEW_YORK,
        "earlier this week I mentioned my cat",
        ("2026-12-07", "2026-12-10"),
    ),
    (
        "period-part",
        MON_NEW_YORK,
        "at the beginning of the month I told you about a plan",
        ("2026-12-01", "2026-12-11"),
    ),
    (
        "period-part",
        FRI_PARIS,
        "what did I tell you at the start of the week",
        ("2026-11-30", "2026-12-03"),
    ),
    ("not-asked", SAT_PARIS, "I'm exhausted today", None),
    ("not-asked", MON_NEW_YORK, "I'm going out tonight", None),
    ("future", WED_NEW_YORK, "see you tmrw!", None),
    ("future", FRI_PARIS, "exam tomorrow, wish me luck", None),
    ("future", WED_NEW_YORK, "what are you up to this weekend?", None),
    ("future", WED_NEW_YORK, "what are you doing Saturday?", None),
    ("future", MON_NEW_YORK, "I'll tell you on Tuesday", None),
    ("future", SUN_PARIS, "next week I'm off to Rome", None),
    ("none", THU_PARIS, "hey, how's it going?", None),
    ("none", TUE_NEW_YORK, "I love the month of May", None),
    ("none", MON_PARIS_AFTER_DST, "the Mars rover is amazing", None),
    ("habit", SAT_PARIS, "I swim on Mondays", None),
    ("habit", FRI_PARIS, "I work Monday to Friday", None),
    ("title", SUN_PARIS, "we watched Yesterday together, so good", None),
]


def _dates(
    language: str, rows: list[tuple[str, tuple[str, str], str, tuple[str, ...]]]
) -> list[DateCase]:
    return [DateCase(text, said, expected, language, tag) for tag, said, text, expected in rows]


def _windows(
    language: str, rows: list[tuple[str, tuple[str, str], str, tuple[str, str] | None]]
) -> list[WindowCase]:
    return [WindowCase(text, said, expected, language, tag) for tag, said, text, expected in rows]


DATES = [*_dates("fr", FR_DATES), *_dates("en", EN_DATES)]
WINDOWS = [*_windows("fr", FR_WINDOWS), *_windows("en", EN_WINDOWS)]

SEED = 37


C = TypeVar("C", DateCase, WindowCase)


def _halves(kind: str, cases: list[C]) -> tuple[list[C], list[C]]:
    """Halve each (language, dated or not) group by a seeded shuffle: dev half, test half."""
    dev: list[C] = []
    test: list[C] = []
    for language in ("fr", "en"):
        for dated in (True, False):
            group = [c for c in cases if c.language == language and bool(c.expected) == dated]
            random.Random(f"{SEED}:{kind}:{language}:{dated}").shuffle(group)
            dev += group[: len(group) // 2]
            test += group[len(group) // 2 :]
    return dev, test


DEV_DATES, TEST_DATES = _halves("dates", DATES)
DEV_WINDOWS, TEST_WINDOWS = _halves("windows", WINDOWS)
DEV = {"dates": DEV_DATES, "windows": DEV_WINDOWS}
TEST = {"dates": TEST_DATES, "windows": TEST_WINDOWS}
