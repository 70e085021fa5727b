"""Episodes, beliefs, the gate and its text rules, context and export: the memory domain.

Dependencies point inward: api → services → memory / reflection / notify → db. memory imports
db and the shared modules, never reflection, notify, services, api, app or cli (reflection
builds on memory, so the gate lives here); tests/test_architecture.py checks it.
"""
