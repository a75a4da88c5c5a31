"""French word lists. Casefolded, straight apostrophes, accents kept."""

from __future__ import annotations

# Function words left out of the content-word Jaccard. Negations are NOT here: they are
# compared separately (polarity), see NEGATIONS.
STOPWORDS = frozenset(
    """
    a à au aux avec ce ces cet cette c ça d dans de des du elle elles en et est été être eu
    il ils j je l la le les leur leurs lui m ma mais me même mes moi mon n nos notre nous on ou
    où par pour qu que qui s sa se ses si son sont sur t ta te tes toi ton tu un une vos votre
    vous y qu' était sera avoir ont avait aussi très bien plutôt ainsi alors comme donc car
    celui celle ceux celles cela ceci tout tous toute toutes fait faire
    """.split()
)

# Never a recall keyword, though a content word for the dedup (which these lists do not touch):
# « Qu'est-ce que tu sais de moi ? » searched the memories for « est » (the forms of être and
# avoir, the fillers and the question words of chat match any memory and decide nothing).
NOT_KEYWORDS = frozenset(
    """
    suis es sommes êtes étais étaient serai ai as avons avez avais là ici ça ca oui non ouais
    bah ben euh bon bref puis trop vraiment quand quoi quel quelle quels quelles
    """.split()
)

# "je n'aime pas les huîtres" -> reflection wrote "aime les huîtres" (the defect measured on the
# original deployment, about one reflection in three). "n" is the elided "ne"; spoken French drops
# it ("j'aime pas"), hence "pas" alone. Not listed: "personne", "rien", "aucun" ("une personne
# matinale" is not negative, and with a real negation "ne" is there anyway); "plus" ("il en veut
# plus").
# Known miss: spoken "j'aime plus les chats" (no "ne") reads as positive.
NEGATIONS = frozenset({"ne", "n", "pas", "jamais"})

# "un"/"une" are left out: as articles they would split "Il a un chat nommé Félix" from
# "Son chat s'appelle Félix" (a missed merge for nothing).
NUMBER_WORDS = frozenset(
    """
    deux trois quatre cinq six sept huit neuf dix onze douze treize quatorze quinze seize
    vingt trente quarante cinquante soixante septante huitante nonante cent cents mille million
    millions milliard douzaine dizaine centaine premier première deuxième troisième quatrième
    cinquième moitié demi demie quart
    """.split()
)

WEEKDAYS = frozenset("lundi mardi mercredi jeudi vendredi samedi dimanche".split())

# "mai" only as a whole word: folding "mais" to "mai" made the commonest conjunction a month.
MONTHS = frozenset(
    """
    janvier février fevrier mars avril mai juin juillet août aout septembre octobre novembre
    décembre
    """.split()
)
CASED_MONTHS: frozenset[str] = frozenset()

# Matched as whole phrases, longest first: splitting "après-demain" to find "demain" made a
# meeting tomorrow overwritable by one the day after.
RELATIVE_TIME = frozenset(
    " ".join(phrase.split())
    for phrase in """
    après-demain|avant-hier|demain|hier|aujourd'hui|ce soir|ce matin|cet après-midi|cette nuit|
    cette semaine|ce week-end|ce mois-ci|cette année|la semaine prochaine|la semaine dernière|
    le mois prochain|le mois dernier|l'année prochaine|l'année dernière|l'an prochain|
    l'an dernier|prochain|prochaine|dernier|dernière|matin|soir|midi|minuit|nuit|après-midi|
    week-end|tout à l'heure|tantôt|bientôt
    """.split("|")
    if phrase.strip()
)

CURRENCIES = frozenset({"€", "euro", "euros", "centime", "centimes", "$", "dollar", "dollars", "£"})

# --- Dedup (memory.write.dedup): words that are the fact itself. Two memories naming two members
# of one class are two facts, however alike the rest: « Joue du violon dans l'orchestre du
# conservatoire » / « Joue de l'alto dans l'orchestre du conservatoire » scored 0.90. Each class
# is a list of members separated by commas; the forms of one member by "=" (the first names it:
# « psycho=psychologie » are one study, « maman=mère » one relative). A member may be a phrase
# (« fruits de mer »). Plurals need no entry: the dedup tries a word without its final s or x.
# Accents may be left out when typing: each form is also found without them.
# Known false positives (a word of the class used otherwise): a missed merge when only one
# wording has it, never a wrong one: « pas mal de » (mal), « la batterie du téléphone »,
# « pêche » (fishing and peach), « glace » (ice cream and mirror), « orange » (the colour).

ANIMALS = """
chat=chats=minou, chaton, chien=toutou, chiot, lapin, hamster, cochon d'inde=cobaye, furet,
souris, rat, gerbille, chinchilla, perroquet, perruche, canari, oiseau=oiseaux, poule, coq,
canard, poisson rouge, poisson, tortue, serpent, lézard, gecko, iguane, araignée, mygale,
cheval=chevaux, poney, âne, chèvre, mouton, brebis, vache, cochon, abeille, guêpe, insecte,
chauve-souris, requin, loup, ours, renard, axolotl, escargot, fourmi, moustique, tique
"""

# « alto » is also a voice; « basse » a voice and the adjective (« la saison basse »).
INSTRUMENTS = """
piano, guitare, guitare électrique, guitare basse=basse, batterie, violon, alto, violoncelle,
contrebasse, saxophone=saxo, trompette, trombone, tuba, cor, clarinette, flûte=flute,
flûte traversière, hautbois, basson, harpe, accordéon, harmonica, ukulélé=ukulele, banjo,
mandoline, synthé=synthétiseur, clavier, orgue, djembé, percussions, xylophone, cornemuse, chant
"""

# « basket » is also the shoe (« des baskets »); « course » alone is left out (« faire les
# courses »): « course à pied » and « running » are listed.
SPORTS = """
foot=football, futsal, rugby, tennis, tennis de table=ping-pong, badminton, squash, basket=
basket-ball=basketball, volley=volley-ball=volleyball, handball, baseball, hockey, golf,
natation, plongée, water-polo, surf, kitesurf, planche à voile, voile, aviron, canoë=kayak,
escalade=grimpe, ski, snowboard, patinage, roller, skate=skateboard, vélo=cyclisme,
vtt, course à pied=running=footing=jogging, trail, marathon, semi-marathon, triathlon,
randonnée=rando, marche nordique, judo, karaté=karate, taekwondo, boxe, kickboxing, muay thaï,
mma, jiu-jitsu, aïkido, escrime, lutte, musculation=muscu, crossfit, pilates, yoga, zumba,
danse, danse classique, danse contemporaine, hip-hop, salsa, équitation=cheval, gymnastique=gym,
athlétisme, parkour, pétanque, bowling, billard, fléchettes, échecs, padel, tir à l'arc
"""

