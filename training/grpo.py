"""GRPO for the agentic planner (Group Relative Policy Optimisation), for GPU hosts.

    python -m training.grpo --model PATH --prompts traj.jsonl --out DIR [--env replay|fixture]
        [--steps 200 --group 8 --lr 1e-6 --beta 0.04 --max-new-tokens 128 --device cuda]

The policy is the planner: for every prompt record it plays ``--group`` episodes. In an episode the
model writes one action per turn in the planner's own conversation format
(worker/agents/prompts/planner.py); the environment runs each search and answers with the
observation; the episode ends at ``stop`` or at the caps. Each episode's trajectory is scored by
training/grpo_reward.py (answer accuracy, alignment with the reference trajectory, evidence gain,
query quality, format, penalties for verbosity and repeated retrieval). The advantage of an episode
is its reward standardised within its group, A = (r − mean) / (std + ε), and the loss is

    L = − mean_episodes( A · mean_tokens log π(action tokens) ) + β · mean_tokens KL(π ‖ π_ref)

with the k3 estimator KL ≈ exp(ref − logp) − (ref − logp) − 1 against the frozen initial model.
Only the planner's own tokens (its actions) enter the loss; observations — the retrieved evidence —
are context, never a target (as in the SFT export). One optimiser step per group batch (on-policy, so
the PPO ratio is 1 and needs no clipping).

Environments:
- ``replay`` (default; needs no database): the prompt records of training/trajectories.py; a search
  the approved run made returns that run's recorded results, any other search returns nothing, and
  the answer accuracy is not scored (no pipeline runs), only the retrieval behaviour;
- ``fixture``: the in-memory test graph of worker/agents/testing/fixtures.py with the full pipeline (the
  statistical Auditor and Adjudicator decide on the planner's evidence, so answer accuracy is
  scored) — for smoke tests of the loop.

The test runs a tiny randomly initialised causal LM for a few steps on CPU.
"""

from __future__ import annotations

import argparse
import copy
import json
import random
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace

import torch

from training.grpo_reward import RewardWeights, reward
from training.lora_sft import render
from worker.agents.agentic import Action, PlannerRefused, _norm
from worker.agents.prompts.planner import ACTIONS, planner_messages
from worker.agents.types import PlanStep


@dataclass(frozen=True)
class GRPOConfig:
    steps: int = 100
    group: int = 4  # episodes per prompt record
    prompts_per_step: int = 1
    lr: float = 1e-6
    beta: float = 0.04  # KL weight
    max_new_tokens: int = 128  # per action
    temperature: float = 1.0
    max_steps: int = 6  # planner steps per episode
    max_tokens: int = 256  # completion tokens per episode before the verbosity penalty
    seed: int = 13
    device: str = "cpu"


# ---------------------------------------------------------------------- the policy as a planner


def prompt_text(tokenizer, messages: Sequence[dict]) -> str:
    """The conversation so far, ending where the assistant's next message begins."""
    plain = [{"role": m["role"], "content": m["content"]} for m in messages]
    if getattr(tokenizer, "chat_template", None):
        return tokenizer.apply_chat_template(plain, tokenize=False, add_generation_prompt=True)
    return render(tokenizer, plain)[0] + "<|assistant|>\n"


def parse_action(text: str) -> Action:
    """The first JSON object of a reply as an action; PlannerRefused when there is none."""
    start = text.find("{")
    if start < 0:
        raise PlannerRefused("the reply holds no JSON object")
    try:
        value, _ = json.JSONDecoder().raw_decode(text[start:])
    except json.JSONDecodeError as exc:
        raise PlannerRefused(f"the reply is not valid JSON: {exc.msg}") from None
    if not isinstance(value, dict) or value.get("action") not in ACTIONS:
        raise PlannerRefused("the reply is not an action", action=str(value.get("action", ""))[:40] if isinstance(value, dict) else "")
    return Action(value["action"], str(value.get("query", "")), str(value.get("reason", "")))


@dataclass
class Segment:
    prompt_ids: list[int]
    completion_ids: list[int]


class PolicyPlanner:
    """worker.agents.agentic.Planner whose replies the policy model samples; records its segments."""

    name = "policy"

    def __init__(self, generate: Callable[[list[dict]], Segment], tokenizer, lang: str = "zh"):
        self.generate, self.tokenizer, self.lang = generate, tokenizer, lang
        self.calls = 0
        self.segments: list[Segment] = []
        self.valid = True

    def versions(self) -> dict[str, str]:
        return {"planner": "policy"}

    def next_action(self, state) -> Action:
        history = [vars(s) if not isinstance(s, dict) else s for s in state.steps]
        messages = planner_messages(self.lang, facts=state.focus, defendant=state.defendant, prejudged=state.prejudged,
                                    history=history)
        self.calls += 1
        segment = self.generate(messages)
        self.segments.append(segment)
        try:
            return parse_action(self.tokenizer.decode(segment.completion_ids, skip_special_tokens=True))
        except PlannerRefused:
            self.valid = False
            raise


