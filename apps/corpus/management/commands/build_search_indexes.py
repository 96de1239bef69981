import time

from django.core.management.base import BaseCommand, CommandError

from apps.corpus.services.indexing import DEFAULT_DENSE_BACKEND, IndexBuildBusy, search_indexes_build


class Command(BaseCommand):
    help = "Build BM25 and dense (pgvector HNSW) indexes over articles and precedents; switch them in when done."

    def add_arguments(self, parser):
        parser.add_argument("--dense", default=DEFAULT_DENSE_BACKEND, help="lsa (trained here, default), e5 or openai")
        parser.add_argument("--if-missing", action="store_true", help="do nothing when active indexes exist")

    def handle(self, *args, dense, if_missing, **options):
        from apps.corpus.models import SearchIndex

        if if_missing and SearchIndex.objects.filter(active=True, target__in=["articles", "precedents"]).count() == 4:
            self.stdout.write("search indexes present; nothing to do")
            return
        start = time.perf_counter()
        try:
            indexes = search_indexes_build(
                dense_backend=dense, progress=lambda m: self.stdout.write(f"  [{time.perf_counter() - start:6.1f} s] {m}"))
        except IndexBuildBusy as exc:
            raise CommandError(str(exc)) from None
        for index in indexes:
            self.stdout.write(f"{index.method}:{index.target} — {index.documents} documents, model {index.model_id}")