# A job is one fact: « Est infirmière de nuit » is not « Est aide-soignante de nuit ». Both
# genders are listed as written. Not listed: « juge » (« juge que… »), « garde ».
JOBS = """
infirmier, infirmière, aide-soignant, aide-soignante, médecin=docteur, généraliste, chirurgien,
chirurgienne, dentiste, pharmacien, pharmacienne, kiné=kinésithérapeute=kinésithérapeuthe,
sage-femme, ostéopathe=ostéo, psychologue=psy, psychiatre, orthophoniste, ambulancier,
ambulancière, vétérinaire=véto, prof=professeur=professeure, enseignant, enseignante,
instituteur, institutrice, maîtresse, prof des écoles, professeur des écoles, éducateur,
éducatrice, animateur, animatrice, surveillant, surveillante, nounou, assistante maternelle,
ingénieur, ingénieure, développeur=développeuse=dev, informaticien, informaticienne, graphiste,
designer, architecte, avocat, avocate, notaire, comptable, banquier, banquière, conseiller,
conseillère, consultant, consultante, commercial, commerciale, vendeur, vendeuse, caissier,
caissière, secrétaire, assistant de direction, réceptionniste, hôtesse, standardiste, manager,
boulanger, boulangère, pâtissier, pâtissière, boucher, bouchère, charcutier, poissonnier,
fromager, cuisinier, cuisinière, chef cuisinier, serveur, serveuse, barman, barmaid, plongeur,
plongeuse, traiteur, fleuriste, coiffeur, coiffeuse, esthéticienne, plombier, électricien,
électricienne, menuisier, charpentier, maçon, peintre en bâtiment, couvreur, carreleur,
mécanicien, mécanicienne, garagiste, jardinier, paysagiste, agriculteur, agricultrice,
viticulteur, éleveur, éleveuse, pêcheur, chauffeur, chauffeur routier=routier, livreur,
livreuse, facteur, factrice, conducteur, conductrice, pilote, steward, hôtesse de l'air,
pompier, policier, policière, gendarme, militaire, soldat, agent de sécurité, vigile,
journaliste, photographe, écrivain, écrivaine, auteur, autrice, traducteur, traductrice,
interprète, éditeur, éditrice, bibliothécaire, libraire, documentaliste, chercheur, chercheuse,
acteur, actrice, comédien, comédienne, musicien, musicienne, chanteur, chanteuse, danseur,
danseuse, artiste, peintre, sculpteur, dessinateur, dessinatrice, illustrateur, illustratrice,
youtubeur, streamer, ouvrier, ouvrière, magasinier, cariste, manutentionnaire, agent immobilier,
fonctionnaire, facteur, employé de banque, guide, moniteur, monitrice, coach, entraîneur,
femme de ménage, agent d'entretien, aide à domicile, auxiliaire de vie, assistante sociale,
assistant social, opticien, opticienne, ébéniste, tatoueur, tatoueuse, data analyst
"""

# « histoire » is also a story, « droit » also straight ahead, « lettres » also mail.
STUDIES = """
médecine, droit, informatique=info, mathématiques=maths=math, physique, chimie, biologie=bio,
histoire, géographie=géo, histoire-géo, philosophie=philo, psychologie=psycho, sociologie=socio,
économie=éco, gestion, commerce, école de commerce, marketing, finance, comptabilité, lettres,
lettres modernes, langues, llce, archi=architecture, ingénierie, école d'ingé=école
d'ingénieurs, pharmacie, kinésithérapie, soins infirmiers, odontologie, design, arts
plastiques, beaux-arts, arts appliqués, musicologie, cinéma, audiovisuel, journalisme,
communication, sciences po, science politique, staps, anthropologie, linguistique,
archéologie, astrophysique, géologie, agronomie, électronique, mécanique, génie civil,
biochimie, neurosciences, histoire de l'art, théologie, traduction
"""

# Foods, drinks and allergens: « Est allergique aux arachides » is not « … aux fruits de mer ».
# One food under two names is one member: « Est allergique aux arachides » / « Allergique aux
# cacahuètes » were two allergens.
FOODS = """
pizza, pâtes, sushi=sushis, burger=hamburger, kebab, tacos, raclette, fondue, couscous,
lasagnes=lasagne, quiche, ratatouille, curry, ramen, pho, tajine, paella, risotto, crêpe=crêpes,
gaufre, gâteau, tarte, glace, chocolat, chocolat noir, bonbons, fromage, pain, riz, poulet,
bœuf=boeuf, porc, agneau, veau, canard, jambon, saucisson, viande, poisson, saumon, thon,
crevettes, huîtres, moules, crustacés, fruits de mer, fruits à coque, salade, soupe, frites,
légumes, fruits, fraise, framboise, cerise, pomme, poire, pêche, abricot, prune, banane,
orange, clémentine, citron, ananas, mangue, kiwi, raisin, melon, pastèque, avocat, tomate,
carotte, brocoli, chou, chou-fleur, épinards, courgette, aubergine, poivron, concombre,
champignon, oignon, ail, coriandre, persil, basilic, piment, olive, lentilles, pois chiches,
haricots, café, thé, thé vert, tisane, chocolat chaud, vin, vin rouge, vin blanc, rosé, bière,
cidre, champagne, whisky, rhum, vodka, gin, pastis, coca, soda, jus d'orange, lait, yaourt,
beurre, crème, œuf=oeuf, miel, sucre, noix, noisette, amande, arachide=cacahuète=cacahouète,
pistache, sésame, soja, gluten, lactose, blé, moutarde, céleri, lupin, sulfites
"""

# A language, and the nationality written the same way: « Apprend l'espagnol » is not
# « Apprend l'italien ».
LANGUAGES = """
français=française, anglais=anglaise, espagnol=espagnole, italien=italienne, allemand=allemande,
portugais=portugaise, néerlandais=néerlandaise=hollandais, flamand, japonais=japonaise,
chinois=chinoise, mandarin, cantonais, coréen=coréenne, vietnamien=vietnamienne, thaï,
arabe, hébreu, turc=turque, grec=grecque, russe, ukrainien=ukrainienne, polonais=polonaise,
tchèque, roumain=roumaine, hongrois, suédois=suédoise, norvégien=norvégienne, danois=danoise,
finnois, islandais, irlandais, gaélique, gallois, breton=bretonne, basque, catalan=catalane,
corse, occitan, alsacien, créole, latin, grec ancien, hindi, ourdou, persan=farsi, swahili,
wolof, berbère, esperanto, langue des signes=lsf, brésilien=brésilienne
"""

