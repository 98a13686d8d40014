"""Shared builders for the GUI tests: a fake engine and store builder over synthetic pools,
synthetic judged questions with evaluate and tune callables over them, the Evaluation view in a
window with a questions file chosen (`evaluation_window`), and small helpers."""
from __future__ import annotations

import json
import threading
import time
import zlib
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QApplication, QMessageBox

from core.config import Config
from core.errors import Cancelled, MemsenseError
from core.evaluation.evaluate import evaluate, recall_pools
from core.rank.synthetic import synthetic_pool
from core.evaluation.tune import split_users, tune
from core.records import Question
from memsense_gui.models.table import ID_ROLE, RowsModel, bold_font

DISPLAY = Qt.ItemDataRole.DisplayRole


class FakeEngine:
    """The Engine interface over seeded synthetic pools; `delay` seconds per slow call."""

    USERS = ("synth-a", "synth-b")
    pools_deepen = False  # synthetic pools are as deep as any config asks
    model_text: str | None = None
    model_path: str | None = None

    def __init__(self, location: str, *, delay: float = 0.0, fail_open: str | None = None,
                 model_delay: float | None = None):
        if fail_open:
            raise MemsenseError(fail_open)
        self.location = location
        self.delay = delay
        self.model_delay = delay if model_delay is None else model_delay
        self.closed = False
        self.recalls: list[tuple[str, str]] = []
        self.calls: list[str] = []  # "recall" and "chunks", in the order the engine thread ran them
        self.threads: set[int] = set()  # threads that used the engine (the model loads elsewhere)
        self.model_threads: set[int] = set()
        self.model_ready = threading.Event()

    def _slow(self) -> None:
        self.threads.add(threading.get_ident())
        if self.delay:
            time.sleep(self.delay)

    def load_model(self) -> None:
        """As the real engine's: only the embedder, on the model thread, while the engine works on."""
        self.model_threads.add(threading.get_ident())
        time.sleep(self.model_delay)
        self.model_ready.set()

    def users(self) -> list[str]:
        return list(self.USERS)

    def pool(self, user_id: str, query: str = "q"):
        seed = sum(map(ord, user_id + query)) % 1000
        return synthetic_pool(n_sessions=10, turns_per_session=8, dim=16, seed=seed, user_id=user_id, query=query)

    def chunks(self, user_id: str):
        self.calls.append("chunks")
        return list(self.pool(user_id).chunks)

    def recall(self, user_id: str, query: str, depth: int | None = 0):
        self.model_ready.wait()  # the real embedder waits for its model too
        self._slow()
        self.recalls.append((user_id, query))
        self.calls.append("recall")
        return self.pool(user_id, query)

    def recall_for(self, user_id: str, query: str, cfg):
        return self.recall(user_id, query)

    def note(self, user_id: str) -> str:
        return ""

    def close(self) -> None:
        self.closed = True


def fake_builder(delay: float = 0.0, steps: int = 5):
    """A `build_store` stand-in: reports progress, honours cancel, writes a marker dir."""
    def build(dataset: Path, location: Path, *, mode: str = "hybrid", progress=None, cancel=None, **_):
        for i in range(steps):
            if cancel is not None and cancel.is_set():
                raise Cancelled("cancelled")
            if progress:
                progress(i, steps, f"step {i}")
            time.sleep(delay / steps)
        Path(location).mkdir(parents=True, exist_ok=True)
        (Path(location) / "meta.json").write_text("{}")
        return {"mode": mode}
    return build


# ---- synthetic judged questions, and evaluate / tune callables over them -------------------------
def synthetic_recall(user, query, depth=0):
    return synthetic_pool(n_sessions=10, seed=zlib.crc32(f"{user}|{query}".encode()), user_id=user, query=query)


def eval_questions(users=("synth-a", "synth-b"), n=8) -> list[Question]:
    return [Question(f"{u}:q{i}", u, f"question {i} about topic {i}", "", 1 + i % 4,
                     (1 + i % 10,) if i % 2 else (1 + i % 10, 1 + (i + 3) % 10)) for u in users for i in range(n)]


def synthetic_evaluate(presets, k, progress, cancel):
    return evaluate(synthetic_recall, eval_questions(), presets, k, progress, cancel)


TUNE_USERS = ("synth-a", "synth-b", "synth-c")


def tune_questions(n=5) -> list[Question]:
    return [Question(f"{u}:q{i}", u, f"question {i} for {u}", "", 1 + i % 4, (1 + i % 10, 1 + (i + 3) % 10))
            for u in TUNE_USERS for i in range(n)]


def synthetic_tune(train, test, metric, trials, progress, cancel, pool_limits=True, space=None, on_trial=None):
    qs = tune_questions()
    pools = recall_pools(lambda u, q, d: synthetic_pool(n_sessions=10, seed=zlib.crc32(q.encode()), user_id=u,
                                                        query=q), qs, 64)
    tr, te = split_users(qs, train, test)
    shaped = {} if space is None else {"knobs": space.knobs, "start": space.start(Config())}
    return tune(pools, tr, te, metric, trials=trials, sensitivity_points=3, progress=progress, cancel=cancel,
                on_trial=on_trial, **shaped)


# ---- the Evaluation view in a window, with a questions file ------------------------------------------
def judged_items(n: int = 5) -> list[dict]:
    """`eval_questions(n=n)` as a questions file's items, each gold session as an evidence turn."""
    return [{"user": q.user_id, "question": q.text, "answer": "", "category": q.category,
             "evidence": [f"D{s}:1" for s in q.gold_sessions]} for q in eval_questions(n=n)]


