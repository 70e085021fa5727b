"""PostgreSQL forward migrations, numbered like the SQLite ones, applied by db/pg_migrate."""
