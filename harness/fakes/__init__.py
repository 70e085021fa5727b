"""Loopback fakes of the services Credence talks to: an LLM, embeddings, Web Push, a webhook."""
