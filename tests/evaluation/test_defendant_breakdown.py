"""scripts/defendant_breakdown.py: accuracy by records of one or several defendants, and the judgments that name
a strict subset of the record's gold set (the per-defendant protocol scores each against the union)."""

import pytest

from apps.evaluation.models import EvaluationCase, EvaluationRun
from scripts.defendant_breakdown import breakdown

pytestmark = pytest.mark.django_db


def test_the_breakdown_counts_what_each_kind_of_record_got_right():
    run = EvaluationRun.objects.create(label="breakdown", dataset="x.jsonl", dataset_sha256="0" * 64, dataset_path="/tmp/x",
                                       status=EvaluationRun.Status.DONE, total=2, done=2, metrics={})

    def case(position, gold, *defendants):
        EvaluationCase.objects.create(run=run, position=position, case_id=f"c{position}", fact="…", gold={"charges": gold},
                                      prediction={"defendants": list(defendants)}, bundles=[], status="judged")

    case(0, ["盗窃罪"], {"status": "judged", "charges": ["盗窃罪"]})
    case(1, ["盗窃罪", "掩饰、隐瞒犯罪所得罪"], {"status": "judged", "charges": ["盗窃罪"]},
         {"status": "judged", "charges": ["掩饰、隐瞒犯罪所得、犯罪所得收益罪"]},
         {"status": "insufficient_evidence", "charges": []})
    out = breakdown(run.pk)
    assert out["one defendant"] == {"judgments": 1, "right": 1, "refused": 0, "subset": 0}
    several = out["several defendants"]
    assert several["judgments"] == 3 and several["right"] == 0 and several["refused"] == 1 and several["subset"] == 2
