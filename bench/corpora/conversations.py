"""The person's earlier messages before each probe message of the recall bench
(bench/corpora/recall.py).

People refer back to what they said a moment ago: "my race" comes after they talked about this
morning's run. Each of the 6 messages gets the 2 or 3 messages the person sent in the turns
before it (oldest first), in two versions:
- related: the conversation that leads to the message, written the way people talk; it names the
  topic, not the reference memory's rare words ("18 km this morning", not "half marathon"; "my
  sister ... the flowers", not "Claire is getting married");
- unrelated: the same person talking about something else just before (a boiler, a film, a
  meeting), to measure what a conversation that has nothing to do with the message costs.
Written by hand for the bench; the product reads the person's own last messages in the story.
"""

from __future__ import annotations

RELATED: dict[str, list[list[str]]] = {
    "en": [
        [
            "Back home at last, there's a broken mug on the kitchen floor",
            "And fur all over the sofa, someone clearly had a party while I was out",
        ],
        [
            "Just got in, the sun is rising and I'm only now having dinner",
            "Two patients came in at 3 am, nobody got a break",
            "Sometimes I dream of the fishing boats and the smell of salt back home",
        ],
        [
            "My sister called, she still hasn't picked the flowers and it's in a few weeks",
            "I've been dreading the journey since the turbulence last time",
        ],
        [
            "The conductor wants us to play the Dvořák piece much faster",
            "And my bow needs new hair, the strings squeak on every long note",
        ],
        [
            "Friends are coming over after dinner",
            "Last time someone brought satay skewers and I had to use my adrenaline pen",
            "And no espresso for me after four or I'm up all night",
        ],
        [
            "Spent the evening labelling pencils and a new backpack",
            "Did 18 km this morning, my knees are complaining",
        ],
    ],
    "fr": [
        [
            "Enfin rentrée, il y a une tasse cassée par terre dans la cuisine",
            "Et des poils partout sur le canapé, quelqu'un a fait la fête pendant mon absence",
        ],
        [
            "Je viens de rentrer, le soleil se lève et je dîne seulement maintenant",
            "Deux patients sont arrivés à 3 h du matin, personne n'a pu souffler",
            "Parfois je rêve des bateaux de pêche et de l'odeur du sel, chez moi",
        ],
        [
            "Ma sœur m'a appelée, elle n'a toujours pas choisi les fleurs et c'est dans quelques "
            "semaines",
            "J'appréhende le trajet depuis les turbulences de la dernière fois",
        ],
        [
            "Le chef veut qu'on joue le morceau de Dvořák beaucoup plus vite",
            "Et mon archet a besoin de nouveaux crins, les cordes grincent sur chaque note tenue",
        ],
        [
            "Des amis passent après le dîner",
            "La dernière fois quelqu'un a apporté des brochettes satay et j'ai dû utiliser mon "
            "stylo d'adrénaline",
            "Et pas d'expresso pour moi après seize heures, sinon je ne dors pas",
        ],
        [
            "J'ai passé la soirée à étiqueter des crayons et un cartable neuf",
            "J'ai fait 18 km ce matin, mes genoux protestent",
        ],
    ],
}

UNRELATED: dict[str, list[list[str]]] = {
    "en": [
        [
            "The boiler made that clanking noise again, I've called the landlord",
            "He says someone can come on Friday, we'll see",
        ],
        [
            "Watched a documentary about volcanoes last night",
            "Did you know some islands appear in a few weeks?",
        ],
        [
            "Work was dull, a three-hour meeting about spreadsheets",
            "My manager wants the report by Monday",
            "I might just ask for an extension",
        ],
        [
            "The bus was late again this morning",
            "I ended up walking half the way in the drizzle",
        ],
        [
            "I finally repainted the bathroom door",
            "It took two coats and the colour is still a bit patchy",
        ],
        [
            "My phone screen cracked when it fell off the desk",
            "The repair shop wants a week to fix it",
            "So I'm using my old one with the battery that dies by noon",
        ],
    ],
    "fr": [
        [
            "La chaudière a encore fait ce bruit de ferraille, j'ai appelé le propriétaire",
            "Il dit que quelqu'un peut passer vendredi, on verra",
        ],
        [
            "J'ai regardé un documentaire sur les volcans hier soir",
            "Tu savais que certaines îles apparaissent en quelques semaines ?",
        ],
        [
            "Journée ennuyeuse, une réunion de trois heures sur des tableurs",
            "Ma responsable veut le rapport pour lundi",
            "Je vais peut-être demander un délai",
        ],
        [
            "Le bus était encore en retard ce matin",
            "J'ai fini par faire la moitié du chemin à pied sous la bruine",
        ],
        [
            "J'ai enfin repeint la porte de la salle de bain",
            "Il a fallu deux couches et la couleur est encore un peu inégale",
        ],
        [
            "L'écran de mon téléphone s'est fêlé en tombant du bureau",
            "Le réparateur veut une semaine pour le changer",
            "Alors j'utilise l'ancien, dont la batterie lâche avant midi",
        ],
    ],
}
