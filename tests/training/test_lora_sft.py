"""LoRA SFT: evidence spans of the answer carry label -100; a tiny random causal LM trains two steps on CPU."""

import json

import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
pytest.importorskip("peft")
tokenizers = pytest.importorskip("tokenizers")

from training import sft_export
from training.lora_sft import IGNORE, add_lora, encode, evidence_spans, evidence_texts, render, train

STATUTES = {"264": {"number": 264, "sub": 0, "text": "盗窃公私财物，数额较大的，处三年以下有期徒刑、拘役或者管制。"}}
THEFT = {"id": "c1", "fact": "被告人张某于2018年3月翻墙进入被害人家中，窃取现金人民币五千元。", "defendants": ["张某"],
         "charges": ["盗窃罪"], "articles": [264], "term": {"months": 8, "life": False, "death": False}}
RECITED = "盗窃公私财物，数额较大的，处三年以下有期徒刑"


def example(reasoning: str) -> dict:
    """The exporter's adjudicate example, its answer's reasoning replaced."""
    ex = sft_export.examples(THEFT, STATUTES)[1]
    answer = json.loads(ex["messages"][-1]["content"])
    answer["reasoning"] = reasoning
    ex["messages"][-1]["content"] = json.dumps(answer, ensure_ascii=False)
    return ex


def char_tokenizer(texts):
    chars = sorted({ch for t in texts for ch in t})
    vocab = {tok: i for i, tok in enumerate(["<pad>", "<unk>", "</s>", *chars])}
    model = tokenizers.models.WordLevel(vocab, unk_token="<unk>")
    tok = tokenizers.Tokenizer(model)
    tok.pre_tokenizer = tokenizers.pre_tokenizers.Split(tokenizers.Regex(r"[\s\S]"), behavior="isolated")
    return transformers.PreTrainedTokenizerFast(tokenizer_object=tok, pad_token="<pad>", unk_token="<unk>", eos_token="</s>")


def test_evidence_is_read_from_the_prompt_blocks_and_found_where_the_answer_copies_it():
    ex = example(f"依照刑法第二百六十四条[1]“{RECITED}”，被告人<evidence>窃取现金</evidence>构成盗窃罪。")
    sources = evidence_texts(ex["messages"])
    assert STATUTES["264"]["text"] in sources and any("翻墙进入被害人家中" in s for s in sources)
    answer = ex["messages"][-1]["content"]
    spans = evidence_spans(answer, sources)
    texts = [answer[s:e] for s, e in spans]
    assert RECITED in texts and "<evidence>窃取现金</evidence>" in texts
    assert not any("[1]" in t or "构成盗窃罪" in t for t in texts)


def test_masked_positions_carry_minus_100_and_a_tiny_random_lm_trains(tmp_path):
    examples = [example(f"依照刑法第二百六十四条[1]“{RECITED}”，被告人的行为构成盗窃罪。"),
                example("依照刑法第二百六十四条[1]，被告人的行为构成盗窃罪。")]
    tokenizer = char_tokenizer(m["content"] for ex in examples for m in ex["messages"])
    rows = [encode(tokenizer, ex) for ex in examples]
    for ex, row in zip(examples, rows):
        full, spans = render(tokenizer, ex["messages"])
        assert len(row["labels"]) == len(row["input_ids"]) == len(full) - len("</s>") + 1  # a token per character, eos
        assert all(label == IGNORE for label in row["labels"][:spans[-1][0]])  # the prompt is never trained
    answer = examples[0]["messages"][-1]["content"]
    start = render(tokenizer, examples[0]["messages"])[1][-1][0]
    recited = answer.index(RECITED)
    labels = rows[0]["labels"][start:]
    assert all(label == IGNORE for label in labels[recited:recited + len(RECITED)])  # the recited article
    assert labels[answer.index("[1]")] != IGNORE and labels[answer.index("构成盗窃罪")] != IGNORE
    assert rows[0]["labels"][-1] == tokenizer.eos_token_id  # the end of the answer is learnt
    # Without a recital, the same answer's words are all trained.
    assert sum(x != IGNORE for x in rows[1]["labels"]) == len(examples[1]["messages"][-1]["content"]) + 1

    config = transformers.LlamaConfig(vocab_size=len(tokenizer), hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                                      num_attention_heads=2, num_key_value_heads=2, max_position_embeddings=4096,
                                      pad_token_id=tokenizer.pad_token_id, eos_token_id=tokenizer.eos_token_id)
    torch.manual_seed(0)
    model = add_lora(transformers.LlamaForCausalLM(config), r=4, alpha=8, dropout=0.0, target_modules=["q_proj", "v_proj"])
    trainable = [n for n, p in model.named_parameters() if p.requires_grad]
    assert trainable and all("lora_" in n for n in trainable)
    before = {n: p.detach().clone() for n, p in model.named_parameters() if p.requires_grad}
    losses = train(model, tokenizer, rows, steps=2, batch_size=2, lr=1e-2, log_every=0)
    assert len(losses) == 2 and all(torch.isfinite(torch.tensor(losses))) and losses[0] != losses[1]
    assert any(not torch.equal(before[n], p) for n, p in model.named_parameters() if p.requires_grad)
    model.save_pretrained(tmp_path / "adapter")
    assert (tmp_path / "adapter" / "adapter_config.json").exists()


def test_weighted_trajectories_train_the_weight_1_messages_and_mask_observations():
    observation = "<<<OBSERVATION\n" + json.dumps({"text": "盗窃公私财物，数额较大的，处三年以下有期徒刑"}, ensure_ascii=False) + "\nOBSERVATION>>>"
    messages = [{"role": "system", "content": "规则", "weight": 0},
                {"role": "user", "content": "案件事实", "weight": 0},
                {"role": "assistant", "content": '{"action": "search_statutes", "query": "盗窃"}', "weight": 1},
                {"role": "user", "content": observation, "weight": 0},
                {"role": "assistant", "content": '{"action": "stop", "query": "盗窃公私财物，数额较大的"}', "weight": 1}]
    tokenizer = char_tokenizer(m["content"] for m in messages)
    row = encode(tokenizer, {"messages": messages}, min_copy=8)
    full, spans = render(tokenizer, messages)
    trained = {i for i, label in enumerate(row["labels"]) if label != IGNORE}
    first, last = spans[2], spans[4]
    assert set(range(*first)) <= trained and not trained & set(range(*spans[3]))  # actions yes, observation no
    copied = full.index("盗窃公私财物，数额较大的", last[0])
    assert not trained & set(range(copied, copied + len("盗窃公私财物，数额较大的")))  # evidence copied into an action
    assert set(range(last[0], copied)) <= trained
