"""The memory domain: ingest, semantics (the gate), the belief lifecycle and the read path.

Its sub-packages build on each other in that order: ``ingest`` (episodes, turns, redaction,
provenance) → ``semantics`` (the sentence model, the gate and its text analysis) → ``lifecycle``
(proposals, decide(), audit) → ``read`` (context, recall, prompt block, export, injection log).
memory imports db and the shared modules, never reflection, notify, services, api, app or cli
(reflection builds on memory, so the gate lives here); tests/test_architecture.py checks both.
"""
