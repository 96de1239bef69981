"""What runs after a judgment, on its stored bundle: replay and the stage-by-stage diff (replay.py), a
reviewer's what-if that re-runs only the Adjudicator (whatif.py), the planner trajectories of agentic
runs as training examples (trajectories.py)."""
