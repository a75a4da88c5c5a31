"""The memory engine's exceptions.

    EchoError                    base of everything raised on purpose here
    ├── StoreError               the database refused or failed an operation
    │   └── MigrationError       the schema could not be brought to the current version
    ├── ReflectionError          a reflection is unusable as a whole (bad items are dropped instead)
    ├── BackendError             a chat or embedding backend failed
    │   ├── BackendUnavailable   connection refused, timeout, 5xx: worth retrying later
    │   └── BackendResponseError the backend answered with an error body or unusable content
    │       └── BackendRefused   it refused the request itself (4xx, or a 5xx that says so)
    │           └── ImagesRefused the model does not see images (learned; asked again without)
    ├── Overloaded               this person already has as many turns waiting here as allowed
    ├── Regenerating             another answer to this message is being written already
    ├── Settled                  the answers to this message can no longer change
    ├── NotFound                 no such memory for this user (also for another person's id)
    ├── Forbidden                the caller may not do this (exclude someone else's message)
    ├── InvalidInput             what a person typed cannot be used (the message says why)
    ├── CardError                a character card cannot be used (the message says why)
    └── PictureError             a posted picture cannot be read (over a cap, damaged)

A degraded turn (embeddings slow or down) is not an exception: it is a counter and a log line.
A plain ValueError is a bug, never a person's mistake: the bot logs it with its traceback.
"""

from __future__ import annotations

import traceback


class EchoError(Exception):
    """Base class of the engine's deliberate errors."""


class StoreError(EchoError):
    """The database refused or failed an operation."""


class MigrationError(StoreError):
    """The schema could not be migrated to the current version."""


class ReflectionError(EchoError):
    """A reflection payload cannot be used at all."""


class BackendError(EchoError):
    """A chat or embedding backend failed."""


class BackendUnavailable(BackendError):
    """The backend could not be reached in time; a later retry may succeed."""


class BackendResponseError(BackendError):
    """The backend answered with an error or with content that cannot be used."""


class BackendRefused(BackendResponseError):
    """The backend refused the request itself: a 4xx, or a 5xx whose body says the request was
    invalid (a validation error, an unsupported parameter, a grammar it cannot build). Sending
    it again as it is will not help. `detail` is the server's own message, shortened."""

    def __init__(self, message: str, *, status: int, detail: str) -> None:
        super().__init__(message)
        self.status = status
        self.detail = detail


class ImagesRefused(BackendRefused):
    """The server refused a request for its pictures: its model does not see images (learned,
    memory.backends.vision). The same request without them may be answered."""


class NotFound(EchoError):
    """No memory with this id belongs to this user."""


class Forbidden(EchoError):
    """The caller may not do this to someone else's message or entry."""


class InvalidInput(EchoError):
    """What a person typed cannot be used; the message says what is wrong and what to type."""


class CardError(EchoError):
    """A character card cannot be read or has no usable character."""


class PictureError(EchoError):
    """A posted picture cannot be read: over a cap, damaged, or not an image (the message
    says which, without the picture's bytes)."""


class Overloaded(EchoError):
    """This person already has a turn in flight and a full queue in this place.

    `notify` is true when they should be told (at most once per notice interval)."""

    def __init__(self, *, notify: bool) -> None:
        super().__init__("too many messages waiting for an answer here")
        self.notify = notify


class Regenerating(EchoError):
    """Another answer to this message is being written already; this request is not run."""

    def __init__(self) -> None:
        super().__init__("another answer to this message is being written already")


class Settled(EchoError):
    """The answers to this message can no longer change: what was learned from it was learned
    from the one shown (or the message is no longer stored)."""


def unexpected(exc: BaseException) -> str:
    """An unexpected exception for the log: its type and where it was raised, without its
    message (which may quote what a person said)."""
    frames = "".join(traceback.format_tb(exc.__traceback__))
    return f"{type(exc).__name__} (message withheld)\n{frames.rstrip()}"
