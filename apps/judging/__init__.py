"""Judging: the one home where the pure reasoning core (worker/agents) meets the database. Runs,
evaluation, what-ifs and replays all judge through apps.judging.services."""
