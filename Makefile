# The two README commands: `make demo` runs the product, `make test` the tests.
.PHONY: demo test chaos train bootstrap services-start services-stop services-status migrate shell bench bench-tiny bench-db llm-fetch llm-start llm-stop llm-demo

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

# Benchmarks P1-P9 (docs/PERFORMANCE.md): `make bench`, one of them `make bench-p3`, CI size `make bench-tiny`.
# P2-P7 read lextrace_bench (build it once with `make bench-db`); P1 rebuilds the scratch database
# lextrace_p1 and P8/P9 write to it. Results: a table, and JSON in .local/bench/.
bench:
	bash -c '. scripts/env.sh && python bench/run.py $(ARGS)'

bench-tiny:
	bash -c '. scripts/env.sh && python bench/run.py --tiny --scratch-db lextrace_bench_tiny $(ARGS)'

bench-p%:
	bash -c '. scripts/env.sh && python bench/run.py p$* $(ARGS)'

SHARED_DATA ?= ../shared/data
bench-db:
	bash -c '. scripts/env.sh && bash scripts/createdb.sh --fresh lextrace_bench && export DB_NAME=lextrace_bench && DB_USER=$$DB_OWNER_USER DB_PASSWORD=$$DB_OWNER_PASSWORD python manage.py migrate -v0 && python manage.py import_corpus $(SHARED_DATA) --no-progress && python manage.py build_search_indexes && python manage.py build_graph && python manage.py train_statistical --cases $(SHARED_DATA)/cases.jsonl --statutes $(SHARED_DATA)/statutes.jsonl --checklists $(SHARED_DATA)/checklists.jsonl --workers 2'

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
