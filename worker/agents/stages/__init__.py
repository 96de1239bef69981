"""The stages of the reasoning core, in the order the pipeline runs them (worker/agents/pipeline.py)."""
