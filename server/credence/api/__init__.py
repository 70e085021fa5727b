"""The HTTP controllers: validate, authorise, delegate to services and the domain packages.

Dependencies point inward: api → services → memory / reflection / notify → db. Only the app
imports api (tests/test_architecture.py checks every import, lazy ones too).
"""
