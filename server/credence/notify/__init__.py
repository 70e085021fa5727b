"""Notifications: web push, apprise channels, the outbox and its worker.

Dependencies point inward: api → services → memory / reflection / notify → db. notify imports
db and the shared modules, never services (except to annotate the component), api, app or cli;
tests/test_architecture.py checks it.
"""
