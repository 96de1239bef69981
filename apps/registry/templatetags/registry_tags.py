from django import template

from apps.registry import labels

register = template.Library()

register.filter("metric_label", labels.metric_label)
register.filter("kind_label", labels.kind_label)
register.filter("headline", labels.headline)
register.filter("training_outcome", labels.training_outcome)
