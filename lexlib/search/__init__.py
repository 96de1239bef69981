"""Lexical and dense search primitives for the legal corpus.

Pure Python (no Django imports) so the reasoning core in ``worker/agents`` and
offline jobs can use them without a configured project:

* :mod:`.tokenize`   -- jieba-based Chinese legal tokenizer with a legal user dictionary;
* :mod:`.bm25`       -- BM25 index over pre-tokenized documents, saved as npz + JSON;
* :mod:`.embeddings` -- embedding backends (trained LSA, bundled e5, OpenAI-compatible HTTP)
  behind one interface and a name -> dotted-path registry.

Artefacts are never pickled: an uploaded pickle could execute code on load.
"""
