import json


def jsonl(*records) -> bytes:
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records).encode()


def statute(number=264, sub=0, text="盗窃公私财物，数额较大的，处三年以下有期徒刑。", **extra):
    from worker.agents.numerals import article_key

    labels = {264: "第二百六十四条", 266: "第二百六十六条", 133: "第一百三十三条", 67: "第六十七条", 49: "第四十九条"}
    label = labels.get(number, f"第{number}条") + ("之一" if sub == 1 else "")
    return {"law": "中华人民共和国刑法", "number": number, "sub": sub, "key": article_key(number, sub), "label": label,
            "text": text, "part": "第二编 分则", "chapter": "第五章 侵犯财产罪", "section": None,
            "charges": ["盗窃罪"] if number == 264 else [], "topic": None, "repealed": False, **extra}


def case(ext_id="c-1", fact="被告人张某盗窃他人手机一部，价值人民币三千元。", charges=("盗窃罪",), articles=(264,), months=6, **extra):
    return {"id": ext_id, "source": "test", "fact": fact, "defendants": ["张某"], "charges": list(charges),
            "articles": list(articles), "term": {"months": months, "life": False, "death": False},
            "label_source": "gold", "origin": {"repo": "tests"}, **extra}
