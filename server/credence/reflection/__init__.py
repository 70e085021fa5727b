"""Reflection jobs: pull episodes, propose beliefs, gate them through memory, submit for review.

Dependencies point inward: api → services → memory / reflection / notify → db. reflection may
import memory and db, never services, api, app or cli: it takes what it uses as
``ReflectionDeps`` (reflection/deps.py), built by the composition root. tests/test_architecture.py
checks it.
"""
