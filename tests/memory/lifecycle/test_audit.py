"""The audit chain: hashes link every row, tampering is detected, rows cannot be changed."""

from __future__ import annotations

import contextlib
import io

import pytest

from credence.cli import main as credence_main
from credence.memory.lifecycle.audit import GENESIS, actor_label, row_hash, verify_rows
from tests.helpers import decide, make_agent, pending_belief
from tests.livesrv import store_flags
from tests.rawdb import REFUSED, raw_db


def _row(seq: int, prev: str, action: str = "kept") -> dict:
    row = {
        "seq": seq,
        "belief_id": "b_x",
        "agent_id": "a",
        "action": action,
        "actor": "key:k",
        "at": "2026-12-01T00:00:00.000000Z",
        "before_status": "pending",
        "after_status": "active",
        "before_hash": "h0",
        "after_hash": "h1",
        "version": seq,
        "detail": "",
        "prev_hash": prev,
    }
    row["row_hash"] = row_hash(row)
    return row


def test_verify_rows_accepts_a_chain_and_names_the_first_broken_row() -> None:
    rows = [_row(1, GENESIS)]
    for seq in range(2, 6):
        rows.append(_row(seq, rows[-1]["row_hash"]))
    assert verify_rows(rows) == (True, 5, None)
    rows[2]["actor"] = "key:someone-else"
    assert verify_rows(rows) == (False, 5, 3)
    assert verify_rows([_row(1, "f" * 64)]) == (False, 1, 1)
    assert verify_rows([]) == (True, 0, None)


@pytest.mark.parametrize("engine", ["sqlite", "postgresql"], indirect=True)
def test_triggers_refuse_update_and_delete_and_cli_detects_tampering(server, admin) -> None:
    make_agent(admin)
    decide(admin, pending_belief(admin), "keep")
    flags = store_flags(server.settings)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert credence_main(["audit", "verify", *flags]) == 0
    assert '"ok": true' in out.getvalue() and '"rows": 2' in out.getvalue()
    with raw_db(server.settings) as db:
        with pytest.raises(REFUSED, match="append-only"):
            db.execute("UPDATE audit SET actor = 'x' WHERE seq = 1")
        with pytest.raises(REFUSED, match="append-only"):
            db.execute("DELETE FROM audit")
        # Someone with file access drops the trigger and rewrites history: verify must notice.
        on_table = " ON audit" if db.dialect == "postgresql" else ""
        db.execute(f"DROP TRIGGER audit_no_update{on_table}")
        db.execute("UPDATE audit SET actor = 'key:forged' WHERE seq = 2")
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert credence_main(["audit", "verify", *flags]) == 1
    assert '"first_broken": 2' in out.getvalue()
    assert admin.get("/api/v1/audit/verify").json() == {"ok": False, "rows": 2, "first_broken": 2}


def test_actor_labels_name_keys_by_label_and_jobs_in_words() -> None:
    labels = {"k1": "Ana's phone", "k2": ""}
    assert actor_label("key:k1", labels) == "Ana's phone"
    assert actor_label("key:k2", labels) == "an unlabelled key"
    assert actor_label("key:gone", labels) == "a deleted key"
    assert actor_label("job:j_01abc", labels) == "a reflection run"
    assert actor_label("push:abc", labels) == "push:abc"
