#!/usr/bin/env bash
# The tables of docs/RESULTS.md: every ablation of the statistical judge on the CAIL development set and on the
# development split (leave-one-out), in one build, each run's metrics written to docs/results/<set>-<ablation>-<H>/.
#
#   . scripts/env.sh; DB_NAME=lextrace_bench H=$(git rev-parse --short HEAD) bash scripts/results_tables.sh
#
# DB_NAME names a database with the full corpus imported, indexed, graphed and trained (`make bench-db`); SPLIT
# the development split (python -m training.devsplit); CAIL the CAIL development set.
set -euo pipefail
: "${H:?set H to the short commit of the build}"
CAIL=${CAIL:-../shared/data/eval/cail_dev.jsonl}
SPLIT=${SPLIT:-.local/dev-split.jsonl}
ABLATIONS=${ABLATIONS:-full classifier_only no_graph no_researcher no_chg no_auditor naive_rag}
for ablation in $ABLATIONS; do
    python manage.py evaluate --cases "$CAIL" --ablation "$ablation" --workers 2 --no-progress \
        --label "cail_dev $ablation $H" --out "docs/results/cail_dev-$ablation-$H"
    python manage.py evaluate --cases "$SPLIT" --exclude-self --ablation "$ablation" --workers 2 --no-progress \
        --label "dev $ablation $H" --out "docs/results/dev-$ablation-$H"
done
