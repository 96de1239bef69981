from django.contrib import admin

from apps.core.caching import generation_bump
from apps.corpus import models


class DerivedDataFollows(admin.ModelAdmin):
    """An edit here changes what the pages derived from the corpus and keep in the shared cache (labels,
    texts, counts: apps/core/caching.py): it is derived again, as after an import."""

    def save_related(self, request, form, formsets, change):  # after the row, its inlines and relations
        super().save_related(request, form, formsets, change)
        generation_bump()

    def delete_model(self, request, obj):
        super().delete_model(request, obj)
        generation_bump()

    def delete_queryset(self, request, queryset):
        super().delete_queryset(request, queryset)
        generation_bump()


class ReadOnlyProvenance(DerivedDataFollows):
    """Imported rows are changed by importing, not by editing in place."""

    def has_delete_permission(self, request, obj=None):
        return False


@admin.register(models.ImportBatch)
class ImportBatchAdmin(ReadOnlyProvenance):
    list_display = ("filename", "kind", "status", "created_by", "created_at", "finished_at")
    list_filter = ("status", "kind")
    readonly_fields = [f.name for f in models.ImportBatch._meta.fields]

    def has_add_permission(self, request):
        return False


@admin.register(models.Law)
class LawAdmin(DerivedDataFollows):
    list_display = ("title", "kind", "issuer")
    search_fields = ("title",)


class VersionInline(admin.TabularInline):
    model = models.ArticleVersion
    fk_name = "article"
    fields = ("valid_from", "valid_to", "repealed", "text", "batch")
    readonly_fields = fields
    extra = 0
    can_delete = False


@admin.register(models.Article)
class ArticleAdmin(DerivedDataFollows):
    list_display = ("label", "key", "law")
    list_filter = ("law",)
    search_fields = ("label", "key", "versions__text")
    inlines = [VersionInline]
    filter_horizontal = ("refers_to",)


class ChecklistInline(admin.TabularInline):
    model = models.ChecklistItem
    fields = ("variant", "order", "question", "origin")
    extra = 0


@admin.register(models.ArticleVersion)
class ArticleVersionAdmin(ReadOnlyProvenance):
    list_display = ("article", "valid_from", "valid_to", "repealed", "chapter")
    list_filter = ("repealed", "chapter")
    search_fields = ("text", "article__label")
    readonly_fields = ("article", "text", "text_sha256", "valid_from", "valid_to", "supersedes", "batch", "created_at")
    inlines = [ChecklistInline]


@admin.register(models.Charge)
class ChargeAdmin(DerivedDataFollows):
    list_display = ("name", "official", "categories", "canonical")
    list_filter = ("official",)
    search_fields = ("name",)
    filter_horizontal = ("articles",)


@admin.register(models.ChecklistItem)
class ChecklistItemAdmin(DerivedDataFollows):
    list_display = ("article_version", "variant", "order", "question", "origin")
    list_filter = ("origin", "variant")
    search_fields = ("question",)


@admin.register(models.Interpretation)
class InterpretationAdmin(ReadOnlyProvenance):
    list_display = ("ext_id", "source", "para")
    search_fields = ("ext_id", "source", "text")
    filter_horizontal = ("articles",)


class OutcomeInline(admin.TabularInline):
    model = models.PrecedentOutcome
    fields = ("position", "defendant", "term_known", "term_months", "life", "death", "unresolved_articles")
    extra = 0


@admin.register(models.Precedent)
class PrecedentAdmin(ReadOnlyProvenance):
    list_display = ("ext_id", "source", "court_level", "label_source")
    list_filter = ("source", "court_level", "label_source")
    search_fields = ("ext_id", "fact")
    inlines = [OutcomeInline]


@admin.register(models.SearchIndex)
class SearchIndexAdmin(ReadOnlyProvenance):
    list_display = ("target", "method", "model_id", "status", "active", "documents", "created_at")
    list_filter = ("target", "method", "status", "active")
