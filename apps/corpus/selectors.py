from apps.corpus.models import Article, ArticleVersion, Charge, ChecklistItem, Interpretation, Precedent


def corpus_counts() -> dict[str, int]:
    return {
        "article_versions": ArticleVersion.objects.count(),
        "articles_with_checklist": Article.objects.filter(versions__checklist__isnull=False).distinct().count(),
        "checklist_items": ChecklistItem.objects.count(),
        "interpretations": Interpretation.objects.count(),
        "charges": Charge.objects.count(),
        "precedents": Precedent.objects.count(),
    }


def article_version_in_force(*, law_title: str, number: int, sub: int = 0, day) -> "ArticleVersion | None":
    """The version of an article in force on ``day`` (None if none was)."""
    from django.db.models import Q

    return (
        ArticleVersion.objects.filter(article__law__title=law_title, article__number=number, article__sub=sub)
        .filter(Q(valid_from__isnull=True) | Q(valid_from__lte=day), Q(valid_to__isnull=True) | Q(valid_to__gte=day))
        .select_related("article")
        .first()
    )
