"""The reasoning core's test doubles: a tiny legal graph (fixtures), the in-memory GraphStore and
Retriever behind the same ports as the adapters, and an OpenAI-compatible stub server. Never used by
a product path; tests, benchmarks and the stub LLM of `make demo` use them."""
