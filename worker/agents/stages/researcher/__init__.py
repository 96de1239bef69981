"""The Researcher: the retrieval paths and the arithmetic they share."""
