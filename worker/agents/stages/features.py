"""The features stage: abstract ontology features of the focused facts, by the lexicon or by an LLM.

Features are abstract labels in the four dimensions of the Ontology graph
(defendant attributes, criminal behaviour, victim and property, mental state
and remorse). They never contain names, dates or exact amounts: amounts,
drug weights, blood alcohol and counts are bucketed ("金额:千元至三万元").

The lexicon is ours: regular expressions per label, kept as data (JSON) so it
can be extended and versioned; the extractor is deterministic.

:class:`LexiconFeatureExtractor` (the statistical strategy) and :class:`LLMFeatureExtractor` (the
`features` prompt through an OpenAI-compatible server, vLLM on a GPU host) have the same interface
(``version``, ``extract``). The model is asked for abstract labels; anything that still carries a digit
or a name given by the caller is dropped, so the graph never stores exact amounts or names whatever the
model returns.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from worker.agents.graph_types import DIMENSIONS
from worker.agents.numerals import chinese_to_int
from worker.agents.prompts import PROMPT_VERSION, build_prompt

DIMENSION_TITLES = {"defendant": "被告人特征", "behaviour": "行为", "victim": "对象", "mental": "主观与悔罪"}

# (dimension, label, pattern). Written for Lextrace; extend through a JSON lexicon.
DEFAULT_PATTERNS: list[tuple[str, str, str]] = [
    # --- defendant attributes
    ("defendant", "累犯", r"累犯"),
    ("defendant", "前科", r"前科|曾因.{0,20}?(?:被判处|判处|被处以|受过)|刑满释放"),
    ("defendant", "毒品再犯", r"毒品再犯"),
    ("defendant", "未成年人", r"未成年|不满十八周岁|未满十八周岁|已满十[四五六七]周岁"),
    ("defendant", "老年人", r"已满七十五周岁|年满七十五"),
    ("defendant", "在校学生", r"在校学生|系学生"),
    ("defendant", "国家工作人员", r"国家工作人员|国家机关工作人员|公职人员"),
    ("defendant", "单位犯罪", r"单位犯罪|公司.{0,6}(?:实施|作为)|法定代表人"),
    ("defendant", "精神障碍", r"精神病|精神障碍|限制刑事责任能力"),
    ("defendant", "聋哑人或盲人", r"聋哑|盲人"),
    ("defendant", "无业", r"无业|无固定职业"),
    ("defendant", "司机", r"驾驶员|司机"),
    ("defendant", "共同犯罪", r"共同犯罪|伙同|结伙|共谋|合谋|预谋|事先商量|同案人|分工"),
    ("defendant", "主犯", r"主犯|起主要作用"),
    ("defendant", "从犯", r"从犯|起次要作用|起辅助作用"),
    ("defendant", "教唆", r"教唆"),
    ("defendant", "在逃后归案", r"在逃|网上追逃|抓获归案"),
    # --- behaviour
    ("behaviour", "秘密窃取", r"窃取|盗走|偷走|偷窃|盗窃|扒窃|趁.{0,8}?不备|趁.{0,8}?无人|顺手牵羊|偷取|盗得"),
    ("behaviour", "入户", r"入户|进入.{0,10}?(?:家中|住处|住宅|卧室|房间)|翻墙进入|撬门|撬锁|破窗"),
    ("behaviour", "扒窃", r"扒窃|从.{0,10}?(?:口袋|衣兜|包内|挎包)"),
    ("behaviour", "携带凶器", r"携带.{0,6}?(?:刀|凶器|棍|枪)|持.{0,4}?(?:刀|匕首|棍|砖|斧|铁|枪)"),
    ("behaviour", "暴力", r"殴打|打伤|拳打脚踢|踢打|击打|捅刺|刺伤|砍伤|砍击|持刀|用刀|暴力|推搡|掐|勒"),
    ("behaviour", "持械", r"持.{0,4}?(?:刀|匕首|棍|砖|斧|铁管|钢管|木棒|酒瓶)|用.{0,4}?(?:刀|棍|砖|斧|酒瓶)"),
    ("behaviour", "威胁恐吓", r"威胁|恐吓|胁迫|要挟|扬言"),
    ("behaviour", "劫取财物", r"抢走|抢得|劫取|抢劫|强行(?:拿走|索要|夺走)"),
    ("behaviour", "抢夺", r"抢夺|夺走|飞车|趁.{0,6}?不备.{0,6}?(?:夺|抢)"),
    ("behaviour", "虚构事实", r"虚构|谎称|冒充|假称|伪造|编造|隐瞒真相|以.{0,12}?为由|骗取|诈骗|骗得"),
    ("behaviour", "网络电信", r"网络|微信|QQ|支付宝|网上|电话|短信|app|APP|网站|平台|转账"),
    ("behaviour", "敲诈勒索", r"敲诈|勒索|索要.{0,8}?(?:钱|费)"),
    ("behaviour", "毁坏财物", r"毁坏|砸坏|砸毁|损坏|划伤|烧毁|破坏.{0,6}?(?:车|门|窗|财物)"),
    ("behaviour", "放火", r"放火|纵火|点燃|引燃"),
    ("behaviour", "驾驶机动车", r"驾驶.{0,12}?(?:机动车|轿车|汽车|货车|摩托车|电动车|客车)|驾车"),
    ("behaviour", "醉酒驾驶", r"醉酒驾驶|酒后驾驶|醉驾|饮酒后驾驶"),
    ("behaviour", "交通肇事", r"交通事故|肇事|碰撞|相撞|撞倒|撞伤|撞死"),
    ("behaviour", "逃逸", r"逃逸|驾车逃离|逃离现场"),
    ("behaviour", "贩卖毒品", r"贩卖|出售.{0,10}?(?:毒品|甲基苯丙胺|海洛因|冰毒|K粉|氯胺酮)|交易"),
    ("behaviour", "持有毒品", r"(?:查获|缴获|持有|藏有).{0,20}?(?:毒品|甲基苯丙胺|海洛因|冰毒|麻古|氯胺酮)"),
    ("behaviour", "运输毒品", r"运输.{0,8}?毒品|携带.{0,10}?(?:毒品|甲基苯丙胺|海洛因)"),
    ("behaviour", "容留吸毒", r"容留.{0,10}?吸(?:食|毒)|提供.{0,10}?(?:场所|房间).{0,10}?吸"),
    ("behaviour", "种植毒品原植物", r"种植.{0,6}?(?:罂粟|大麻)"),
    ("behaviour", "赌博", r"赌博|赌资|抽头|设赌|开设赌场|赌场|牌九|百家乐|老虎机"),
    ("behaviour", "聚众", r"聚众|纠集|召集.{0,6}?(?:人员|多人)|多人"),
    ("behaviour", "寻衅滋事", r"寻衅|滋事|随意殴打|追逐|拦截|辱骂|起哄闹事|强拿硬要"),
    ("behaviour", "非法拘禁", r"拘禁|关押|捆绑|限制.{0,6}?人身自由|扣押.{0,6}?人"),
    ("behaviour", "性侵害", r"强奸|奸淫|发生性关系|猥亵|强行.{0,6}?(?:脱|搂抱|亲吻)"),
    ("behaviour", "组织卖淫", r"卖淫|嫖娼|性服务"),
    ("behaviour", "杀害", r"杀害|致死|掐死|勒死|杀死|砍死|捅死|故意杀人"),
    ("behaviour", "伪造证件印章", r"伪造.{0,10}?(?:证|印章|公章|驾驶证|身份证|发票)|变造"),
    ("behaviour", "非法经营", r"非法经营|无证经营|未取得.{0,10}?许可|非法销售|非法买卖"),
    ("behaviour", "假冒伪劣", r"假冒|伪劣|以假充真|以次充好|不合格产品|有毒有害"),
    ("behaviour", "职务侵占挪用", r"侵占|挪用|截留|私自收取|利用职务(?:上的)?便利"),
    ("behaviour", "受贿行贿", r"受贿|行贿|收受.{0,10}?(?:财物|好处|红包)|送给.{0,10}?(?:好处费|现金)"),
    ("behaviour", "信用卡", r"信用卡|银行卡|透支|ATM|取款机"),
    ("behaviour", "妨害公务", r"妨害公务|阻碍.{0,10}?(?:执行|执法|民警|工作人员)|袭警|抗拒抓捕"),
    ("behaviour", "枪支弹药", r"枪支|枪|子弹|弹药|火药"),
    ("behaviour", "非法采伐捕猎", r"盗伐|滥伐|砍伐|捕捞|猎捕|捕杀|野生动物|林木"),
    ("behaviour", "伤害他人", r"致.{0,6}?(?:受伤|伤害)|故意伤害|打成|伤情"),
    ("behaviour", "掩饰隐瞒赃物", r"收购.{0,10}?(?:赃|盗窃所得)|明知.{0,16}?(?:赃|犯罪所得|盗窃所得)|销赃|窝藏"),
    ("behaviour", "拒不支付报酬", r"拒不支付|拖欠.{0,10}?(?:工资|劳动报酬)|欠薪"),
    ("behaviour", "多次", r"多次|屡次|连续作案|先后.{0,4}?次"),
    ("behaviour", "未遂", r"未遂|未得逞|意志以外|被当场抓获|未能得逞"),
    ("behaviour", "肢体冲突", r"咬断|咬伤|抓伤|推倒|摔倒|撕扯|扭打|互殴|打架|厮打"),
    ("behaviour", "拿走财物", r"拿走|取走|盗取|窃得|潜逃|搬走|拆走|卸下"),
    ("behaviour", "虚开发票", r"虚开|开具.{0,10}?发票|增值税专用发票|抵扣税款"),
    ("behaviour", "生产销售食品药品", r"(?:生产|销售|加工|制作).{0,12}?(?:食品|食用|药品|药|盐|肉|油)|添加.{0,8}?(?:物质|剂)"),
    ("behaviour", "滥用职权玩忽职守", r"滥用职权|玩忽职守|失职|违规审批|不认真履行|严重不负责任"),
    ("behaviour", "污染环境", r"排放|倾倒|污染|废水|废液|危险废物|有毒物质"),
    ("behaviour", "非法收购运输出售", r"(?:收购|运输|出售|加工).{0,12}?(?:红豆杉|珍贵|保护|野生|象牙|穿山甲)"),
    ("behaviour", "淫秽物品", r"淫秽|色情"),
    ("behaviour", "合同交易", r"签订.{0,10}?合同|合同|借款|融资|集资|吸收.{0,6}?存款"),
    ("behaviour", "窝藏包庇", r"窝藏|包庇|帮助.{0,8}?逃匿|作假证明"),
    ("behaviour", "拒不执行", r"拒不执行|拒不履行|转移.{0,6}?财产"),
    ("behaviour", "贪污私分", r"贪污|侵吞|私分|套取|骗取.{0,6}?(?:公款|补贴|资金)"),
    ("behaviour", "复制传播", r"传播|出版|复制|下载|发行|侵犯著作权|盗版"),
    # --- victim and property
    ("victim", "被害人为老年人", r"老人|老年|七十.{0,2}岁|八十.{0,2}岁|年迈"),
    ("victim", "被害人为未成年人", r"幼女|儿童|未成年|学生|不满十四周岁|小孩"),
    ("victim", "被害人为妇女", r"妇女|女子|女性|被害人.{0,4}女"),
    ("victim", "被害人为残疾人或病人", r"残疾|病人|患病"),
    ("victim", "被害人为亲属或熟人", r"妻子|丈夫|前妻|前夫|女友|男友|父亲|母亲|儿子|女儿|朋友|同事|邻居|亲属|老乡|工友"),
    ("victim", "国家工作人员或执法者", r"民警|警察|执法人员|工作人员|交警|城管"),
    ("victim", "财物为手机", r"手机|iPhone|苹果|华为|OPPO|VIVO|vivo|小米"),
    ("victim", "财物为现金", r"现金|人民币.{0,10}?元|钱款|钱包|现钞"),
    ("victim", "财物为车辆", r"电动车|摩托车|自行车|轿车|汽车|三轮车|电瓶车|车辆"),
    ("victim", "财物为金银首饰", r"金项链|金手镯|金戒指|首饰|黄金|玉|手表"),
    ("victim", "财物为电子产品", r"电脑|笔记本|平板|相机|电视"),
    ("victim", "财物为电缆金属", r"电缆|电线|铜|铁|钢材|废品"),
    ("victim", "财物为烟酒", r"香烟|烟酒|白酒|茅台"),
    ("victim", "银行卡或账户", r"银行卡|账户|支付宝|微信零钱|存款"),
    ("victim", "公私财物", r"财物|物品|财产"),
    ("victim", "人身", r"被害人|受害人"),
    ("victim", "公共安全", r"道路|公共场所|人员密集|公共安全|公路"),
    ("victim", "社会管理秩序", r"秩序|公共秩序|管理秩序"),
    ("victim", "已退赔", r"已.{0,4}(?:退还|退赔|归还|返还|追回|发还)|赃物已.{0,6}(?:追回|发还)"),
    # --- mental state and remorse
    ("mental", "以非法占有为目的", r"非法占有|据为己有|占为己有|挥霍|用于.{0,8}?(?:赌博|吸毒|消费|挥霍)"),
    ("mental", "故意", r"故意|蓄意|有意|明知"),
    ("mental", "过失", r"过失|疏忽|未尽.{0,6}?注意|违反.{0,10}?(?:交通运输管理法规|操作规程|规定)"),
    ("mental", "报复泄愤", r"报复|泄愤|怀恨|发泄|不满"),
    ("mental", "因琐事纠纷", r"琐事|纠纷|口角|争吵|矛盾|发生争执"),
    ("mental", "为牟利", r"牟利|获利|营利|谋取.{0,6}?利益|赚取"),
    ("mental", "自首", r"自首|主动(?:投案|到.{0,8}?(?:派出所|公安))|投案"),
    ("mental", "如实供述", r"如实供述|供认不讳|如实交代"),
    ("mental", "坦白", r"坦白"),
    ("mental", "认罪认罚", r"认罪认罚|自愿认罪|认罪|悔罪|真诚悔"),
    ("mental", "退赃", r"退赃|退还.{0,10}?(?:赃|财物|钱款)|退缴"),
    ("mental", "赔偿", r"赔偿|赔付|退赔|补偿.{0,6}?损失"),
    ("mental", "取得谅解", r"谅解"),
    ("mental", "立功", r"立功|检举|揭发"),
    ("mental", "当庭翻供或拒不认罪", r"拒不认罪|翻供|辩称.{0,10}?(?:不是|没有)"),
]

_NUMBER = r"(\d+(?:\.\d+)?|[零〇一二两三四五六七八九十百千万亿]+)"
_AMOUNT_RE = re.compile(_NUMBER + r"\s*(万)?余?\s*元")
_DRUG_RE = re.compile(r"(?:毒品|甲基苯丙胺|海洛因|冰毒|麻古|氯胺酮|吗啡|大麻)[^。；]{0,30}?" + r"(\d+(?:\.\d+)?)\s*(千克|公斤|克)")
_ALCOHOL_RE = re.compile(r"(\d+(?:\.\d+)?)\s*(?:mg|毫克)\s*/\s*100\s*(?:ml|mL|毫升)")
_TIMES_RE = re.compile(r"(\d+|[一二两三四五六七八九十]+)\s*次")
_INJURIES = [("致人死亡", r"死亡|身亡|致死"), ("致人重伤", r"重伤"), ("致人轻伤", r"轻伤"), ("致人轻微伤", r"轻微伤")]


def _number(text: str) -> float | None:
    try:
        return float(text)
    except ValueError:
        try:
            return float(chinese_to_int(text))
        except ValueError:
            return None


def _amount_bucket(text: str) -> str | None:
    amounts = []
    for m in _AMOUNT_RE.finditer(text):
        value = _number(m.group(1))
        if value is not None:
            amounts.append(value * (10000 if m.group(2) else 1))
    if not amounts:
        return None
    top = max(amounts)
    if top < 1000:
        return "金额:千元以下"
    if top < 30000:
        return "金额:千元至三万元"
    if top < 300000:
        return "金额:三万至三十万元"
    return "金额:三十万元以上"


def drug_grams(text: str) -> list[float]:
    """The drug weights the text states, in grams."""
    return [float(m.group(1)) * (1000 if m.group(2) in ("千克", "公斤") else 1) for m in _DRUG_RE.finditer(text)]


def _drug_bucket(text: str) -> str | None:
    grams = drug_grams(text)
    if not grams:
        return None
    top = max(grams)
    return "毒品:十克以下" if top < 10 else ("毒品:十至五十克" if top < 50 else "毒品:五十克以上")


def _alcohol_bucket(text: str) -> str | None:
    values = [float(m.group(1)) for m in _ALCOHOL_RE.finditer(text)]
    if not values:
        return None
    top = max(values)
    return "醉酒:200mg以上" if top >= 200 else ("醉酒:80至200mg" if top >= 80 else "饮酒:80mg以下")


def _many_times(text: str) -> bool:
    for m in _TIMES_RE.finditer(text):
        value = _number(m.group(1))
        if value is not None and value >= 3:
            return True
    return False


@dataclass(frozen=True)
class FeatureLexicon:
    patterns: tuple[tuple[str, str, str], ...]

    @classmethod
    def default(cls) -> FeatureLexicon:
        return cls(tuple(DEFAULT_PATTERNS))

    @classmethod
    def from_json(cls, path: str | Path) -> FeatureLexicon:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
        patterns = tuple((d, label, pattern) for d, label, pattern in data["patterns"])
        for dimension, _label, pattern in patterns:
            if dimension not in DIMENSIONS:
                raise ValueError(f"unknown dimension {dimension!r}")
            re.compile(pattern)
        return cls(patterns)

    def to_json(self, path: str | Path) -> None:
        Path(path).write_text(json.dumps({"version": self.version, "patterns": list(self.patterns)}, ensure_ascii=False, indent=1),
                              encoding="utf-8")

    @property
    def version(self) -> str:
        return hashlib.sha256(json.dumps(self.patterns, ensure_ascii=False).encode("utf-8")).hexdigest()[:12]

    def compiled(self) -> list[tuple[str, str, re.Pattern]]:
        return _compile(self.patterns)


_COMPILED: dict[tuple, list] = {}


def _compile(patterns: tuple) -> list[tuple[str, str, re.Pattern]]:
    found = _COMPILED.get(patterns)
    if found is None:
        found = [(d, label, re.compile(p)) for d, label, p in patterns]
        _COMPILED[patterns] = found
    return found


@dataclass(frozen=True)
class CaseFeatures:
    defendant: tuple[str, ...] = ()
    behaviour: tuple[str, ...] = ()
    victim: tuple[str, ...] = ()
    mental: tuple[str, ...] = ()

    def labels(self) -> list[tuple[str, str]]:
        return [(d, label) for d in DIMENSIONS for label in getattr(self, d)]

    def text(self) -> str:
        """The ontology-aligned text that is embedded: the four dimensions in a fixed order."""
        return "；".join(f"{DIMENSION_TITLES[d]}：{'、'.join(getattr(self, d)) or '无'}" for d in DIMENSIONS)

    def as_dict(self) -> dict[str, list[str]]:
        return {d: list(getattr(self, d)) for d in DIMENSIONS}


def where(text: str, label: str, *, lexicon: FeatureLexicon | None = None) -> tuple[int, int] | None:
    """Where ``text`` shows the feature ``label``: the span of the first match of its lexicon pattern (or of
    its injury pattern). None when no pattern of that label matches, and for the labels counted or bucketed
    rather than matched (amounts, drug weights, "多次" by its count)."""
    for _dimension, name, pattern in (lexicon or FeatureLexicon.default()).compiled():
        if name == label and (match := pattern.search(text)):
            return match.span()
    for name, pattern in _INJURIES:
        if name == label and (match := re.search(pattern, text)):
            return match.span()
    return None


def extract_features(text: str, *, lexicon: FeatureLexicon | None = None) -> CaseFeatures:
    """Abstract four-dimension features of a fact text (deterministic, no LLM)."""
    lexicon = lexicon or FeatureLexicon.default()
    found: dict[str, list[str]] = {d: [] for d in DIMENSIONS}
    for dimension, label, pattern in lexicon.compiled():
        if label not in found[dimension] and pattern.search(text):
            found[dimension].append(label)
    for label, pattern in _INJURIES:
        if re.search(pattern, text):
            found["victim"].append(label)
            break
    for dimension, bucket in (("victim", _amount_bucket(text)), ("behaviour", _drug_bucket(text)),
                              ("behaviour", _alcohol_bucket(text))):
        if bucket:
            found[dimension].append(bucket)
    if _many_times(text) and "多次" not in found["behaviour"]:
        found["behaviour"].append("多次")
    return CaseFeatures(**{d: tuple(v) for d, v in found.items()})


class LexiconFeatureExtractor:
    """The statistical strategy behind the FeatureExtractor interface (``version``, ``extract``)."""

    def __init__(self, lexicon: FeatureLexicon | None = None):
        self.lexicon = lexicon or FeatureLexicon.default()

    @property
    def version(self) -> str:
        return f"statistical-lexicon:{self.lexicon.version}"

    def extract(self, text: str) -> CaseFeatures:
        return extract_features(text, lexicon=self.lexicon)


_DIGIT = re.compile(r"[0-9０-９]")
MAX_LABEL_CHARS = 20


class LLMFeatureExtractor:
    """The LLM strategy behind the same interface (the `features` prompt; labels cleaned as said above)."""

    def __init__(self, client, *, lang: str = "zh"):
        self.client = client
        self.lang = lang

    @property
    def version(self) -> str:
        return f"llm:{self.client.model}:{PROMPT_VERSION}"

    def extract(self, text: str, *, names: Sequence[str] = ()) -> CaseFeatures:
        prompt = build_prompt("features", self.lang, facts=text)
        value = self.client.complete_json(prompt.messages, prompt.schema, name=prompt.name, stage="features").value
        cleaned = {}
        for dimension in DIMENSIONS:
            labels = []
            for raw in value.get(dimension, []):
                label = raw.strip()
                if (not label or len(label) > MAX_LABEL_CHARS or _DIGIT.search(label)
                        or any(n and n in label for n in names) or label in labels):
                    continue
                labels.append(label)
            cleaned[dimension] = tuple(labels)
        return CaseFeatures(**cleaned)
