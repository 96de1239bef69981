"""The names of the strategies, retrieval modes and ablations: the one list that the pipeline, the
judging service, the run model's choices, the forms and the commands all take them from."""

STRATEGIES = ("statistical", "llm")

# "fixed": the Researcher's four paths; "agentic": the planner loop (worker/agents/agentic.py).
MODES = ("fixed", "agentic")

ABLATIONS = ("full", "no_graph", "no_researcher", "no_sem", "no_com", "no_chg", "no_art", "no_auditor", "naive_rag",
             "classifier_only")
