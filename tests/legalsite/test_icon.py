"""The site's icon: every page links one of our own, and it is there to serve (no 404 in a browser's console)."""

import re

from django.contrib.staticfiles import finders


def test_every_page_links_an_icon_the_static_files_hold(client, db):
    page = client.get("/accounts/login/").content.decode()
    icon = re.search(r'<link rel="icon" href="/static/([^"]+)"', page)
    assert icon, "the base template links the icon"
    path = finders.find(icon.group(1))
    assert path and open(path, encoding="utf-8").read().lstrip().startswith("<svg")
