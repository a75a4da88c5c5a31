"""Messages that ask about a time to come ("what do I have tomorrow?", « la semaine prochaine
j'ai quoi déjà »), and messages that do not, as people type them in chat: English and French,
lowercase, typos, no accents, abbreviations, emoji.

Each case: the message, when and where it was said (local time, IANA zone), and the days it
asks about as `memory.lexicon.dates.Span.label` writes them ("2026-12-08", a month "2027-01",
"first/last"), or None when it asks about no time to come.

What the labels decide. A message asks about a time to come when it asks something (a
question, with or without its question mark, or "remind me", « rappelle-moi », "tell me")
about a day or a period ahead of it, whoever it is about ("will it rain tomorrow?", "r u free
on sunday?": the person's plans then are what an answer needs). It does not when the time is
past ("what did I do yesterday?"), when it tells rather than asks ("I have an exam tomorrow",
« j'ai piscine jeudi, trop la flemme »), when the time is a habit ("what do you usually do on
fridays?"), or when it supposes ("what if I skipped class tomorrow?", « si demain c'était la
fin du monde »). The days: those the words mean as the write side dates a memory ("next
friday" said on a Monday is that week's Friday, a weekday 1 to 7 days ahead), a period from
today on at the earliest ("this week" asked on a Thursday: Thursday to Sunday), a month part
as the read side has it (the end of a month: the 21st on).

Written in one go before any rule was read off it, then split once by a checksum of the typed
text (crc32, even: TUNE, odd: HELD_OUT): the rule was tuned on TUNE only; HELD_OUT is
reported (`make bench-ahead`), never read while tuning.
"""

from __future__ import annotations

import zlib

# The instants said at, local time, and their zones.
MON = ("2026-12-07T15:00", "Europe/Paris")
SAT = ("2026-12-12T11:00", "Europe/Paris")
THU_NY = ("2026-12-10T21:00", "America/New_York")  # already Friday in Paris

Case = tuple[str, tuple[str, str], str | None]

