"""The HTTP controllers: validate, authorise, delegate to services and the domain packages.

Dependencies point inward: api → services → memory / reflection / notify → db. Only the app
imports api; api reaches the store through the domain, and db itself only for idempotent
replay (tests/test_architecture.py checks every import, lazy ones too).
"""
