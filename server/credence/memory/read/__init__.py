"""The read path: context, recall, the prompt block, export and the injection log."""