# Countries, regions and cities, found lowercase too (« habite a lyon »). Not listed: names that
# are common words (« Nice », « Tours », « Orange », « Sens »).
PLACES = """
france, belgique, suisse, luxembourg, canada, québec, allemagne, espagne, italie, portugal,
angleterre, royaume-uni, écosse, irlande, pays de galles, pays-bas=hollande, danemark, suède,
norvège, finlande, islande, pologne, autriche, grèce, croatie, roumanie, hongrie, russie,
ukraine, turquie, maroc, algérie, tunisie, sénégal, mali, côte d'ivoire, cameroun, égypte,
madagascar, martinique, guadeloupe, guyane, états-unis=usa, amérique, mexique,
brésil, argentine, chili, pérou, colombie, japon, chine, corée, inde, vietnam, thaïlande,
australie, nouvelle-zélande, israël, liban, bretagne, normandie, alsace, provence, corse,
savoie, auvergne, bourgogne, paris, lyon, marseille, lille, toulouse, bordeaux, nantes,
strasbourg, montpellier, rennes, grenoble, brest, dijon, rouen, reims, metz, nancy, caen,
limoges, clermont-ferrand=clermont, annecy, avignon, perpignan, bayonne, biarritz, la rochelle,
poitiers, besançon, orléans, le havre, saint-étienne, toulon, ajaccio, bastia, bruxelles,
liège, genève, lausanne, montréal, londres, berlin, madrid, barcelone, rome, milan, lisbonne,
amsterdam, tokyo, new york, dakar, alger, tunis, casablanca
"""

# Brands a memory is about: « A un iPhone » is not « A un Samsung ». Not listed: « Switch »,
# « Orange », « Apple » (common words), « Free ».
BRANDS = """
iphone, ipad, macbook, mac, android, samsung, huawei, xiaomi, pixel, playstation=ps4=ps5,
xbox, nintendo, netflix, disney, spotify, deezer, youtube, twitch, tiktok, instagram, facebook,
amazon, ikea, lidl, aldi, carrefour, leclerc, auchan, intermarché, monoprix, decathlon,
renault, peugeot, citroën, dacia, toyota, volkswagen, tesla, bmw, audi, mercedes, fiat,
nike, adidas, zara, vinted, airbus, sncf, ratp
"""

# First names: a name is a name where it stands, lowercase too and at the start of a sentence
# (« Léa est sa cousine », « sort avec un certain julien »). Not listed: names that are common
# words (« Pierre », « Rose », « Olive », « Victoire », « Ambre »).
FIRST_NAMES = """
emma, léa, chloé, manon, camille, sarah, julie, marie, claire, sophie, laura, lucie, inès,
jade, louise, alice, lina, zoé, anna, eva, nina, clara, juliette, mathilde, pauline, charlotte,
élise, amélie, céline, nathalie, isabelle, sandrine, valérie, sylvie, caroline, hélène,
margaux, océane, lou, jeanne, agathe, lola, mia, romane, elsa, anaïs, margot, audrey,
émilie, mélanie, aurélie, coralie, sonia, nadia, yasmine, leïla, fatima, aïcha, salomé, léna,
maëlle, apolline, capucine, cécile, agnès, brigitte, catherine, christine,
martine, monique, nicole, françoise, patricia, véronique, virginie, stéphanie, delphine,
lucas, louis, hugo, léo, gabriel, raphaël, arthur, jules, adam, nathan, tom, théo, paul, jean,
jacques, marc, thomas, nicolas, julien, antoine, alexandre, maxime, kevin, quentin, romain,
mathieu, vincent, olivier, laurent, sébastien, david, éric, franck, patrick, philippe,
christophe, stéphane, benoît, yann, bastien, florian, clément, martin, simon, victor, noah,
ethan, enzo, mathis, sacha, samuel, timothée, baptiste, guillaume, benjamin, jérôme, cédric,
damien, fabien, karim, mehdi, yanis, rayan, bilal, mohamed, youssef, malik, sofiane, samir,
nassim, amine, ibrahim, moussa, mamadou, axel, valentin, dylan, loïc, gaël, erwan, mael, noé,
tristan, félix, jordan, anthony, alexis, adrien, rémi, michel, alain, bernard, gérard, daniel,
didier, dominique, françois, frédéric, gilles, hervé, jean-pierre, jean-marc, pascal, thierry
"""

# Dislike, fear and disgust: « Adore les films d'horreur » / « Déteste les films d'horreur »
# scored 0.85. A negation is compared apart (`NEGATIONS`): « N'aime pas X » and « Déteste X »
# stay two memories (a missed merge). « horreur » only after « avoir »: alone it is also the
# genre, and « Adore les films d'horreur » would carry a dislike.
DISLIKES = """
déteste=détestent=détestait=détesté=détestée, hait=haït=hais, exècre,
a horreur=ai horreur=as horreur=ont horreur=avoir horreur=avais horreur=avait horreur,
peur, phobie, redoute, craint, dégoûte=dégoute=dégoûté=dégoûtée, insupporte, répugne
"""

# Doing something badly against well: « Dort mal » / « Dort bien » (« bien » is a stopword).
# Known false positive: « pas mal de » (a lot of), « mal au dos » (pain): a missed merge at worst.
BADLY = """
mal
"""

# The word after these is a name, listed or not: « un chien nommé Filou », « s'appelle Oslo ».
NAMING = frozenset({"nommé", "nommée", "appelé", "appelée", "appelle", "surnommé", "surnommée"})

# Every job word is a job here wherever it stands (see en.py for the words that need an article).
ARTICLE_ONLY: frozenset[str] = frozenset()
ARTICLES = frozenset({"un", "une", "comme"})

# Relatives (`RELATIVES`) written another way, and people named by a relation that list lacks:
# « Son mari » / « Son époux », « L'ex de Julie » is not Julie.
RELATIONS = """
mère=maman=mere, père=papa=pere, mari=époux=epoux, femme=épouse=epouse, sœur=soeur, frère=frere,
grand-mère=mamie=mémé=grand-mere, grand-père=papi=papy=pépé=grand-pere, copain=petit ami=petit
copain=mec, copine=petite amie=petite copine, ex, meilleur ami, meilleure amie, beau-père,
belle-mère, colocataire=coloc, collègue=collegue, parrain, marraine, filleul, filleule
"""

# No French relative is also an English word that needs its context (see en.py: "son").
BEFORE_RELATIVE: frozenset[str] = frozenset()

