"""Numbered forward migrations, applied in order at start-up."""