_CASES: list[Case] = [
    # English, asking.
    ("what do I have tomorrow?", MON, "2026-12-08"),
    ("what do i have tmrw", MON, "2026-12-08"),
    ("anything on friday?", MON, "2026-12-11"),
    ("whats my schedule this weekend", MON, "2026-12-12/2026-12-13"),
    ("remind me what I've got next week", MON, "2026-12-14/2026-12-20"),
    ("am I busy tonight?", MON, "2026-12-07"),
    ("what's happening on thursday 🤔", MON, "2026-12-10"),
    ("do i have anything the day after tomorrow?", MON, "2026-12-09"),
    ("what was I supposed to do tomorrow again?", MON, "2026-12-08"),
    ("what are my plans for next month?", MON, "2027-01"),
    ("anything planned for wednesday??", MON, "2026-12-09"),
    ("what should I bring tomorrow", MON, "2026-12-08"),
    ("do I have work on saturday?", MON, "2026-12-12"),
    ("can you remind me what's on monday", MON, "2026-12-14"),
    ("what's the plan for tonight lol", MON, "2026-12-07"),
    ("is there something i need to do this week", MON, "2026-12-07/2026-12-13"),
    ("what time is my thing tomorrow", MON, "2026-12-08"),
    ("tell me what I have in 3 days", MON, "2026-12-10"),
    ("any plans for christmas?", MON, "2026-12-25"),
    ("what did I tell you I'm doing tomorrow?", MON, "2026-12-08"),
    ("wait what do i have on tuesday", MON, "2026-12-08"),
    ("whats up for next weekend", MON, "2026-12-19/2026-12-20"),
    ("do i need to wake up early tomorrow?", MON, "2026-12-08"),
    ("will it rain tomorrow?", MON, "2026-12-08"),
    ("what am I doing later this week", MON, "2026-12-08/2026-12-13"),
    ("what's on my calendar for the end of the month", MON, "2026-12-21/2026-12-31"),
    ("anything coming up in january?", MON, "2027-01"),
    ("do i have plans friday night", MON, "2026-12-11"),
    ("what do I have today?", MON, "2026-12-07"),
    ("r u free on sunday?", MON, "2026-12-13"),
    ("whats tmrw looking like", MON, "2026-12-08"),
    ("yo what's the plan for the day after tomorrow", MON, "2026-12-09"),
    ("anything else this month?", MON, "2026-12-07/2026-12-31"),
    ("where am I supposed to be next friday", MON, "2026-12-11"),
    ("how's my week looking?", MON, "2026-12-07/2026-12-13"),
    ("what am I doing this weekend?", SAT, "2026-12-12/2026-12-13"),
    ("anything tomorrow?", SAT, "2026-12-13"),
    ("what do I have monday", SAT, "2026-12-14"),
    ("what do I have tomorrow", THU_NY, "2026-12-11"),
    ("anything this weekend?", THU_NY, "2026-12-12/2026-12-13"),
    ("what else do I have this week", THU_NY, "2026-12-10/2026-12-13"),
    ("Do I have to get up early tomorrow morning?", THU_NY, "2026-12-11"),
    # English, not asking about a time to come.
    ("I have an exam tomorrow", MON, None),
    ("tomorrow I'm going to the dentist", MON, None),
    ("what did I do yesterday?", MON, None),
    ("what did I tell you last week?", MON, None),
    ("if I quit my job tomorrow would you still talk to me?", MON, None),
    ("what would you do if it was friday already", MON, None),
    ("I'll be in Tokyo next week 🎌", MON, None),
    ("what do you usually do on fridays?", MON, None),
    ("what do I have to do to get better at chess?", MON, None),
    ("what happened last weekend?", MON, None),
    ("my exam is on thursday, wish me luck", MON, None),
    ("ugh work tmrw", MON, None),
    ("can't wait for the weekend!!", MON, None),
    ("imagine we went to paris next week, what would we see?", MON, None),
    ("how was your weekend?", MON, None),
    ("what did you do today?", MON, None),
    ("next week is gonna be rough", MON, None),
    ("what's your favorite day of the week", MON, None),
    ("What if I skipped class tomorrow?", MON, None),
    ("I'm going hiking tomorrow", SAT, None),
    ("what did I say on tuesday?", THU_NY, None),
    # French, asking.
    ("c'est quoi mon programme ce week-end ?", MON, "2026-12-12/2026-12-13"),
    ("la semaine prochaine j'ai quoi déjà", MON, "2026-12-14/2026-12-20"),
    ("qu'est ce que j'ai demain", MON, "2026-12-08"),
    ("jai quoi demain", MON, "2026-12-08"),
    ("j'ai prévu quoi vendredi ?", MON, "2026-12-11"),
    ("tu peux me rappeler ce que je fais jeudi", MON, "2026-12-10"),
    ("rappelle moi ce que jai dem1", MON, "2026-12-08"),
    ("on fait quoi ce soir ?", MON, "2026-12-07"),
    ("c quoi le programme de la semaine pro", MON, "2026-12-14/2026-12-20"),
    ("est-ce que j'ai un truc mercredi ?", MON, "2026-12-09"),
    ("g des trucs de prévu ce we ?", MON, "2026-12-12/2026-12-13"),
    ("j'ai quelque chose après-demain ?", MON, "2026-12-09"),
    ("qu'est-ce qui m'attend le mois prochain 😅", MON, "2027-01"),
    ("je dois faire quoi demain déjà ?", MON, "2026-12-08"),
    ("demain c'est quoi le plan", MON, "2026-12-08"),
    ("il fait quel temps demain ?", MON, "2026-12-08"),
    ("j'ai cours samedi ?", MON, "2026-12-12"),
    ("tu te souviens de ce que j'ai prévu pour dimanche ?", MON, "2026-12-13"),
    ("j'ai quoi dans 2 jours", MON, "2026-12-09"),
    ("c'est quand déjà mon truc de la semaine prochaine ?", MON, "2026-12-14/2026-12-20"),
    ("qu'est-ce que je fais en janvier ?", MON, "2027-01"),
    ("cette semaine j'ai quoi comme rdv", MON, "2026-12-07/2026-12-13"),
    ("j'ai rien de prévu ce soir si ?", MON, "2026-12-07"),
    ("la fin du mois ça donne quoi pour moi", MON, "2026-12-21/2026-12-31"),
    ("ya quoi lundi prochain", MON, "2026-12-14"),
    ("dis moi ce que j'ai a faire demain stp", MON, "2026-12-08"),
    ("qu'est-ce que j'ai aujourd'hui ?", MON, "2026-12-07"),
    ("jsuis libre vendredi soir ?", MON, "2026-12-11"),
    ("on se voit toujours samedi ?", MON, "2026-12-12"),
    ("C'était quoi déjà le truc de demain ??", MON, "2026-12-08"),
    ("quoi de prévu ce week-end ?", SAT, "2026-12-12/2026-12-13"),
    ("j'ai quoi lundi ?", SAT, "2026-12-14"),
    ("et demain j'ai quoi ?", SAT, "2026-12-13"),
    ("qu'est-ce que j'ai demain ?", THU_NY, "2026-12-11"),
    ("il me reste quoi cette semaine", THU_NY, "2026-12-10/2026-12-13"),
    # French, not asking about a time to come.
    ("j'ai un exam demain", MON, None),
    ("demain je vais chez le dentiste", MON, None),
    ("qu'est-ce que j'ai fait hier ?", MON, None),
    ("je t'ai dit quoi la semaine dernière ?", MON, None),
    ("si demain c'était la fin du monde tu ferais quoi ?", MON, None),
    ("je serai à lyon la semaine prochaine", MON, None),
    ("tu fais quoi le vendredi d'habitude ?", MON, None),
    ("c'était comment ton week-end ?", MON, None),
    ("qu'est-ce que je dois faire pour progresser ?", MON, None),
    ("vivement le week-end 😩", MON, None),
    ("j'ai piscine jeudi, trop la flemme", MON, None),
    ("imagine on part à rome la semaine pro, on visite quoi ?", MON, None),
    ("t'as fait quoi aujourd'hui ?", MON, None),
    ("on s'est vus quand la dernière fois ?", MON, None),
    ("si jamais il pleut samedi on fait quoi ?", MON, None),
    ("et si je partais demain ?", MON, None),
    ("jpars en vacances dem1 trop hate", MON, None),
    ("j'ai passé un super week-end", SAT, None),
]

# The split, by a checksum of the typed text: about half of each language on either side.
TUNE: list[Case] = [case for case in _CASES if zlib.crc32(case[0].encode()) % 2 == 0]
HELD_OUT: list[Case] = [case for case in _CASES if zlib.crc32(case[0].encode()) % 2 == 1]