# --- The dedup's spellings (memory.write.dedup_words): words written another way for one fact,
# compared as one word. Only the dedup reads them (not the filters, not recall). The format of
# the classes above: entries separated by commas, the forms of one by "=", the first is the
# spelling compared (a phrase there too). Every text is also compared without its accents
# (« deteste les araignees »), and a word without its final s (« J'apprends » / « Apprend »).
# A wrong entry could only merge two wordings that differ by that word alone, so each group
# says which of its words are also something else (its known false positives).

# Chat abbreviations: « Ecoute bcp de jazz » / « Écoute beaucoup de jazz » scored 0.20.
# Known false positive: « tt » is also « tout » and « toute ».
ABBREVIATIONS = """
beaucoup=bcp=bcq=bcps, toujours=tjrs=tjs=tjr=toujour, quelque chose=qqch=qqc=qqchose,
quelqu'un=qqn=qq1, maintenant=mtn=mnt, parce que=pcq=pck=psk=parsk, pourquoi=pq=pk,
vraiment=vrmt=vrm=vraimen, dans=ds, pour=pr, tout=tt, rendez-vous=rdv, week-end=weekend=wknd,
après-midi=aprem=aprèm, anniversaire=anniv, appartement=appart=appt, ordinateur=ordi,
restaurant=resto, université=fac=univ, travail=boulot=taf=taff
"""

# Words that mean the same fact: « Habite à Lyon » / « Vit à Lyon » scored 0.33, « A peur de
# l'avion » / « A la phobie de l'avion » 0.40, « Supporte l'OM » / « Est supporter de l'OM » 0.33,
# « Est allergique aux arachides » / « Allergique aux cacahuètes » (with FOODS) 0.76.
# The first person of « être » and « avoir » is the third's: « Je suis prof de maths » / « Est
# professeur de mathématiques » scored 0.0 (« est » and « a » are stopwords, « suis » and « ai »
# were not).
# Known false positives: « vit » is also « vit une période difficile » (lives through),
# « supporte » also « tolère » (« supporte le bruit »: « ne supporte pas » carries its negation),
# « suis » also « follow » (« suis des cours »), « bosse » also a bump.
SYNONYMS = """
habite=vit=vis=vivent=habitent=réside=résident, travaille=bosse=bossent, aime=kiffe=kiffent,
peur=phobie, allergique=allergie=allergiques=allergies,
supporter=supporte=supportent=supportrice=fan=fans, nommé=nommée=nommés=appelle=appellent=
appelé=appelée=appelés=prénommé=prénommée, est=suis, a=ai, étudie=étudies=étudient
"""

# Phrases said another way, compared after the words above: « Adore le chocolat noir » /
# « Aime beaucoup le chocolat noir » scored 0.40. The week-end after an article: « we » alone is
# English « we », « le we » and « ce we » are the week-end (the carriers too, see RELATIVE_TIME).
# Known false positive: « aime beaucoup » is a little less than « adore » (one memory for both).
PHRASES = """
adore=aime beaucoup=aime énormément=aime trop=kiffe beaucoup, le week-end=le we,
ce week-end=ce we, du week-end=du we, chaque week-end=chaque we, les week-ends=les we
"""

# Number words compared as their digits: « A deux enfants » / « A 2 enfants » scored 0.33 (two
# carriers that differed). Not « un », « une » (articles, see NUMBER_WORDS), nor « neuf » alone
# (« un vélo neuf » is new; it stays a carrier of its own), nor « cent » (also the English coin).
NUMBER_VALUES = """
2=deux, 3=trois, 4=quatre, 5=cinq, 6=six, 7=sept, 8=huit, 10=dix, 11=onze, 12=douze,
13=treize, 14=quatorze, 15=quinze, 16=seize, 20=vingt, 30=trente, 40=quarante, 50=cinquante,
60=soixante, 1000=mille
"""

# « 3x par semaine » is « trois fois par semaine » (with « 3x », see dedup_words).
TIMES = frozenset({"fois"})

USER_WORDS = frozenset(
    {"utilisateur", "utilisatrice", "l'utilisateur", "l'utilisatrice", "interlocuteur"}
)

# Subjects that mean the character itself. Real case: "Le personnage apprécie le calme".
CHARACTER_WORDS = frozenset(
    {"personnage", "narrateur", "narratrice", "assistant", "assistante", "bot", "ia"}
)

# Subjects that mean the setting of the story. Real case: "La taverne est enfumée" stored as a
# fact about the user.
SETTING_WORDS = frozenset(
    """
    scène décor ambiance histoire récit intrigue taverne auberge pièce salle château forêt monde
    royaume
    """.split()
)

# Feelings and judgments the character holds. Real case: "Écho trouve Marie attachante" stored
# as a fact about Marie.
ATTITUDE_VERBS = frozenset(
    """
    aime adore apprécie trouve estime admire déteste craint redoute s'inquiète inquiète
    ressent éprouve préfère tient affectionne chérit plaint soupçonne pense croit juge
    fier fière attendri attendrie agacé agacée touché touchée
    """.split()
)

# Evaluations of the user that only the character can hold. A word the user said about themself
# ("mes amis disent que je suis drôle") is kept: see filters.character_attitude.
JUDGMENT_WORDS = frozenset(
    """
    adorable attachant attachante charmant charmante mignon mignonne drôle agaçant agaçante
    gentil gentille touchant touchante formidable merveilleux merveilleuse insupportable
    sympathique sympa fascinant fascinante amusant amusante pénible craquant craquante
    """.split()
)

# A candidate that says the opposite with a verb of its own keeps the user's polarity:
# "je n'aime pas les chats" -> "déteste les chats" is not an inversion.
# Not listed: "supporte" ("ne supporte pas le bruit" -> "supporte le bruit" is the inversion),
# "horreur" ("films d'horreur").
OPPOSITE_POLARITY = frozenset("déteste détestent hait haït exècre évite refuse allergique".split())

# Words that start a new clause, for the scope of a negation:
# "je n'aime pas les chats mais j'adore les chiens".
CLAUSE_BREAKS = frozenset(
    {"mais", "et", "par contre", "cependant", "pourtant", "sauf", "donc", "alors", "car"}
)

# Verbs that make a judgment a predicate: "Marie est adorable" (judgment) vs "aime le vin doux".
COPULAS = frozenset({"est", "était", "semble", "paraît", "reste", "devient", "air", "être"})

# First-person words: a memory written in the user's own voice is about the user.
FIRST_PERSON = frozenset({"je", "j", "moi", "mon", "ma", "mes"})

