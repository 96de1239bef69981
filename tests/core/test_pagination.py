"""The shared pagination links keep the page's filters (every list uses templates/_pagination.html)."""

from django.core.paginator import Paginator
from django.template.loader import render_to_string
from django.test import RequestFactory
from django.utils import translation


def test_page_links_keep_the_filters_and_change_only_the_page():
    request = RequestFactory().get("/evaluation/runs/7/", {"status": "judged", "category": "盗窃", "page": "2"})
    with translation.override("en"):
        html = render_to_string("_pagination.html", {"page": Paginator(range(95), 10).page(2)}, request=request)
    assert "page 2 of 10" in html
    assert 'href="?status=judged&amp;category=%E7%9B%97%E7%AA%83&amp;page=1"' in html
    assert 'href="?status=judged&amp;category=%E7%9B%97%E7%AA%83&amp;page=3"' in html


def test_a_single_page_shows_no_navigation():
    request = RequestFactory().get("/cases/")
    assert render_to_string("_pagination.html", {"page": Paginator(range(5), 10).page(1)}, request=request).strip() == ""