def sampler(model, tokenizer, config: GRPOConfig, generator: torch.Generator) -> Callable[[list[dict]], Segment]:
    eos = tokenizer.eos_token_id

    @torch.no_grad()
    def generate(messages: list[dict]) -> Segment:
        ids = tokenizer(prompt_text(tokenizer, messages), add_special_tokens=False)["input_ids"]
        current = torch.tensor([ids], dtype=torch.long, device=config.device)
        out: list[int] = []
        past = None
        step_input = current
        for _ in range(config.max_new_tokens):
            result = model(input_ids=step_input, past_key_values=past, use_cache=True)
            past = result.past_key_values
            logits = result.logits[0, -1].float() / max(config.temperature, 1e-5)
            token = int(torch.multinomial(torch.softmax(logits, -1), 1, generator=generator))
            out.append(token)
            if token == eos:
                break
            step_input = torch.tensor([[token]], dtype=torch.long, device=config.device)
        return Segment(prompt_ids=list(ids), completion_ids=out)

    return generate


# ---------------------------------------------------------------------- environments


def _trajectory(steps: Sequence[PlanStep | dict], judgment: dict | None, planner: PolicyPlanner) -> dict:
    rows = [s if isinstance(s, dict) else vars(s) for s in steps]
    kept = [{"action": s["action"], "query": s.get("query", ""), "results": s.get("results") or []} for s in rows
            if s.get("status") in ("ok", "stop")]
    valid = planner.valid and all(s.get("status") not in ("rejected",) for s in rows)
    tokens = sum(len(seg.completion_ids) for seg in planner.segments)
    return {"steps": kept, "judgment": judgment, "valid": valid, "tokens": tokens}


class ReplayEnvironment:
    """Searches answered from the approved run's recorded results (no database)."""

    name = "replay"

    def __init__(self, max_steps: int = 6):
        self.max_steps = max_steps

    def run(self, record: dict, planner: PolicyPlanner) -> dict:
        recorded = {(r["action"], _norm(r.get("query", ""))): r.get("results") or [] for r in record.get("reference") or []}
        state = SimpleNamespace(focus=record["facts"], defendant=record.get("defendant", ""),
                                prejudged=[tuple(p) for p in record.get("prejudged") or []], steps=[])
        done: set[tuple[str, str]] = set()
        while len(state.steps) < self.max_steps:
            n = len(state.steps) + 1
            try:
                action = planner.next_action(state)
            except PlannerRefused as exc:
                state.steps.append(PlanStep(n, {}, exc.action or "?", status="rejected", refused=str(exc)))
                continue
            step = PlanStep(n, {}, action.action, action.query.strip(), action.reason)
            state.steps.append(step)
            if action.action == "stop":
                step.status = "stop"
                break
            key = (action.action, _norm(step.query))
            if not step.query or key in done:
                step.status, step.refused = ("rejected", "empty query") if not step.query else ("repeated", "already made")
                continue
            done.add(key)
            step.results = recorded.get(key, [])
        return _trajectory(state.steps, None, planner)


class FixtureEnvironment:
    """The in-memory test graph with the whole pipeline: the answer is judged too."""

    name = "fixture"

    def __init__(self, max_steps: int = 6, max_calls: int = 8):
        from worker.agents.agentic import AgenticParams
        from worker.agents.testing.fixtures import tiny_legal_graph
        from worker.agents.testing.memory_retriever import InMemoryRetriever
        from worker.agents.strategies.statistical import StatisticalStrategy

        self.graph = tiny_legal_graph()
        self.retriever = InMemoryRetriever(self.graph)
        self.strategy = StatisticalStrategy()
        self.agentic = AgenticParams(max_steps=max_steps, max_planner_calls=max_calls)

    def run(self, record: dict, planner: PolicyPlanner) -> dict:
        import datetime as dt

        from worker.agents.agentic import adjudicate_agentic
        from worker.agents.types import CaseInput

        defendant = record.get("defendant", "")
        case = CaseInput(facts=record["facts"], defendants=(defendant,) if defendant else (), offence_date=dt.date(2018, 3, 1))
        bundle = adjudicate_agentic(case, defendant, strategy=self.strategy, graph=self.graph, retriever=self.retriever,
                                    agentic=self.agentic, planner=planner)
        judgment = None
        if bundle.judgment and bundle.judgment.ok:
            term = bundle.judgment.term
            judgment = {"charges": bundle.judgment.charges, "articles": bundle.judgment.article_keys,
                        "term": vars(term) if term else None}
        return _trajectory(bundle.research.steps if bundle.research else [], judgment, planner)


# ---------------------------------------------------------------------- the update


def token_logprobs(model, prompt_ids: list[int], completion_ids: list[int], device: str) -> torch.Tensor:
    ids = torch.tensor([prompt_ids + completion_ids], dtype=torch.long, device=device)
    logits = model(input_ids=ids).logits[0, len(prompt_ids) - 1:-1].float()
    return torch.log_softmax(logits, -1).gather(-1, torch.tensor(completion_ids, device=device)[:, None])[:, 0]


