"""LexPath's structure-aware dense retriever: contrastive fine-tuning with Struct-Neg hard negatives.

    python -m training.dense --encoder PATH --cases ../shared/data/cases.jsonl \
        --statutes ../shared/data/statutes.jsonl --out DIR [--steps 1000 --batch-size 16 --hard-negatives 3]

A query is a precedent's facts; its positives are the articles it cites. Each training
example pairs the query with one positive and ``hard_negatives`` articles drawn by
:class:`StructNegSampler` from three sources, never from the articles the query cites:

  section     other articles of the same section (or chapter when there is no section);
  adjacent    the neighbouring article numbers (±1, ±2, …) whatever their section — the
              structurally nearest provisions, often the aggravated or the lesser variant;
  citation    articles co-cited with the positive by other precedents (the citation graph), and
              articles whose charge names end alike (诈骗罪, 合同诈骗罪, 集资诈骗罪: confusable).

The loss is InfoNCE over the batch: query i scores every positive and every hard negative of
the batch (in-batch negatives included), temperature ``tau``, cross-entropy on its own
positive. Any ``transformers`` encoder works (``AutoModel`` + ``AutoTokenizer`` from a local
path: a bundled small model on CPU, bge-m3 or bge-large-zh on a GPU host); embeddings are the
[CLS] vector (``--pooling cls``, BGE's convention) or the masked mean, L2-normalised. The
fine-tuned encoder and its tokenizer are saved with ``save_pretrained`` under ``--out`` with
``dense_training.json`` (parameters, losses, data hashes).

Imports torch: offline training only, never imported by worker/agents or the web app.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import random
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
import torch.nn.functional as F

SOURCES = ("section", "adjacent", "citation")


# ---------------------------------------------------------------------- hard negatives
class StructNegSampler:
    """Hard negatives for (query, positive article) from the hierarchy and the citation graph."""

    def __init__(self, statutes: Sequence[Mapping[str, Any]], citations: Sequence[Sequence[str]] = (), *,
                 adjacent: int = 3, seed: int = 13):
        self.text: dict[str, str] = {}
        self.section: dict[str, str] = {}
        self.number: dict[str, int] = {}
        charges: dict[str, set[str]] = {}
        for s in statutes:
            if s.get("repealed") or not s.get("text"):
                continue
            key = str(s.get("key") or s["number"])
            self.text[key] = s["text"]
            self.section[key] = s.get("section") or s.get("chapter") or ""
            self.number[key] = int(s["number"])
            charges[key] = set(s.get("charges") or [])
        self.keys = sorted(self.text, key=lambda k: (self.number[k], k))
        self._position = {k: i for i, k in enumerate(self.keys)}
        self._by_section: dict[str, list[str]] = defaultdict(list)
        for k in self.keys:
            self._by_section[self.section[k]].append(k)
        self.adjacent = adjacent
        # The citation graph: articles cited together by one precedent.
        co: dict[str, Counter] = defaultdict(Counter)
        for cited in citations:
            cited = [str(c) for c in cited if str(c) in self.text]
            for a in cited:
                for b in cited:
                    if a != b:
                        co[a][b] += 1
        self._co = co
        # Confusable by charge: articles whose charges share a head word (the last two characters before 罪).
        heads: dict[str, set[str]] = defaultdict(set)
        for k, names in charges.items():
            for name in names:
                heads[name.rstrip("罪")[-2:]].add(k)
        self._confusable = {k: sorted({o for name in charges[k] for o in heads[name.rstrip("罪")[-2:]]} - {k})
                            for k in self.keys}
        self.rng = random.Random(seed)

    def candidates(self, positive: str, source: str, exclude: set[str]) -> list[str]:
        """Every negative of one source for this positive (deterministic order)."""
        if positive not in self.text:
            return []
        if source == "section":
            found = self._by_section[self.section[positive]]
        elif source == "adjacent":
            i = self._position[positive]
            found = [self.keys[j] for d in range(1, self.adjacent + 1) for j in (i - d, i + d) if 0 <= j < len(self.keys)]
        elif source == "citation":
            found = [k for k, _ in self._co[positive].most_common()] + self._confusable.get(positive, [])
        else:
            raise ValueError(f"unknown source {source!r}")
        seen, out = set(exclude) | {positive}, []
        for k in found:
            if k not in seen:
                seen.add(k)
                out.append(k)
        return out

    def sample(self, positive: str, cited: set[str], n: int) -> list[tuple[str, str]]:
        """n (article key, source) negatives, cycling through the sources; random articles only as a last resort."""
        pools = {s: self.candidates(positive, s, cited) for s in SOURCES}
        for pool in pools.values():
            self.rng.shuffle(pool)
        drawn: list[tuple[str, str]] = []
        taken = set()
        while len(drawn) < n and any(pools.values()):
            for s in SOURCES:
                while pools[s] and pools[s][-1] in taken:
                    pools[s].pop()
                if pools[s] and len(drawn) < n:
                    k = pools[s].pop()
                    taken.add(k)
                    drawn.append((k, s))
        rest = [k for k in self.keys if k not in cited and k != positive and k not in taken]
        while len(drawn) < n and rest:
            drawn.append((rest.pop(self.rng.randrange(len(rest))), "random"))
        return drawn


# ---------------------------------------------------------------------- data
@dataclass
class Example:
    query: str
    positive: str
    cited: set[str]


def examples_from_cases(cases: Sequence[Mapping[str, Any]], sampler: StructNegSampler) -> list[Example]:
    out = []
    for case in cases:
        cited = {str(a) for a in case.get("articles") or [] if str(a) in sampler.text}
        for key in sorted(cited):
            if int(key.split("-")[0]) >= 102 and case.get("fact"):
                out.append(Example(case["fact"], key, cited))
    return out


# ---------------------------------------------------------------------- model
def embed(model, tokenizer, texts: Sequence[str], *, max_length: int, pooling: str, device) -> torch.Tensor:
    batch = tokenizer(list(texts), padding=True, truncation=True, max_length=max_length, return_tensors="pt").to(device)
    hidden = model(**batch).last_hidden_state
    if pooling == "cls":
        vec = hidden[:, 0]
    else:
        mask = batch["attention_mask"].unsqueeze(-1).to(hidden.dtype)
        vec = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1.0)
    return F.normalize(vec, dim=-1)


def info_nce(q: torch.Tensor, docs: torch.Tensor, positive_index: torch.Tensor, tau: float) -> torch.Tensor:
    """Cross-entropy of each query against every document of the batch; its positive is at positive_index."""
    return F.cross_entropy(q @ docs.T / tau, positive_index)


def train(model, tokenizer, examples: Sequence[Example], sampler: StructNegSampler, *, steps: int, batch_size: int = 16,
          hard_negatives: int = 3, lr: float = 2e-5, tau: float = 0.05, max_length: int = 256, pooling: str = "cls",
          seed: int = 13, device: str = "cpu", log: Callable[[str], None] = print, log_every: int = 10) -> list[float]:
    """Fine-tune ``model`` in place; returns the loss of every step."""
    if not examples:
        raise ValueError("no training example (no precedent cites an article of the statutes)")
    torch.manual_seed(seed)
    rng = random.Random(seed)
    model.to(device).train()
    optimiser = torch.optim.AdamW(model.parameters(), lr=lr)
    losses: list[float] = []
    order: list[int] = []
    for step in range(steps):
        if len(order) < batch_size:
            more = list(range(len(examples)))
            rng.shuffle(more)
            order.extend(more)
        batch = [examples[order.pop()] for _ in range(min(batch_size, len(examples)))]
        docs: list[str] = []
        positive_index = []
        for ex in batch:
            positive_index.append(len(docs))
            docs.append(sampler.text[ex.positive])
            docs.extend(sampler.text[k] for k, _ in sampler.sample(ex.positive, ex.cited, hard_negatives))
        q = embed(model, tokenizer, [ex.query for ex in batch], max_length=max_length, pooling=pooling, device=device)
        d = embed(model, tokenizer, docs, max_length=max_length, pooling=pooling, device=device)
        loss = info_nce(q, d, torch.tensor(positive_index, device=device), tau)
        optimiser.zero_grad()
        loss.backward()
        optimiser.step()
        losses.append(float(loss.detach()))
        if log_every and (step + 1) % log_every == 0:
            log(f"step {step + 1}/{steps} loss {sum(losses[-log_every:]) / log_every:.4f}")
    model.eval()
    return losses


@torch.no_grad()
def recall_at_k(model, tokenizer, examples: Sequence[Example], sampler: StructNegSampler, *, k: int = 10,
                max_length: int = 256, pooling: str = "cls", device: str = "cpu", batch_size: int = 32) -> float:
    """Share of (query, cited article) pairs whose article ranks in the top k of all articles."""
    keys = [k_ for k_ in sampler.keys if int(k_.split("-")[0]) >= 102]
    docs = torch.cat([embed(model, tokenizer, [sampler.text[x] for x in keys[i:i + batch_size]], max_length=max_length,
                            pooling=pooling, device=device) for i in range(0, len(keys), batch_size)])
    hits = 0
    for i in range(0, len(examples), batch_size):
        chunk = examples[i:i + batch_size]
        q = embed(model, tokenizer, [e.query for e in chunk], max_length=max_length, pooling=pooling, device=device)
        top = (q @ docs.T).topk(min(k, len(keys)), dim=1).indices.tolist()
        hits += sum(e.positive in {keys[j] for j in row} for e, row in zip(chunk, top))
    return hits / len(examples) if examples else float("nan")


# ---------------------------------------------------------------------- command line
def main(argv: Sequence[str] | None = None) -> int:
    from training.statistical import file_sha256, is_heldout, load_cases, load_records

    parser = argparse.ArgumentParser(prog="python -m training.dense", description=__doc__.split("\n\n")[0])
    parser.add_argument("--encoder", required=True, help="a local transformers encoder directory (AutoModel + AutoTokenizer)")
    parser.add_argument("--cases", required=True, type=Path)
    parser.add_argument("--statutes", required=True, type=Path)
    parser.add_argument("--out", required=True, type=Path)
    parser.add_argument("--steps", type=int, default=1000)
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--hard-negatives", type=int, default=3)
    parser.add_argument("--lr", type=float, default=2e-5)
    parser.add_argument("--tau", type=float, default=0.05)
    parser.add_argument("--max-length", type=int, default=256)
    parser.add_argument("--pooling", choices=("cls", "mean"), default="cls")
    parser.add_argument("--holdout", type=float, default=0.1)
    parser.add_argument("--seed", type=int, default=13)
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    parser.add_argument("--eval-limit", type=int, default=500, help="held-out pairs for recall@10 before and after")
    args = parser.parse_args(argv)

    from transformers import AutoModel, AutoTokenizer

    cases = load_cases(args.cases)
    statutes = load_records(args.statutes)
    train_cases = [c for c in cases if not is_heldout(c["id"], args.holdout, args.seed)]
    held_cases = [c for c in cases if is_heldout(c["id"], args.holdout, args.seed)]
    sampler = StructNegSampler(statutes, [c.get("articles") or [] for c in train_cases], seed=args.seed)
    train_ex = examples_from_cases(train_cases, sampler)
    held_ex = examples_from_cases(held_cases, sampler)[: args.eval_limit]
    tokenizer = AutoTokenizer.from_pretrained(args.encoder)
    model = AutoModel.from_pretrained(args.encoder)
    opts = {"max_length": args.max_length, "pooling": args.pooling, "device": args.device}
    model.to(args.device).eval()
    before = recall_at_k(model, tokenizer, held_ex, sampler, **opts)
    print(f"{len(train_ex)} training pairs, {len(held_ex)} held-out pairs; recall@10 before {before:.4f}", flush=True)
    started = time.perf_counter()
    losses = train(model, tokenizer, train_ex, sampler, steps=args.steps, batch_size=args.batch_size,
                   hard_negatives=args.hard_negatives, lr=args.lr, tau=args.tau, seed=args.seed,
                   log=lambda s: print(s, flush=True), **opts)
    wall = time.perf_counter() - started
    after = recall_at_k(model, tokenizer, held_ex, sampler, **opts)
    print(f"recall@10 after {after:.4f}; {args.steps} steps in {wall:.1f} s", flush=True)
    args.out.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(args.out)
    tokenizer.save_pretrained(args.out)
    report = {"created_at": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"), "encoder": args.encoder,
              "cases_sha256": file_sha256(args.cases), "statutes_sha256": file_sha256(args.statutes),
              "parameters": {k: (str(v) if isinstance(v, Path) else v) for k, v in vars(args).items()},
              "losses": losses, "wall_s": round(wall, 1), "recall_at_10": {"before": before, "after": after},
              "heldout_pairs": len(held_ex), "train_pairs": len(train_ex)}
    (args.out / "dense_training.json").write_text(json.dumps(report, ensure_ascii=False, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
