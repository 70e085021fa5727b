"""Reflection jobs: pull episodes, propose beliefs, gate them through memory, submit for review.

Dependencies point inward: api → services → memory / reflection / notify → db. reflection may
import memory and db, never services (except to annotate the component), api, app or cli;
tests/test_architecture.py checks it.
"""