def advantages(rewards: Sequence[float], eps: float = 1e-4) -> list[float]:
    mean = statistics.fmean(rewards)
    std = statistics.pstdev(rewards) if len(rewards) > 1 else 0.0
    return [(r - mean) / (std + eps) for r in rewards]


@dataclass
class Episode:
    record: dict
    trajectory: dict
    segments: list[Segment]
    reward: dict = field(default_factory=dict)


def gold_of(record: dict) -> dict:
    """The answer an episode is scored against: the record's gold labels, else the approved run's judgment."""
    if record.get("gold"):
        return record["gold"]
    judgment = record.get("judgment") or {}
    return {"charges": judgment.get("charges") or [], "articles": [str(a).split("-")[0] for a in judgment.get("article_keys") or []],
            "term": judgment.get("term")}


def train(model, tokenizer, records: Sequence[dict], env, *, config: GRPOConfig = GRPOConfig(),
          weights: RewardWeights | None = None, reward_fn: Callable[[Episode], float] | None = None,
          log: Callable[[str], None] = print, lang: str = "zh") -> list[dict]:
    """Run ``config.steps`` GRPO updates; returns per-step statistics (mean reward, loss, KL)."""
    if not records:
        raise ValueError("no prompt record")
    weights = weights or RewardWeights()
    torch.manual_seed(config.seed)
    rng = random.Random(config.seed)
    generator = torch.Generator(device="cpu").manual_seed(config.seed)
    model.to(config.device)
    reference = copy.deepcopy(model).eval()
    for p in reference.parameters():
        p.requires_grad_(False)
    optimiser = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=config.lr)
    history = []
    for step in range(config.steps):
        started = time.perf_counter()
        model.eval()
        groups: list[list[Episode]] = []
        for record in rng.sample(list(records), min(config.prompts_per_step, len(records))):
            group = []
            for _ in range(config.group):
                planner = PolicyPlanner(sampler(model, tokenizer, config, generator), tokenizer, lang)
                trajectory = env.run(record, planner)
                episode = Episode(record, trajectory, planner.segments)
                if reward_fn is None:
                    episode.reward = reward(trajectory, gold=gold_of(record), facts=record["facts"],
                                            reference=record.get("reference"), weights=weights,
                                            max_tokens=config.max_tokens).as_dict()
                else:
                    episode.reward = {"total": float(reward_fn(episode))}
                group.append(episode)
            groups.append(group)
        model.train()
        optimiser.zero_grad()
        losses, kls, count = [], [], sum(len(g) for g in groups)
        for group in groups:
            for episode, advantage in zip(group, advantages([e.reward["total"] for e in group])):
                parts = [(s.prompt_ids, s.completion_ids) for s in episode.segments if s.completion_ids]
                if not parts:
                    continue
                logps = torch.cat([token_logprobs(model, p, c, config.device) for p, c in parts])
                with torch.no_grad():
                    ref = torch.cat([token_logprobs(reference, p, c, config.device) for p, c in parts])
                kl = (torch.exp(ref - logps) - (ref - logps) - 1).mean()
                loss = (-advantage * logps.mean() + config.beta * kl) / count
                loss.backward()
                losses.append(float(loss.detach()) * count)
                kls.append(float(kl.detach()))
        optimiser.step()
        rewards = [e.reward["total"] for g in groups for e in g]
        stats = {"step": step + 1, "reward_mean": round(statistics.fmean(rewards), 6),
                 "reward_std": round(statistics.pstdev(rewards), 6),
                 "loss": round(statistics.fmean(losses), 6) if losses else 0.0,
                 "kl": round(statistics.fmean(kls), 6) if kls else 0.0,
                 "seconds": round(time.perf_counter() - started, 3)}
        history.append(stats)
        log(json.dumps(stats))
    model.eval()
    return history


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m training.grpo", description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", required=True, help="a local causal LM directory (e.g. the LoRA-SFT planner, merged)")
    parser.add_argument("--prompts", required=True, type=Path, help="JSONL from training.trajectories")
    parser.add_argument("--out", required=True, type=Path)
    parser.add_argument("--env", default="replay", choices=("replay", "fixture"))
    parser.add_argument("--lang", default="zh", choices=("zh", "en"))
    for name, default in vars(GRPOConfig()).items():
        parser.add_argument(f"--{name.replace('_', '-')}", type=type(default), default=default)
    args = parser.parse_args(argv)
    from transformers import AutoModelForCausalLM, AutoTokenizer

    config = GRPOConfig(**{name: getattr(args, name) for name in vars(GRPOConfig())})
    tokenizer = AutoTokenizer.from_pretrained(args.model)
    model = AutoModelForCausalLM.from_pretrained(args.model)
    records = [json.loads(line) for line in args.prompts.read_text(encoding="utf-8").splitlines() if line.strip()]
    env = ReplayEnvironment(config.max_steps) if args.env == "replay" else FixtureEnvironment(config.max_steps)
    history = train(model, tokenizer, records, env, config=config, lang=args.lang)
    args.out.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(args.out)
    tokenizer.save_pretrained(args.out)
    (args.out / "grpo_history.json").write_text(json.dumps(history, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