# People a memory may be about instead of the person: « La sœur de Claire habite à Lyon » is
# not « Claire habite à Lyon », « Son mari travaille à la mairie » is not « Travaille à la
# mairie ». Used by the dedup (a relation is a carrier) and the replacement rule (whose fact).
RELATIVES = frozenset(
    """
    sœur soeur frère frere mère mere père pere maman papa mari femme épouse epouse fils fille
    cousin cousine oncle tante neveu nièce niece grand-mère grand-père mamie papi grands-parents
    parents beau-père belle-mère beau-frère belle-sœur belle-soeur copain copine compagnon
    compagne conjoint conjointe fiancé fiancée ami amie pote collègue collegue voisin voisine
    patron patronne chef coloc colocataire enfant enfants bébé petit-fils petite-fille
    """.split()
)

# Leading words skipped to find a memory's subject: "Le personnage …", "La taverne …".
DETERMINERS = frozenset({"le", "la", "l", "les", "un", "une", "ce", "cette", "son", "sa", "ses"})

# --- Dates (memory.lexicon.dates): relative expressions resolved against the day they were said.

# Days by their offset from the day said. « ce soir » and « cette nuit » are that day: « Léa a
# un concert ce soir » is false le lendemain. « après-demain » and « avant-hier » are whole
# phrases: finding « demain » inside made a meeting the day after tomorrow overwrite tomorrow's.
# Known false positive: « aujourd'hui » meaning nowadays (« aujourd'hui, elle vit à Lyon ») is
# dated too (harmless: the date it was said).
DAY_OFFSETS = {
    "aujourd'hui": 0,
    "ce soir": 0,
    "ce matin": 0,
    "cet après-midi": 0,
    "cette nuit": 0,
    "tout à l'heure": 0,
    "demain": 1,
    "après-demain": 2,
    "hier": -1,
    "avant-hier": -2,
    # Chat spellings. « dem1 », « 2main », « 2m1 » (phonetic), « dmain », « auj », « ajd »,
    # « ojd », « cet aprem » (and « cet aprèm », « cette aprem »), « ce tantôt » (Belgian for
    # this afternoon). Not « dem » alone (« dem » may be the start of « démission »), nor
    # « aprem » alone (« l'aprem » is any afternoon: « je bosse l'aprem »).
    "dem1": 1,
    "2main": 1,
    "2m1": 1,
    "dmain": 1,
    "auj": 0,
    "ajd": 0,
    "ojd": 0,
    "cet aprem": 0,
    "cet aprèm": 0,
    "cet aprém": 0,
    "cette aprem": 0,
    "ce tantôt": 0,
}

# The day words that name today in a message asking about a time (read side). Not
# « aujourd'hui », « ce soir »: « je suis crevé aujourd'hui », « je sors ce soir » name today but
# ask nothing about what was said; known miss: « qu'est-ce que je t'ai dit aujourd'hui ? ».
TODAY_ASKED = frozenset({"ce matin"})
# A message with a day word that names today (« aujourd'hui », « ajd », « cet aprem ») asks
# about it when its sentence is in the past tense and says so with one of these verbs (« qu'est-ce
# que je t'ai dit ajd »): « j'étais crevée aujourd'hui » is past but asks nothing.
RECALL = frozenset(
    """
    dit dis raconté raconte parlé parle mentionné discuté écrit souviens rappelles rappelle
    """.split()
)

# A part of the day may follow a day word: « demain soir », « hier matin » are one date each.
DAY_PARTS = frozenset({"matin", "midi", "après-midi", "aprem", "aprèm", "soir"})

WEEKDAY_INDEX = {
    "lundi": 0,
    "mardi": 1,
    "mercredi": 2,
    "jeudi": 3,
    "vendredi": 4,
    "samedi": 5,
    "dimanche": 6,
}

# After a weekday: « mardi prochain » is 1 to 7 days ahead (said on a Monday: the next day; some
# speakers mean the week after, a known miss); « lundi dernier » 1 to 7 days back. « ce
# vendredi » is 0 to 6 ahead. A bare « mardi » goes where the tense says.
# A bare weekday in a past-tense sentence is the last such day (see the tense below).
NEXT_AFTER = frozenset({"prochain", "prochaine", "qui vient"})
LAST_AFTER = frozenset({"dernier", "dernière", "passé"})
THIS_BEFORE = frozenset({"ce"})

# A weekday after these is a habit or an idiom, not a date: « le lundi je nage » (every Monday),
# « chaque vendredi », « tous les » (plural anyway), « du lundi au vendredi », « un peintre du
# dimanche » (an amateur painter).
HABITUAL_BEFORE = frozenset({"le", "chaque", "du", "au", "les", "un"})
# « un mardi sur deux », « un dimanche par mois » are habits too; « un lundi » told as a story
# (« un lundi, il a plu ») names no day either.

# A weekday after these words is a name, not a date: « un chat qui s'appelle Mardi », « un
# groupe nommé Samedi Soir ». A day word after them too (« un chat appelé Demain »).
NAMING_BEFORE = frozenset(
    {"s'appelle", "s'appelait", "appelé", "appelée", "nommé", "nommée", "surnommé", "surnommée"}
)

# A weekday after these is ahead whatever the tense: « a réservé un resto pour vendredi », « son
# vol a été décalé à dimanche », « jusqu'à jeudi ». After « depuis » it is behind: « est malade
# depuis lundi » (present, yet the Monday gone).
AHEAD_BEFORE = frozenset({"pour", "à", "jusqu'à"})
BEHIND_BEFORE = frozenset({"depuis"})

