# The two README commands: `make demo` runs the product, `make test` the tests.
.PHONY: demo test bootstrap services-start services-stop services-status migrate shell bench-import bench-search bench-graph bench-pipeline

demo:
	bash scripts/bootstrap.sh
	bash scripts/demo.sh

test:
	bash scripts/bootstrap.sh dev
	bash scripts/test.sh $(ARGS)

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