def per_user_items(users, per_user: int = 4) -> list[dict]:
    """`per_user` questions for each of `users`, question i with gold session i + 1."""
    return [{"user": u, "question": f"question {i} for {u}", "answer": "", "category": 1, "evidence": [f"D{i + 1}:1"]}
            for u in users for i in range(per_user)]


def questions_file(folder: Path, items: list[dict]) -> Path:
    path = folder / "questions.json"
    path.write_text(json.dumps({"questions": items}))
    return path


@pytest.fixture
def evaluation_window(make_window, tmp_path):
    """open(questions="judged", window=None) -> (window, view): the Evaluation view installed in
    `window` (else a new window over fake engines) with a questions file chosen: "judged" for
    `judged_items()`, "per_user" for `per_user_items` of the store's users, or a list of items."""
    from memsense_gui.window.evaluation import install_evaluation

    def open_(questions: str | list[dict] = "judged", window=None):
        window = window or make_window()
        view = install_evaluation(window)
        items = {"judged": judged_items, "per_user": lambda: per_user_items(window.ctx.users)}[questions]() \
            if isinstance(questions, str) else questions
        view.source.set_path(questions_file(tmp_path, items))
        return window, view

    return open_


# ---- a real engine whose pools deepen themselves, and the threads that deepen them -------------------
@pytest.fixture(scope="module")
def scan_engine(tmp_path_factory):
    """The embedded engine over one synthetic user "u" (`tests.recall.test_deepen.user_data`):
    its pools keep their query's route scores and can be deepened (`core.recall.pool.deepen`)."""
    from core.cli.bench_scale import RandomEmbedder
    from core.recall.backends import open_store
    from core.recall.engine import Engine
    from tests.recall.test_deepen import DIM, user_data

    location = tmp_path_factory.mktemp("scan") / "store"
    store = open_store(location, create=True)
    store.write_user("u", *user_data(120, seed=5), RandomEmbedder(DIM).key, DIM)
    store.close()
    engine = Engine(location, embedder=RandomEmbedder(DIM))
    yield engine
    engine.close()


def deepening_threads(monkeypatch, hold: threading.Event | None = None) -> list[threading.Thread]:
    """From now on, the thread of every ranking of route lists deeper than a pool held before
    (`ScanPools._rank`: a re-cut of a deeper pool is not one); with `hold`, each ranking waits
    for it to be set (what the UI shows meanwhile is then seen for sure)."""
    from core.recall.deepen import ScanPools

    threads: list[threading.Thread] = []
    rank = ScanPools._rank

    def recorded(self, depth):
        threads.append(threading.current_thread())
        if hold is not None:
            hold.wait(30)
        return rank(self, depth)

    monkeypatch.setattr(ScanPools, "_rank", recorded)
    return threads


# ---- small helpers ------------------------------------------------------------------------------------
def run_autotune(qtbot, panel, *, folds: int | None = None, trials: int | None = None, timeout: int = 60_000):
    """Start the auto-tune panel (with `folds` and `trials` set when given) and wait for its result:
    a TuneResult, or a CrossValidation with 2 or more folds."""
    if folds is not None:
        panel.folds_spin.setValue(folds)
    if trials is not None:
        panel.trials_spin.setValue(trials)
    with qtbot.waitSignal(panel.tuning_finished, timeout=timeout) as blocker:
        panel.start()
    return blocker.args[0]


def cell(model, row, col, role=DISPLAY):
    return model.data(model.index(row, col), role)


def result_ids(window) -> list[str]:
    m = window.results.model
    return [m.index(r, 0).data(ID_ROLE) for r in range(m.rowCount())]


def error_boxes(window) -> list[QMessageBox]:
    return [w for w in window.findChildren(QMessageBox) if w.objectName() == "error-dialog" and w.isVisible()]


def undo_keys(qtbot, window, redo: bool = False) -> None:
    """Ctrl+Z (Ctrl+Shift+Z with `redo`) typed into `window`, made the active window first."""
    window.activateWindow()
    qtbot.waitUntil(lambda: QApplication.activeWindow() is window, timeout=2000)
    ctrl = Qt.KeyboardModifier.ControlModifier
    qtbot.keyClick(window, Qt.Key.Key_Z, ctrl | Qt.KeyboardModifier.ShiftModifier if redo else ctrl)



def panel_shows(tuning, cfg: Config) -> bool:
    """Whether the tuning panel's widgets show `cfg`: its scheme and switches, and every slider at the
    knob's value to the slider's precision (a tuned value finer than a slider's step shows rounded)."""
    from memsense_gui.views.sliders import ALL_KNOBS

    switches = (tuning.scheme_combo.currentText(), tuning.session_first_box.isChecked(),
                tuning.fallback_box.isChecked(), tuning.distinct_box.isChecked())
    if switches != (cfg.scheme, cfg.session_first, cfg.fallback_fill, cfg.distinct_sessions):
        return False
    return all(abs(slider.value() - ALL_KNOBS[name].value(cfg)) <= 0.5 * 10 ** -ALL_KNOBS[name].decimals + 1e-9
               for name, slider in tuning.sliders.items())


class CellRows(RowsModel):
    """A small table of every kind of cell a model paints: text, a right-aligned number, a
    coloured number, a highlighted row and a bold one (`set_rows(range(n))`)."""

    HEADERS = ("#", "text", "score")
    NUMERIC = frozenset({2})

    def display(self, row, col):
        return (str(row + 1), f"row {row} of the table", f"{row / 7:.3f}")[col]

    def raw(self, row, col):
        return row / 7 if col == 2 else self.display(row, col)

    def foreground(self, row, col):
        return QColor("#b00020") if row % 3 == 0 and col == 2 else None

    def background(self, row, col):
        return QColor("#e0f0ff") if row == 4 else None

    def font(self, row, col):
        return bold_font() if row == 1 else None