# The tense of the sentence (its clause first) decides where a bare weekday goes: « est allée au
# cinéma mardi » is the Tuesday gone, « va au cinéma mardi » the one to come; with no tense
# found, ahead. The nearest mark to the weekday counts: « a fini ses partiels hier et part en
# vacances samedi » (a new verb after « et » starts a new clause: the Saturday to come).
# Past: an auxiliary followed within three words by a participle (« a mangé », « n'a pas
# dormi », « l'a quittée »; the participle as written: « a mange » without its accent is not
# read), « être » before a verb of motion or after a reflexive (« est rentrée », « s'est
# disputé »), the imparfait (« c'était », « était malade », -ait). « a » only as written
# without a grave accent: « décalé à dimanche » has none.
PAST_AUXILIARIES = frozenset({"ai", "as", "a", "avons", "avez", "ont", "avait", "avais", "avaient"})
BEING_AUXILIARIES = frozenset({"suis", "es", "est", "sommes", "êtes", "sont", "étais", "était"})
REFLEXIVES = frozenset({"se", "me", "te", "nous", "vous", "s'", "m'", "t'"})
# Participles not ending in -é. Not « du » (« a du boulot samedi »): « dû » keeps its accent.
PARTICIPLES = frozenset(
    """
    fini finie parti partie sorti sortie dormi choisi réussi grandi servi suivi senti menti
    pris prise appris compris mis mise promis dit dite écrit fait faite vu vue lu eu bu su pu
    dû reçu perdu vendu attendu entendu rendu répondu venu venue revenu revenue devenu devenue
    tenu obtenu couru voulu connu plu battu mort morte ouvert offert découvert souffert
    peint craint atteint éteint été vécu cru conduit construit nourri guéri réfléchi ri souri
    """.split()
)
# Between the auxiliary and its participle: negations and adverbs (« n'a pas dormi », « a bien
# mangé »). Any other word ends the search: « a une soirée samedi » has no participle.
PARTICIPLE_GAP = frozenset(
    """
    ne n' pas plus jamais bien déjà enfin encore beaucoup trop vraiment tellement mal rien tout
    toujours aussi même finalement presque souvent
    """.split()
)
# Words ending in -é that are no participle, read after "a" in English too ("has a fiancé who
# lands on Friday" is not a passé composé).
# Nouns in -é(e) that follow « a » in a noun phrase or a typo, never a participle: « lundi a
# thé » (found by Hypothesis: read as a past question, it gave last Monday as a window).
NOT_PARTICIPLES = frozenset(
    """
    fiancé fiancée café résumé cliché protégé thé bébé santé musée idée purée poupée clé
    """.split()
)
MOTION_PARTICIPLES = frozenset(
    """
    allé allée allés allées venu venue venus revenu revenue parti partie partis sorti sortie
    arrivé arrivée rentré rentrée retourné retournée tombé tombée resté restée passé passée
    monté montée descendu descendue né née mort morte devenu devenue
    """.split()
)
PAST_WORDS = frozenset({"était", "étais", "étaient", "avait", "avais", "avaient", "fut"})
# The imparfait: a word ending so, five letters or more, not a name (capitalised in a
# sentence), not these (nouns and adjectives: « un portrait », « parfait »; « fait » is a present
# too: « fait du yoga samedi »).
PAST_ENDINGS = ("ait", "aient")
NOT_PAST = frozenset(
    """
    fait plait plaît souhait portrait parfait extrait abstrait attrait retrait distrait trait
    lait bienfait forfait méfait
    """.split()
)
# Ahead: the near future (« va voir »), what a person means to do (« doit », « compte »), the
# future and the conditional by their endings (« aura », « passerait »; not « opéra »,
# « caméra »), and participles that set a date ahead (« a prévu de partir mercredi », « a
# réservé », « est invitée », « décalé »).
FUTURE_WORDS = frozenset(
    """
    va vais vas vont allons allez doit dois doivent compte comptes pense veut veux espère
    prévoit sera aura fera ira viendra verra pourra devra saura faudra serait aurait ferait
    irait
    """.split()
)
FUTURE_ENDINGS = (
    "era",
    "eront",
    "erait",
    "eraient",
    "rra",
    "rront",
    "rrait",
    "rraient",
    "dra",
    "dront",
    "drait",
    "draient",
    "vra",
    "vront",
    "vrait",
    "vraient",
    "ira",
    "iront",
    "irait",
    "iraient",
)
NOT_FUTURE = frozenset({"opéra", "caméra", "chimera", "ère"})
PLAN_WORDS = frozenset(
    """
    prévu prévue prévus réservé réservée décalé décalée reporté reportée repoussé repoussée
    avancé avancée promis décidé fixé fixée programmé programmée calé calée invité invitée
    inscrit inscrite
    """.split()
)
# A conjunction starts a new clause when a verb follows it, not a noun: « et part samedi » is
# a clause, « et un oral jeudi », « et Léa » are not (a determiner or a capital follows).
CONJUNCTIONS = frozenset({"et", "mais", "puis"})
# Words that open a noun after a conjunction (the tense reader: « et un oral jeudi »).
TENSE_DETERMINERS = frozenset(
    """
    le la les l' un une des du de d' sa son ses mon ma mes ton ta tes leur leurs notre votre
    nos vos
    """.split()
)

# Named days that are not the next such weekday: « vendredi saint », « lundi de Pâques »,
# « adore les crêpes de Mardi gras ».
NAMED_AFTER = frozenset({"saint", "de pâques", "de pentecôte", "gras"})

IN_BEFORE = frozenset({"dans"})
# « il y a deux jours » (read side: a window). Not « ça fait deux ans » (« ça fait deux ans que
# je joue du piano » is how long, not when). Known false positive: « il y a deux jours de pluie
# prévus » (there are) reads as two days ago.
AGO_BEFORE = frozenset({"il y a", "y a", "y'a", "ya"})
# A memory's « il y a trois jours » is dated too (the day three days before it was said); « il y
# a deux semaines » the day two weeks before. « y a », « y'a », « ya »: chat (« ya 2 jours »).

CARDINALS = {
    "un": 1,
    "une": 1,
    "deux": 2,
    "trois": 3,
    "quatre": 4,
    "cinq": 5,
    "six": 6,
    "sept": 7,
    "huit": 8,
    "neuf": 9,
    "dix": 10,
    "onze": 11,
    "douze": 12,
    "quinze": 15,
    "vingt": 20,
    "trente": 30,
}

# Units of « dans N <unité> » and « il y a N <unité> ». « an »/« ans » only after a number:
# « l'an prochain » is a period (PERIODS). Known false positive: « dans trois ans de mariage »
# (a duration read as a date).
UNITS = {
    "jour": "day",
    "jours": "day",
    "semaine": "week",
    "semaines": "week",
    "mois": "month",
    "an": "year",
    "ans": "year",
    "année": "year",
    "années": "year",
}

# Idioms counted in days: « dans huit jours » is a week from now (the same weekday, +7, not +8),
# « dans quinze jours » two weeks (+14). Listed before the literal reading, which they override.
DURATIONS = {"huit jours": 7, "quinze jours": 14}

# A named period relative to the one said in: (unit, offset). Weeks start on Monday.
PERIODS = {
    "cette semaine": ("week", 0),
    "la semaine prochaine": ("week", 1),
    "la semaine dernière": ("week", -1),
    "la semaine passée": ("week", -1),
    "ce week-end": ("weekend", 0),
    "le week-end prochain": ("weekend", 1),
    "le week-end dernier": ("weekend", -1),
    "ce mois-ci": ("month", 0),
    "le mois prochain": ("month", 1),
    "le mois dernier": ("month", -1),
    "le mois passé": ("month", -1),
    "cette année": ("year", 0),
    "l'année prochaine": ("year", 1),
    "l'an prochain": ("year", 1),
    "l'année dernière": ("year", -1),
    "l'an dernier": ("year", -1),
    "l'an passé": ("year", -1),
    # Chat: « la semaine pro », « semaine pro », « ce we » (and « ce w-e »), « le we pro »,
    # « le mois pro »; the article dropped (« vu semaine dernière »). Not « pro » alone (« un
    # pro », « la semaine pro-européenne » has its dash), nor « we » alone (English "we").
    "la semaine pro": ("week", 1),
    "semaine pro": ("week", 1),
    "semaine prochaine": ("week", 1),
    "semaine dernière": ("week", -1),
    "ce w-e": ("weekend", 0),
    "le w-e pro": ("weekend", 1),
    "le w-e prochain": ("weekend", 1),
    "le week-end pro": ("weekend", 1),
    "le w-e dernier": ("weekend", -1),
    "le mois pro": ("month", 1),
    "l'année pro": ("year", 1),
}

