"""Access: agents, API keys, the principal a key stands for, and one-time pairing codes."""
