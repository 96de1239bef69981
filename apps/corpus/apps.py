from django.apps import AppConfig


class CorpusConfig(AppConfig):
    name = "apps.corpus"
    label = "corpus"
    verbose_name = "Legal corpus"
