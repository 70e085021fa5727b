"""The decided-change UPDATE: only the columns a decision changed are written."""

from __future__ import annotations

from credence.db.beliefs import _update_of
from credence.memory.lifecycle.decisions import Edit, Embedded, Keep, Transition, decide
from credence.memory.semantics.tokens import normalise
from tests.memory.lifecycle.test_decide import ACTOR, NOW, record, subject


def _set_columns(sql: str) -> list[str]:
    assignments = sql.removeprefix("UPDATE beliefs SET ").split(" WHERE ")[0]
    return [part.split(" = ")[0] for part in assignments.split(", ")]


def test_a_keep_writes_its_status_version_and_decision_and_no_other_column() -> None:
    belief = record(content_key=normalise("Lesson b_1"))  # as stored: the key of its text
    outcome = decide(subject(belief), Keep(), NOW, actor=ACTOR, if_match='"1"', embedded=None)
    assert isinstance(outcome, Transition), outcome
    (write,) = outcome.writes
    sql, [params] = _update_of(write)
    assert _set_columns(sql) == ["status", "version", "updated_at", "decided_by", "decided_at"]
    assert params == ("active", 2, NOW, ACTOR, NOW, "b_1")


def test_an_edit_writes_its_text_and_new_embedding_besides_the_decision() -> None:
    edit = Edit(content="Lesson b_1, in the reviewer's words")
    outcome = decide(
        subject(record()),
        edit,
        NOW,
        actor=ACTOR,
        if_match='"1"',
        embedded=Embedded(b"\x01" * 8, "model-x"),
    )
    assert isinstance(outcome, Transition), outcome
    (write,) = outcome.writes
    sql, [params] = _update_of(write)
    columns = _set_columns(sql)
    assert {"content", "content_key", "proposed_content", "embedding", "embedding_model"} <= set(
        columns
    )
    assert "forgotten_reason" not in columns and "superseded_by" not in columns
    assert params[columns.index("embedding")] == b"\x01" * 8
    assert params[columns.index("embedding_model")] == "model-x"
    assert params[-1] == "b_1"
