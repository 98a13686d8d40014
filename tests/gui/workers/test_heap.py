"""The heap: what is tracked when a store's model is ready is frozen, so full collections skip it;
nothing is kept alive by it, and its cyclic garbage goes at the next store's opening."""
from __future__ import annotations

import gc
import weakref

import pytest

from memsense_gui.workers import heap


class Node:
    def __init__(self) -> None:
        self.me = self  # a reference cycle: only the collector frees it


@pytest.fixture(autouse=True)
def unfrozen():
    heap.release()
    yield
    heap.release()


def test_settled_objects_are_skipped_by_a_full_collection_and_the_next_settle_frees_their_garbage():
    alive = [Node() for _ in range(2000)]
    garbage = Node()
    gone = weakref.ref(garbage)
    gc.collect()  # the first settle collects the young generations only: garbage and all are old here
    heap.settle()
    assert gc.get_freeze_count() >= len(alive)
    tracked = len(gc.get_objects())
    assert tracked < gc.get_freeze_count()  # a full collection walks only what came after
    del garbage
    gc.collect()
    assert gone() is not None  # frozen cyclic garbage waits...
    heap.settle()
    assert gone() is None  # ...until the next store's model is ready
    assert all(node.me is node for node in alive) and gc.get_freeze_count() >= len(alive)


def test_the_first_settle_collects_young_garbage_before_it_freezes():
    young = Node()
    gone = weakref.ref(young)
    del young
    assert gc.get_freeze_count() == 0
    heap.settle()
    assert gone() is None and gc.get_freeze_count() > 0


def test_freezing_keeps_nothing_alive_that_reference_counting_frees():
    class Plain:
        pass

    plain = Plain()
    gone = weakref.ref(plain)
    heap.settle()
    del plain
    assert gone() is None


def test_a_store_opening_settles_the_heap_and_closing_the_window_releases_it(make_window):
    garbage = Node()
    gone = weakref.ref(garbage)
    heap.settle()
    del garbage
    window = make_window()  # opens a store and waits for its model
    assert gone() is None  # the store's opening collected the frozen garbage...
    assert gc.get_freeze_count() > len(gc.get_objects())  # ...and froze what lives on
    window.close()
    assert gc.get_freeze_count() == 0
