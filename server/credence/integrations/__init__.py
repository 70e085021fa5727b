"""Where agents live: coding-agent hooks, instruction-file sync and import, a LangGraph store."""
