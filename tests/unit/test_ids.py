"""Identifiers sort in the order they were made, even within one millisecond."""

from __future__ import annotations

import re
import threading

from credence.ids import new_id


def test_an_id_is_a_prefix_and_26_crockford_characters() -> None:
    assert re.fullmatch(r"job_[0-9a-hjkmnp-tv-z]{26}", new_id("job"))


def test_ids_made_in_one_millisecond_keep_their_order() -> None:
    made = [new_id("b") for _ in range(5_000)]  # thousands fall in each millisecond
    assert made == sorted(made) and len(set(made)) == len(made)


def test_ids_made_on_several_threads_never_repeat() -> None:
    made: list[str] = []

    def mint() -> None:
        made.extend(new_id("e") for _ in range(2_000))

    threads = [threading.Thread(target=mint) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(set(made)) == 8_000
