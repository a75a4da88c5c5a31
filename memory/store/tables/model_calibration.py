"""What calibration read of each embedding model, per language (see memory.vectors.calibrate)."""

from __future__ import annotations

from collections.abc import Sequence

from memory.store.db import Store

# (language, fit, separation, threshold) per language measured.
Reading = tuple[str, bool, float, float]


async def save(store: Store, model: str, readings: Sequence[Reading], *, now: float) -> None:
    """Replace the model's readings for the languages measured."""
    # The margin column holds the separation since issue 15.
    rows = [(model, lang, int(fit), sep, threshold, now) for lang, fit, sep, threshold in readings]
    await store.transact(
        lambda tx: tx.executemany(
            "INSERT INTO model_calibration (model, language, fit, margin, threshold, measured_at)"
            " VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (model, language) DO UPDATE SET"
            " fit = excluded.fit, margin = excluded.margin, threshold = excluded.threshold,"
            " measured_at = excluded.measured_at",
            rows,
        )
    )


async def unfit_languages(store: Store, model: str) -> frozenset[str]:
    """The languages the model was measured unfit for (none when never calibrated)."""
    rows = await store.fetchall(
        "SELECT language FROM model_calibration WHERE model = ? AND fit = 0", (model,)
    )
    return frozenset(str(r[0]) for r in rows)
