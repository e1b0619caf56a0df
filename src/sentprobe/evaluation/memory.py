"""A results store held in memory: what ``sentprobe.evaluate`` probes into (no file written).

It answers the calls the runner makes of :class:`~sentprobe.evaluation.store.ResultsStore`
(``has``, ``get``, ``add``, ``predictions_for``, ``to_frame``), so the store-backed
``run`` and the in-memory ``evaluate`` share every line of the runner.
"""

from __future__ import annotations

from collections.abc import Iterable

import pandas as pd

from sentprobe.evaluation.predictions import Predictions
from sentprobe.evaluation.store import Position, ResultRecord, _stamped, records_frame


class MemoryStore:
    """Records and their test predictions by unit key, in write order; gone with the object."""

    def __init__(self) -> None:
        self._records: dict[str, ResultRecord] = {}
        self._predictions: dict[str, Predictions] = {}

    def has(self, key: str) -> bool:
        return key in self._records

    def get(self, key: str) -> ResultRecord | None:
        return self._records.get(key)

    def add(
        self,
        record: ResultRecord,
        key: str,
        predictions: Predictions | None = None,
        *,
        position: Position | None = None,
    ) -> None:
        """As ``ResultsStore.add``: a unit written again moves to the end (write order)."""
        self._records.pop(key, None)
        self._records[key] = _stamped(record)
        self._predictions.pop(key, None)
        if predictions is not None:
            self._predictions[key] = predictions

    def predictions_for(self, keys: Iterable[str]) -> dict[str, Predictions]:
        return {k: self._predictions[k] for k in dict.fromkeys(keys) if k in self._predictions}

    def to_frame(self) -> pd.DataFrame:
        return records_frame(self._records.items())

    def __len__(self) -> int:
        return len(self._records)
