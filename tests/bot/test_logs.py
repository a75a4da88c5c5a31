"""The terminal chat's screen gets one line per error or warning that needs the person; the
traceback stays in the log file."""

from __future__ import annotations

import io
import logging

from bot.logs import _screen_warnings


def test_an_error_with_a_traceback_is_one_line_on_screen_and_said_once() -> None:
    screen = io.StringIO()
    logger = logging.getLogger("tests.bot.test_logs.screen")
    logger.propagate = False
    handler = _screen_warnings(screen, "data/echo.log")
    logger.addHandler(handler)
    try:
        for _ in range(2):
            try:
                raise RuntimeError("Marie said: my secret")
            except RuntimeError:
                logger.exception("job %s raised an exception", "reindex")
        logger.info("not for the screen")
    finally:
        logger.removeHandler(handler)
    assert screen.getvalue() == (
        "[ERROR: job reindex raised an exception; more in data/echo.log]\n"
    )
