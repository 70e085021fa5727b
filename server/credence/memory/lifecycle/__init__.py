"""The belief lifecycle: proposals, decisions, the audit chains and the quality report."""
