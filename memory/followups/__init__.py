"""Follow-ups: the character coming back, the day after, to an event a person said was coming
("my interview is tomorrow"), when the person asked for it. choose.py decides what and when
(pure: the clock and the zone are parameters); sender.py plans them, then writes and posts each
one due, under a lease, through the front end's `Deliverer`."""
