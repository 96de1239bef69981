"""LoRA supervised fine-tuning of the agent LLM on the SFT export, with evidence masked out of the loss.

    python -m training.lora_sft --model PATH --data sft.jsonl --out DIR [--steps 1000 --batch-size 4 --lr 2e-4]

Input: the chat JSONL of training/sft_export.py (and of the reviewer-approved export): one
``{"messages": [...], ...}`` per line, the assistant's answer last. Only that last answer is
trained on; everything before it (system prompt, facts, numbered evidence) gets label -100.
Multi-turn trajectories whose messages carry ``"weight"`` (training/trajectories.py: 1 on the
planner's actions, 0 on observations) train every message of weight 1 instead.

Evidence masking (as in Legal-R1, which keeps retrieved evidence out of the loss so the model
learns to reason over evidence rather than to reproduce it): inside the answer, these spans
get label -100 as well —
  * text between ``<evidence>`` and ``</evidence>`` (trajectories that inline retrieved
    evidence), tags included;
  * every run of at least ``min_copy`` characters copied verbatim from an evidence text or
    from the facts of the prompt (the ``EVIDENCE`` and ``FACTS`` data blocks): quoted fact
    spans and recited article text.
The citations ``[n]`` and the model's own words stay in the loss.

The prompt is rendered with the tokenizer's chat template when it has one (else a plain
``<|role|>`` layout); token labels come from the fast tokenizer's character offsets. LoRA
adapters (peft) are added to ``--target-modules`` (default: the attention projections peft
knows for the architecture); the adapter is saved with ``save_pretrained``. For GPU hosts;
the test runs a tiny random model for two steps on CPU.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import torch

IGNORE = -100
_BLOCK = re.compile(r"<<<(EVIDENCE|FACTS|OBSERVATION)\n(.*?)\n\1>>>", re.S)
_TAGGED = re.compile(r"<evidence>.*?</evidence>", re.S)


# ---------------------------------------------------------------------- evidence spans
def trained_messages(messages: Sequence[dict[str, Any]]) -> list[int]:
    """Indices of the messages in the loss: those of weight 1 when weights are given, else the last answer."""
    if any("weight" in m for m in messages):
        return [i for i, m in enumerate(messages) if m.get("weight") == 1]
    return [len(messages) - 1]


def evidence_texts(messages: Sequence[dict[str, Any]]) -> list[str]:
    """The evidence, observation and fact texts shown to the model (in messages it is not trained on)."""
    out = []
    trained = set(trained_messages(messages))
    for i, message in enumerate(messages):
        if i in trained:
            continue
        for name, body in _BLOCK.findall(message.get("content") or ""):
            if name == "FACTS":
                out.append(body)
                continue
            for line in body.splitlines():
                try:
                    record = json.loads(line)
                except ValueError:
                    out.append(line)
                    continue
                if isinstance(record, dict) and isinstance(record.get("text"), str):
                    out.append(record["text"])
    return [t for t in out if t]


def evidence_spans(answer: str, sources: Sequence[str], *, min_copy: int = 12) -> list[tuple[int, int]]:
    """Character spans of ``answer`` that are evidence: tagged, or copied (>= min_copy chars) from a source."""
    spans = [(m.start(), m.end()) for m in _TAGGED.finditer(answer)]
    if sources and min_copy > 0:
        grams = {s[i:i + min_copy] for s in sources for i in range(len(s) - min_copy + 1)}
        i = 0
        while i + min_copy <= len(answer):
            if answer[i:i + min_copy] in grams:
                end = i + min_copy
                # Extend while the window ending at the next character is still copied.
                while end < len(answer) and answer[end - min_copy + 1:end + 1] in grams:
                    end += 1
                spans.append((i, end))
                i = end
            else:
                i += 1
    return _merge(spans)


def _merge(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    for start, end in sorted(spans):
        if out and start <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], end))
        else:
            out.append((start, end))
    return out


# ---------------------------------------------------------------------- tokenisation
def render(tokenizer, messages: Sequence[dict[str, Any]]) -> tuple[str, list[tuple[int, int]]]:
    """The conversation as the model sees it, and each message's content span in that text.

    A trained assistant message at the end is followed by the end-of-sequence token."""
    plain = [{"role": m["role"], "content": m["content"]} for m in messages]
    if getattr(tokenizer, "chat_template", None):
        text = tokenizer.apply_chat_template(plain, tokenize=False)
    else:
        text = "".join(f"<|{m['role']}|>\n{m['content']}\n" for m in plain)
        if plain and plain[-1]["role"] == "assistant":
            text = text[:-1]
    if plain and plain[-1]["role"] == "assistant" and tokenizer.eos_token and not text.endswith(tokenizer.eos_token):
        text += tokenizer.eos_token
    spans, cursor = [], 0
    for m in plain:
        start = text.find(m["content"], cursor)
        if start < 0:
            raise ValueError("the chat template does not reproduce a message's content verbatim")
        spans.append((start, start + len(m["content"])))
        cursor = start + len(m["content"])
    return text, spans


def encode(tokenizer, example: dict[str, Any], *, max_length: int = 4096, min_copy: int = 12) -> dict[str, list[int]]:
    """input_ids, attention_mask and labels: -100 on the prompt, on evidence spans of the answer (and on padding later)."""
    messages = example["messages"]
    if not messages or messages[-1].get("role") != "assistant":
        raise ValueError("the last message must be the assistant's answer")
    full, spans = render(tokenizer, messages)
    sources = evidence_texts(messages)
    trained_spans, masked = [], []
    for i in trained_messages(messages):
        start, end = spans[i]
        # The last answer's end-of-sequence token is a target too (the model must learn to stop).
        trained_spans.append((start, len(full) if i == len(messages) - 1 else end))
        masked += [(start + s, start + e) for s, e in evidence_spans(messages[i]["content"], sources, min_copy=min_copy)]
    enc = tokenizer(full, return_offsets_mapping=True, add_special_tokens=False, truncation=True, max_length=max_length)
    labels = []
    for token_id, (start, end) in zip(enc["input_ids"], enc["offset_mapping"]):
        stop = max(end, start + 1)
        trained = any(s <= start and stop <= e for s, e in trained_spans)
        if trained and any(start < e and s < stop for s, e in masked):
            trained = False
        labels.append(token_id if trained else IGNORE)
    return {"input_ids": list(enc["input_ids"]), "attention_mask": list(enc["attention_mask"]), "labels": labels}


def collate(rows: Sequence[dict[str, list[int]]], pad_id: int) -> dict[str, torch.Tensor]:
    width = max(len(r["input_ids"]) for r in rows)
    batch = {"input_ids": [], "attention_mask": [], "labels": []}
    for r in rows:
        pad = width - len(r["input_ids"])
        batch["input_ids"].append(r["input_ids"] + [pad_id] * pad)
        batch["attention_mask"].append(r["attention_mask"] + [0] * pad)
        batch["labels"].append(r["labels"] + [IGNORE] * pad)
    return {k: torch.tensor(v, dtype=torch.long) for k, v in batch.items()}


# ---------------------------------------------------------------------- training
def add_lora(model, *, r: int = 16, alpha: int = 32, dropout: float = 0.05, target_modules: Sequence[str] | None = None):
    from peft import LoraConfig, get_peft_model

    config = LoraConfig(r=r, lora_alpha=alpha, lora_dropout=dropout, task_type="CAUSAL_LM",
                        target_modules=list(target_modules) if target_modules else None)
    return get_peft_model(model, config)


def train(model, tokenizer, rows: Sequence[dict[str, list[int]]], *, steps: int, batch_size: int = 4, lr: float = 2e-4,
          grad_accum: int = 1, seed: int = 13, device: str = "cpu", log: Callable[[str], None] = print,
          log_every: int = 10) -> list[float]:
    """Optimise the trainable (LoRA) parameters; returns the loss of every optimiser step."""
    if not rows:
        raise ValueError("no training example")
    torch.manual_seed(seed)
    rng = random.Random(seed)
    pad_id = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else (tokenizer.eos_token_id or 0)
    model.to(device).train()
    optimiser = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=lr)
    order: list[int] = []
    losses = []
    for step in range(steps):
        total = 0.0
        for _ in range(grad_accum):
            if len(order) < batch_size:
                more = list(range(len(rows)))
                rng.shuffle(more)
                order.extend(more)
            batch = collate([rows[order.pop()] for _ in range(min(batch_size, len(rows)))], pad_id)
            out = model(**{k: v.to(device) for k, v in batch.items()})
            (out.loss / grad_accum).backward()
            total += float(out.loss.detach()) / grad_accum
        optimiser.step()
        optimiser.zero_grad()
        losses.append(total)
        if log_every and (step + 1) % log_every == 0:
            log(f"step {step + 1}/{steps} loss {sum(losses[-log_every:]) / log_every:.4f}")
    model.eval()
    return losses


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m training.lora_sft", description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", required=True, help="a local causal LM directory (AutoModelForCausalLM)")
    parser.add_argument("--data", required=True, type=Path, help="chat JSONL from training.sft_export")
    parser.add_argument("--out", required=True, type=Path)
    parser.add_argument("--steps", type=int, default=1000)
    parser.add_argument("--batch-size", type=int, default=4)
    parser.add_argument("--grad-accum", type=int, default=4)
    parser.add_argument("--lr", type=float, default=2e-4)
    parser.add_argument("--rank", type=int, default=16)
    parser.add_argument("--alpha", type=int, default=32)
    parser.add_argument("--target-modules", help="comma-separated module names (default: peft's for the architecture)")
    parser.add_argument("--max-length", type=int, default=4096)
    parser.add_argument("--min-copy", type=int, default=12, help="copied runs of at least this many characters are evidence")
    parser.add_argument("--seed", type=int, default=13)
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    parser.add_argument("--bf16", action="store_true", help="load the model in bfloat16 (GPU)")
    args = parser.parse_args(argv)

    from transformers import AutoModelForCausalLM, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(args.model)
    model = AutoModelForCausalLM.from_pretrained(args.model, dtype=torch.bfloat16 if args.bf16 else torch.float32)
    with args.data.open(encoding="utf-8") as fh:
        rows = [encode(tokenizer, json.loads(line), max_length=args.max_length, min_copy=args.min_copy)
                for line in fh if line.strip()]
    masked = sum(sum(1 for x in r["labels"] if x == IGNORE) for r in rows)
    trained = sum(sum(1 for x in r["labels"] if x != IGNORE) for r in rows)
    print(f"{len(rows)} examples; {trained} trained tokens, {masked} masked (prompt and evidence)", flush=True)
    targets = [t.strip() for t in args.target_modules.split(",")] if args.target_modules else None
    model = add_lora(model, r=args.rank, alpha=args.alpha, target_modules=targets)
    started = time.perf_counter()
    losses = train(model, tokenizer, rows, steps=args.steps, batch_size=args.batch_size, lr=args.lr,
                   grad_accum=args.grad_accum, seed=args.seed, device=args.device, log=lambda s: print(s, flush=True))
    args.out.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(args.out)
    tokenizer.save_pretrained(args.out)
    report = {"model": args.model, "data": str(args.data), "examples": len(rows), "trained_tokens": trained,
              "masked_tokens": masked, "losses": losses, "wall_s": round(time.perf_counter() - started, 1),
              "parameters": {k: (str(v) if isinstance(v, Path) else v) for k, v in vars(args).items()}}
    (args.out / "lora_sft.json").write_text(json.dumps(report, ensure_ascii=False, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