# Part of a period (read side): the start of a month is its first ten days, the end from the
# 21st, « plus tôt cette semaine » its days so far, today included (see en.py: a window a day
# too wide loses nothing meant). (unit, offset, part)
PERIOD_PARTS = {
    "début du mois": ("month", 0, "start"),
    "au début du mois": ("month", 0, "start"),
    "en début de mois": ("month", 0, "start"),
    "début du mois dernier": ("month", -1, "start"),
    "fin du mois dernier": ("month", -1, "end"),
    "à la fin du mois dernier": ("month", -1, "end"),
    "fin du mois": ("month", 0, "end"),
    "début de la semaine": ("week", 0, "start"),
    "en début de semaine": ("week", 0, "start"),
    "plus tôt cette semaine": ("week", 0, "sofar"),
    "plus tôt ce mois-ci": ("month", 0, "sofar"),
}

# « en mars » (read side: the last March not in the future). Only after these words: « mars »
# alone may be the planet (« une mission vers Mars ») or the chocolate bar. « le mois de mai »
# is not listed: « j'adore le mois de mai » names a month, not a time something was said.
MONTH_INDEX = {
    "janvier": 1,
    "février": 2,
    "fevrier": 2,
    "mars": 3,
    "avril": 4,
    "mai": 5,
    "juin": 6,
    "juillet": 7,
    "août": 8,
    "aout": 8,
    "septembre": 9,
    "octobre": 10,
    "novembre": 11,
    "décembre": 12,
    "decembre": 12,
}
# « au mois d'avril »: the elided « de » is written against the month.
MONTH_BEFORE = frozenset({"en", "au mois de", "au mois d'", "courant"})
# Parts of a month (read side): « début janvier » is the 1st to the 10th, « mi-novembre » the 11th
# to the 20th, « fin novembre » the 21st to its end. « mi » only against the month (« mi-mars »,
# « mi mars »); known false positive: « fin mars » in « la fin, mars » (never seen).
MONTH_PART_BEFORE = {
    "début": "start",
    "au début": "start",
    "en début de": "start",
    "en début d'": "start",
    "au début de": "start",
    "au début d'": "start",
    "mi": "mid",
    "à la mi": "mid",
    "fin": "end",
    "à la fin de": "end",
    "à la fin d'": "end",
    "en fin de": "end",
    "en fin d'": "end",
}

# A message asks about the time it names (read side: a time to come) when its sentence ends
# with « ? » or holds one of these: « quoi » (« jai quoi demain », « demain c'est quoi le
# plan »), « qu'est-ce », « est-ce que », « quel », a request (« rappelle-moi », « dis-moi »).
# Not « quand » alone (« quand je rentre demain je t'appelle » tells), only « c'est quand ».
# Known false positive: « quoi » in a statement (« je sais pas quoi faire demain »).
ASKING = frozenset(
    {
        "quoi",
        "qu'est-ce",
        "est-ce que",
        "quel",
        "quelle",
        "quels",
        "quelles",
        "combien",
        "c'est quand",
        "rappelle",
        "rappelle-moi",
        "rappeler",
        "dis-moi",
    }
)
# A sentence with one of these supposes rather than asks: « si demain c'était la fin du monde »,
# « imagine on part à Rome la semaine pro ». « si » only before a word: « j'ai rien de prévu ce
# soir si ? » asks (see memory.lexicon.dates).
SUPPOSING = frozenset({"si", "imagine", "imaginons", "supposons", "admettons"})

# What a memory is about, for a replacement the reflection proposes (memory/write/supersede.py):
# what a person has one of at a time (un seul logement, un seul emploi, un seul couple, un seul
# cursus, un régime, une voiture…), so a new one replaces the old even with no word in common
# ("habite à Lyon" -> "vient d'emménager à Paris"). Compared word-stemmed and without accents
# ("demenagé", "végétarienne"). A memory about an occasion (an interview, a class) does not
# share its topic with a standing fact: "a un entretien d'embauche vendredi" leaves the job.
# Known false positives: two facts of one topic that both hold ("habite à Lyon" / "vit en
# colocation", "travaille à mi-temps"), a home's detail taken for a move.
TOPIC_HOME = frozenset(
    """
    habite habiter vit vivre vis vivent emménagé emménager emménage déménagé déménager déménage
    installé installée appartement appart logement loyer loue colocation coloc studio loge
    domicile
    """.split()
)
TOPIC_WORK = frozenset(
    """
    travaille travailler travail job boulot bosse bosser emploi poste métier embauché embauchée
    licencié licenciée licenciement démissionné démission retraite chômage cdi cdd intérim
    reconversion reconvertit reconverti stage alternance entreprise enseigne
    """.split()
)
# A job said by its name ("est serveuse" -> "travaille comme aide-soignante"), masculine and
# feminine: the commonest ones. Known false positive: "est une vraie cuisinière" said of a hobby.
PROFESSIONS = frozenset(
    """
    infirmier infirmière prof professeur professeure enseignant enseignante instituteur
    institutrice serveur serveuse boulanger boulangère vendeur vendeuse caissier caissière
    développeur développeuse ingénieur ingénieure comptable avocat avocate médecin docteur
    chauffeur plombier électricien électricienne mécanicien menuisier cuisinier cuisinière
    aide-soignant aide-soignante pharmacien pharmacienne dentiste vétérinaire secrétaire
    policier policière pompier militaire agriculteur agricultrice coiffeur coiffeuse
    architecte journaliste bibliothécaire directeur directrice manager consultant consultante
    commercial commerciale ouvrier ouvrière facteur factrice livreur livreuse sage-femme
    """.split()
)
# "copain", "copine", "ami" alone: in "a un copain qui s'appelle Marc" a partner, in "sort
# avec des copains" friends; kept: a reflection writes "copain" for a partner.
TOPIC_PARTNER = frozenset(
    """
    copain copine compagnon compagne conjoint conjointe mari épouse fiancé fiancée fiancés marié
    mariée divorcé divorcée célibataire séparé séparée séparés rompu couple sort relation
    """.split()
)
TOPIC_STUDIES = frozenset(
    """
    études étudie étudiant étudiante licence master fac université bac terminale lycée prépa
    iut bts doctorat thèse lycéen lycéenne collège collégien collégienne l1 l2 l3 m1 m2
    """.split()
) | {
    # A year of studies ("est en terminale" -> "est en première année de médecine"). Not
    # « école » alone: « dépose ses enfants à l'école ». Known false positive: « sa première
    # année de mariage » reads as a year of studies.
    "première année",
    "1re année",
    "1ère année",
    "deuxième année",
    "2e année",
    "2ème année",
    "troisième année",
    "3e année",
    "3ème année",
    "dernière année",
    "école d'ingé",
    "école de commerce",
}
# One diet at a time: "est végétarienne" -> "remange de la viande".
TOPIC_DIET = frozenset(
    """
    végétarien végétarienne végétalien végétalienne vegan vegane végan végane viande régime
    gluten halal casher flexitarien pescétarien mange
    """.split()
)
TOPIC_CAR = frozenset("voiture bagnole auto permis moto scooter".split())
TOPIC_PHONE = frozenset(
    "téléphone portable tél smartphone numéro forfait iphone android samsung".split()
)
# Enceinte, puis mère : "est enceinte" -> "a accouché d'un petit garçon".
TOPIC_PREGNANCY = frozenset("enceinte grossesse accouché accouchée accouchement naissance".split())
TOPIC_RELIGION = frozenset("catholique musulman musulmane juif juive athée croit religion".split())
TOPIC_HAIR = frozenset("cheveux blonde blond brune brun rousse roux coiffure".split())
TOPIC_BODY = frozenset("mesure pèse poids taille kilos kg".split())
TOPIC_BIRTH = frozenset("née né anniversaire".split())

