"""Lextrace's Django-free library: text search (tokenizer, BM25, embeddings), document parsing, the
canonical JSON of the audit trail, clustering, the contamination filter of training exports. The apps,
training/ and bench/ import it; it imports none of them (.importlinter)."""
