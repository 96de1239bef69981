"""GRPO for the planner: parsing, group advantages, the replay environment, and a few steps of a tiny
random causal LM on CPU through the fixture environment (the whole pipeline)."""

import json

import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
tokenizers = pytest.importorskip("tokenizers")

from training.grpo import (
    FixtureEnvironment,
    GRPOConfig,
    PolicyPlanner,
    ReplayEnvironment,
    Segment,
    advantages,
    gold_of,
    parse_action,
    train,
)
from worker.agents.agentic import PlannerRefused
from worker.agents.prompts.planner import planner_messages

FACTS = "被告人张某于2018年3月翻墙进入被害人李某家中，秘密窃取现金人民币五千元，以非法占有为目的。"
ARTICLE = {"kind": "article", "pk": 5, "label": "第二百六十四条", "score": 0.9, "detail": "盗窃罪"}
RECORD = {"facts": FACTS, "defendant": "张某", "prejudged": [],
          "reference": [{"action": "search_statutes", "query": "盗窃罪 入户", "results": [ARTICLE]},
                        {"action": "stop", "query": "", "results": []}],
          "judgment": {"charges": ["盗窃罪"], "article_keys": ["264"], "term": {"months": 8, "life": False, "death": False}}}


def char_tokenizer():
    texts = [m["content"] for lang in ("zh", "en") for m in planner_messages(lang, facts=FACTS, defendant="张某")]
    chars = sorted({ch for t in texts for ch in t} | set('{}[]":,_ 0123456789abcdefghijklmnopqrstuvwxyz') | set("盗窃罪入户第二百六十四条"))
    vocab = {tok: i for i, tok in enumerate(["<pad>", "<unk>", "</s>", *chars])}
    tok = tokenizers.Tokenizer(tokenizers.models.WordLevel(vocab, unk_token="<unk>"))
    tok.pre_tokenizer = tokenizers.pre_tokenizers.Split(tokenizers.Regex(r"[\s\S]"), behavior="isolated")
    tok.decoder = tokenizers.decoders.Fuse()
    return transformers.PreTrainedTokenizerFast(tokenizer_object=tok, pad_token="<pad>", unk_token="<unk>", eos_token="</s>")


def tiny_model(tokenizer):
    config = transformers.LlamaConfig(vocab_size=len(tokenizer), hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                                      num_attention_heads=2, num_key_value_heads=2, max_position_embeddings=8192,
                                      pad_token_id=tokenizer.pad_token_id, eos_token_id=tokenizer.eos_token_id)
    torch.manual_seed(0)
    return transformers.LlamaForCausalLM(config)


def test_parse_action():
    assert parse_action('好的 {"action": "search_statutes", "query": "盗窃", "reason": "r"} 多余').query == "盗窃"
    assert parse_action('{"action": "stop"}').action == "stop"
    for bad in ("no json here", '{"action": "search_web"}', '{"action": '):
        with pytest.raises(PlannerRefused):
            parse_action(bad)


def test_group_advantages_are_standardised():
    a = advantages([1.0, 0.0, 0.5, 0.5])
    assert sum(a) == pytest.approx(0.0, abs=1e-9) and a[0] > a[2] > a[1]
    assert advantages([0.3, 0.3, 0.3]) == [0.0, 0.0, 0.0]  # no signal when every episode scores the same


def test_the_replay_environment_answers_recorded_searches_only():
    tokenizer = char_tokenizer()
    replies = iter(['{"action": "search_statutes", "query": "盗窃罪入户"}', '{"action": "search_precedents", "query": "入户"}',
                    '{"action": "search_statutes", "query": "盗窃罪 入户"}', "garbage", '{"action": "stop"}'])

    def scripted(messages):
        text = next(replies)
        return Segment(prompt_ids=[1], completion_ids=tokenizer(text, add_special_tokens=False)["input_ids"])

    planner = PolicyPlanner(scripted, tokenizer)
    trajectory = ReplayEnvironment(max_steps=6).run(RECORD, planner)
    steps = trajectory["steps"]
    assert [s["action"] for s in steps] == ["search_statutes", "search_precedents", "stop"]
    assert steps[0]["results"] == [ARTICLE] and steps[1]["results"] == []  # recorded vs. never made
    assert trajectory["valid"] is False  # the garbage reply was refused
    assert gold_of(RECORD) == {"charges": ["盗窃罪"], "articles": ["264"], "term": RECORD["judgment"]["term"]}


def test_a_tiny_random_lm_trains_a_few_grpo_steps_on_cpu():
    tokenizer = char_tokenizer()
    model = tiny_model(tokenizer)
    before = {n: p.detach().clone() for n, p in model.named_parameters()}
    config = GRPOConfig(steps=2, group=3, lr=1e-2, beta=0.04, max_new_tokens=12, max_steps=2, seed=3)
    env = FixtureEnvironment(max_steps=2, max_calls=2)

    # the real reward over the whole pipeline: random text never forms an action, so the format fails
    history = train(model, tokenizer, [RECORD], env, config=config, log=lambda _: None)
    assert [h["step"] for h in history] == [1, 2]
    assert all(bool(torch.isfinite(torch.tensor([h["loss"], h["kl"], h["reward_mean"]])).all()) for h in history)

    # a reward that varies between episodes (share of ASCII characters sampled) gives non-zero advantages,
    # so the policy moves and drifts from the reference (KL > 0 on the second step)
    def ascii_share(episode):
        text = "".join(tokenizer.decode(s.completion_ids) for s in episode.segments)
        return sum(ch.isascii() for ch in text) / max(len(text), 1)

    history = train(model, tokenizer, [RECORD], env, config=config, reward_fn=ascii_share, log=lambda _: None)
    assert history[0]["reward_std"] > 0
    assert any(not torch.equal(before[n], p) for n, p in model.named_parameters())
    assert history[1]["kl"] > 0
    json.dumps(history)  # the history is what the CLI writes


def test_the_cli_trains_from_a_model_directory_and_writes_the_history(tmp_path):
    from training.grpo import main

    tokenizer = char_tokenizer()
    tiny_model(tokenizer).save_pretrained(tmp_path / "model")
    tokenizer.save_pretrained(tmp_path / "model")
    prompts = tmp_path / "prompts.jsonl"
    prompts.write_text(json.dumps(RECORD, ensure_ascii=False) + "\n", encoding="utf-8")
    assert main(["--model", str(tmp_path / "model"), "--prompts", str(prompts), "--out", str(tmp_path / "out"),
                 "--steps", "1", "--group", "2", "--max-new-tokens", "6", "--max-steps", "2"]) == 0
    history = json.loads((tmp_path / "out" / "grpo_history.json").read_text(encoding="utf-8"))
    assert [h["step"] for h in history] == [1]
    assert (tmp_path / "out" / "config.json").exists()
