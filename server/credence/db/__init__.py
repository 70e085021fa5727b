"""The SQLite store, migrations and paging: the innermost layer.

Dependencies point inward: api → services → memory / reflection / notify → db. db imports only
the shared modules (files, secret_files), nothing that builds on it; tests/test_architecture.py
checks it.
"""
