"""Notifications: web push, apprise channels, the outbox and its worker.

Dependencies point inward: api → services → memory / reflection / notify → db. notify imports
db and the shared modules, never services, api, app or cli: its parts take what they use
(settings, store, clock, clients), and credence.components wires them; tests/test_architecture.py
checks it.
"""
