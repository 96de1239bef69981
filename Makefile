# The two README commands: `make demo` runs the product, `make test` the tests.
.PHONY: demo test chaos train bootstrap services-start services-stop services-status migrate shell bench-import bench-search bench-graph bench-pipeline bench-llm-cost llm-fetch llm-start llm-stop llm-demo

demo:
	bash scripts/bootstrap.sh
	bash scripts/demo.sh

test:
	bash scripts/bootstrap.sh dev
	bash scripts/test.sh $(ARGS)

# Tier N of RELIABILITY.md: kills and restarts services (scratch Redis and PostgreSQL on free
# loopback ports, never the dev ones); results go to test-artifacts/chaos-junit.xml and docs/RELIABILITY.md.
chaos:
	bash scripts/bootstrap.sh dev
	bash scripts/test.sh -m n tests/chaos -v -rA --junitxml=test-artifacts/chaos-junit.xml $(ARGS)

# Every statistical model from the current corpus in DB_NAME, on 2 cores; activated only if the gate passes.
train:
	bash -c '. scripts/env.sh && OMP_NUM_THREADS=2 OPENBLAS_NUM_THREADS=2 python manage.py train_all'

bootstrap:
	bash scripts/bootstrap.sh dev

services-start:
	bash scripts/services.sh start

services-stop:
	bash scripts/services.sh stop

services-status:
	bash scripts/services.sh status

migrate:
	bash -c '. scripts/env.sh && python manage.py migrate'

shell:
	bash -c '. scripts/env.sh && python manage.py shell'

bench-import:
	bash -c '. scripts/env.sh && bash scripts/createdb.sh --fresh lextrace_bench && DB_NAME=lextrace_bench python manage.py migrate -v0 && DB_NAME=lextrace_bench python bench/corpus_import.py'

bench-graph:
	bash -c '. scripts/env.sh && DB_NAME=lextrace_bench python manage.py migrate -v0 && DB_NAME=lextrace_bench python bench/graph_build.py'

bench-search:
	bash -c '. scripts/env.sh && DB_NAME=lextrace_bench python manage.py migrate -v0 && DB_NAME=lextrace_bench python bench/vector_recall.py'

bench-pipeline:
	bash -c '. scripts/env.sh && DB_NAME=lextrace_bench python bench/pipeline_smoke.py'

bench-llm-cost:
	bash -c '. scripts/env.sh && DB_NAME=lextrace_bench python bench/llm_cost.py'

# A real LLM on this CPU (llama.cpp, one thread; demo quality). LLM_SIZE=1.5b (default) or 0.5b.
# Not part of demo/test/CI; see docs/CONFIGURATION.md, "Running a real LLM on this machine".
LLM_SIZE ?= 1.5b

llm-fetch:
	bash scripts/llm.sh fetch $(LLM_SIZE)

llm-start:
	bash scripts/llm.sh start $(LLM_SIZE)

llm-stop:
	bash scripts/llm.sh stop

llm-demo:  # start fetches the model first when needed
	bash -c 'set -e; exports=$$(bash scripts/llm.sh start $(LLM_SIZE)); eval "$$exports"; . scripts/env.sh; python scripts/llm_demo.py $(ARGS); echo "(the server keeps running: make llm-stop)"'
