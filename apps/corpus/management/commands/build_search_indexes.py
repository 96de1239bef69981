import time

from django.core.management.base import BaseCommand, CommandError

from apps.corpus.services.indexing import DEFAULT_DENSE_BACKEND, IndexBuildBusy, search_indexes_build


class Command(BaseCommand):
    help = "Build BM25 and dense (pgvector HNSW) indexes over articles and precedents; switch them in when done."

    def add_arguments(self, parser):
        parser.add_argument("--dense", default=DEFAULT_DENSE_BACKEND, help="lsa (trained here, default), e5 or openai")
        parser.add_argument("--if-outdated", action="store_true",
                            help="do nothing when every index is active and holds the whole corpus")

    def handle(self, *args, dense, if_outdated, **options):
        from apps.corpus.selectors import search_indexes_current

        if if_outdated and search_indexes_current():
            self.stdout.write("search indexes hold the corpus; nothing to do")
            return
        start = time.perf_counter()
        try:
            indexes = search_indexes_build(
                dense_backend=dense, progress=lambda m: self.stdout.write(f"  [{time.perf_counter() - start:6.1f} s] {m}"))
        except IndexBuildBusy as exc:
            raise CommandError(str(exc)) from None
        for index in indexes:
            self.stdout.write(f"{index.method}:{index.target} — {index.documents} documents, model {index.model_id}")
