"""Training and benchmark code that never runs in a request or a worker: the commands in
``research/management/commands`` call it, and nothing under ``research/pipeline`` imports it."""
