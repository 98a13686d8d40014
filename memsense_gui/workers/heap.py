"""What Python's cyclic garbage collector walks while the app runs.

A full collection walks every tracked object while it holds the GIL, so no thread runs until it
ends: with a LoCoMo store open and its model loaded, about 175,000 objects and 85-175 ms, a
freeze of the window in the middle of Evaluate, Auto-tune, Find a fix or Impact
(`tools/bench_stalls.py` times the collections inside each stall). What lives as long as the
store (the app, the store, its model) is moved to CPython's permanent generation (`gc.freeze`)
once the store's model is ready, and later collections skip it.

Freezing never keeps an object alive: reference counting still frees it. Only garbage in
reference cycles among frozen objects waits, until the next store's model is ready (`settle`) or
the window closes (`release`). That is why a long job's result is not frozen too: the next run
replaces it, and its cyclic garbage would wait for the next store (single runs of the soak,
`tools/soak.py`, grew by 21-34 MB that way; but the soak's own spread on unchanged code is -3 to
+30 MB, so that figure shows no harm either, only no reason to take the risk).
"""
from __future__ import annotations

import gc


def settle() -> None:
    """Freeze what is tracked now: a store's model is ready, the moment its long-lived objects
    exist. After another store (something is frozen), everything is unfrozen and collected first,
    as the previous store's objects are garbage now; the first store's opening collects only the
    young generations (the full collection is 100-200 ms, and little of the start is garbage)."""
    if gc.get_freeze_count():
        gc.unfreeze()
        gc.collect()
    else:
        gc.collect(1)
    gc.freeze()


def release() -> None:
    """Let the collector walk everything again (the window closes)."""
    gc.unfreeze()
