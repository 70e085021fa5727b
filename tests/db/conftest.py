"""The PostgreSQL fixtures (postgres, pg_url, pg_migrated_url) live in tests/conftest.py."""
