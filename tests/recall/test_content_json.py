"""`canonical_content` is exactly `json.dumps({"user": …, "assistant": …}, ensure_ascii=False)`:
BM25 indexes its tokens, and stored contents are compared with Memsense's."""
from __future__ import annotations

import json
import random

from core.records import canonical_content


def test_canonical_content_is_json_dumps_for_any_text():
    rnd = random.Random(7)
    alphabet = ['"', "\\", "\n", "\t", "\x00", "\x7f", "\u2028", "é", "😀", "\ud800", "a", " ", "/"]
    cases = [("", ""), ('say "hi"\n', "back\\slash")]
    for _ in range(3000):
        cases.append(tuple("".join(rnd.choice(alphabet) if rnd.random() < 0.5 else chr(rnd.randrange(0x20, 0x3000))
                                   for _ in range(rnd.randrange(0, 16))) for _ in range(2)))
    for user, assistant in cases:
        assert canonical_content(user, assistant) == json.dumps({"user": user, "assistant": assistant}, ensure_ascii=False)