# Words that never say on their own what a memory is about: taste ("aime le jazz", "aime le
# rock": two tastes), everyday verbs and places ("joue du violoncelle", "joue au tennis"; "va au
# concert", "va au cinéma"; "chez le dentiste", "chez le coiffeur"), naming ("un chat qui
# s'appelle Misha", "un chien nommé Rex": two pets), and the words of change itself. With them
# the things people have several of at once: pets, allergies, trips, classes, appointments
# ("allergique aux arachides" / "allergique au pollen" are two allergies).
NOT_A_SUBJECT = frozenset(
    """
    aime aimer adore adorer préfère préférer déteste détester apprécie
    appelle appelé appelée nommé nommée nom
    rendez-vous rdv animal animaux ami amie amis amies enfant enfants
    maintenant nouveau nouvelle nouvel vient venir récemment plus désormais depuis commencé
    devenu devenue fait
    joue jouer va aller chez arrêté arrête apprend apprendre ans âge
    chat chats chatte chien chiens chienne chaton lapin poisson poissons oiseau
    allergique allergie allergies intolérant intolérante
    voyage voyages vacances train vol avion billet part partir
    cours leçon leçons contrôle examen partiel entretien réunion rencontre
    prend prendre doit aller voit collectionne regarde écrit parle
    """.split()
)

# A memory about an occasion, something that happens once at a time: two of them are two
# occasions ("a cours de piano mercredi" / "a cours de natation samedi") unless the second
# says the first moved (REPLANNED). "fête" too: "fête ses 10 ans de mariage" is not a marriage.
OCCASIONS = frozenset(
    """
    rdv rendez-vous entretien réunion cours leçon contrôle examen partiel vol train voyage
    dîner déjeuner soirée fête concert séance consultation opération
    """.split()
)
# An occasion moved or called off: "son rdv est décalé à lundi", "le voyage est annulé".
REPLANNED = frozenset(
    """
    reporté reportée repoussé repoussée décalé décalée avancé avancée annulé annulée déplacé
    déplacée changé changée finalement maintenant
    """.split()
)
# A taste or a habit turned: "n'écoute plus de rap", "s'est mis à aimer les épinards".
# Known false positive: "ne fume plus" beside "a un chat qui ne sort plus" (shares no word).
TURNED = frozenset(
    """
    plus arrêté arrête abandonné quitté quitte lâché maintenant désormais reprend repris mis
    passé passée vendu revendu guéri guérie rétabli rétablie
    """.split()
) | {"de nouveau", "à nouveau"}
# Words that say the old memory was wrong: "en fait son chien s'appelle Pilou".
CORRECTED = frozenset(
    {"en fait", "en réalité", "en vrai", "trompé", "trompée", "erreur", "plutôt", "correction"}
)
# Words that may open a memory before what it is about: whose fact it is and the thing it names
# are read after them (« En fait son chien s'appelle Rox » is about her dog, as « son chien
# s'appelle Rex » is). Not « plutôt » (« plutôt son frère » is rare, « plutôt sympa » common).
OPENING_ASIDES = frozenset(
    {"en fait", "en réalité", "en vrai", "correction", "rectification", "mise à jour", "oups"}
)
# Words that add one more beside the old: "aime aussi le basket", "a aussi deux poissons".
ADDED = frozenset(
    {"aussi", "également", "en plus", "un autre", "une autre", "un deuxième", "une deuxième"}
    | {"un second", "une seconde", "encore un", "encore une"}
)
# A wish, an attempt or a search is not the new state: "cherche une maison plus grande à
# Nantes" leaves "habite à Nantes" true, as « aimerait déménager à Bordeaux », « rêve de devenir
# infirmière », « essaie d'arrêter de fumer » leave theirs. Not « tente » (« une tente »). Known
# miss: "veut quitter son job" is a step towards a change. Known false positive: « rêve » the
# noun in a fact that happened (« a réalisé son rêve : vit à Lisbonne »).
PLANS = frozenset(
    """
    cherche recherche veut voudrait aimerait envisage pense compte espère rêve rêverait
    essaie essaye souhaite souhaiterait projette prévoit hésite réfléchit
    """.split()
)
# Words between a possessive and the relative it names: "sa meilleure amie", "son petit frère".
RELATIVE_QUALIFIERS = frozenset(
    "meilleur meilleure petit petite grand grande nouveau nouvelle nouvel ex futur future".split()
)
POSSESSIVES = frozenset("son sa ses leur leurs mon ma mes le la l les".split())
# Two names of one relative: "sa mère est infirmière" and "sa maman a pris sa retraite".
RELATIVE_ALIASES = {"maman": "mère", "papa": "père", "mamie": "grand-mère", "papi": "grand-père"}
