"""The memo of an approved run: DOCX (python-docx), and PDF printed from the memo page by a
headless Chromium where one is installed.

Per defendant: the approved outcome (the what-if when the reviewer overrode evidence), the
reasoning with its numbered citations, the checklist grid with the reviewer's overrides, and
the evidence appendix; then the approval block with reviewer, time and snapshot hash.
"""

from __future__ import annotations

import io
import shutil
import subprocess
import tempfile
from pathlib import Path

from django.template.loader import render_to_string
from django.utils import timezone
from django.utils.translation import gettext as _

from apps.cases.selectors import evidence_context
from apps.review.models import ReviewItem, WhatIf
from apps.review.services.reviews import approval_current
from apps.review.viewmodels import describe, value_label

DOCX_TYPE = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
PDF_TIMEOUT_S = 60


def memo_context(review) -> dict:
    run = review.run
    approval = approval_current(review)
    version = approval.version if approval else review.version
    whatifs = {w.result_id: w for w in WhatIf.objects.filter(review=review, version=version)}
    overrides: dict[int, dict] = {}
    for i in ReviewItem.objects.filter(review=review, version=version, action=ReviewItem.Action.OVERRIDE):
        overrides.setdefault(i.result_id, {})[(i.target, i.ref)] = i
    defendants = []
    for r in run.results.order_by("position"):
        whatif = whatifs.get(r.pk)
        bundle = whatif.bundle if whatif and whatif.bundle else r.bundle
        ev = evidence_context(bundle)
        grid = []
        for a in ev["articles"]:
            for item in a["items"]:
                o = overrides.get(r.pk, {}).get(("item", f"{a['article_pk']}:{item['item_pk']}"))
                grid.append({"article": a["label"], "order": item.get("order"), "question": item.get("question"),
                             "satisfied": item.get("satisfied"), "fact": item.get("span_text") or "",
                             "override": f"{value_label('item', o.value)}: {o.reason}" if o else ""})
        defendants.append({"name": r.defendant, "ev": ev, "grid": grid, "whatif": bool(whatif and whatif.bundle),
                           "overrides": [{"what": describe(evidence_context(r.bundle), o.target, o.ref),
                                          "to": value_label(o.target, o.value),
                                          "reason": o.reason, "by": o.actor.username}
                                         for o in overrides.get(r.pk, {}).values()]})
    return {"run": run, "case": run.case, "review": review, "approval": approval, "defendants": defendants,
            "generated_at": timezone.now()}


def _reasoning_text(ev: dict) -> str:
    return "".join(s["text"] for s in ev["judgment"]["reasoning"])


def memo_docx(review) -> bytes:
    from docx import Document

    c = memo_context(review)
    run, approval = c["run"], c["approval"]
    doc = Document()
    doc.add_heading(_("Lextrace review memo"), level=0)
    doc.add_paragraph(f"{_('Case')}: {run.case.title}  ·  {_('Run')} #{run.pk}  ·  "
                      f"{_('case version')} {run.case_version}  ·  {_('offence date')} {run.offence_date:%Y-%m-%d}")
    doc.add_paragraph(f"{_('Strategy')}: {run.get_strategy_display()} ({run.ablation})  ·  "
                      f"{_('submitted by')} {run.requested_by.username if run.requested_by else '—'}")
    for d in c["defendants"]:
        ev = d["ev"]
        doc.add_heading(f"{_('Defendant')}: {d['name']}", level=1)
        if d["whatif"]:
            doc.add_paragraph(_("The outcome below is the Adjudicator's judgment on the evidence as the reviewer "
                                "changed it (overrides listed below)."))
        doc.add_paragraph(f"{_('Outcome')}: {ev['status_label']}")
        if ev["ok"]:
            doc.add_paragraph(f"{_('Charges')}: {'、'.join(ev['judgment']['charges'])}")
            doc.add_paragraph(f"{_('Articles')}: {'、'.join(a['label'] for a in ev['judgment']['articles'])}")
            term = ev["judgment"]["term"]
            doc.add_paragraph(f"{_('Term')}: {term['label'] if term else '—'}")
            doc.add_heading(_("Reasoning"), level=2)
            doc.add_paragraph(_reasoning_text(ev))
        if d["overrides"]:
            doc.add_heading(_("Reviewer's overrides"), level=2)
            for o in d["overrides"]:
                doc.add_paragraph(f"{o['what']} → {o['to']}: {o['reason']} ({o['by']})", style="List Bullet")
        if d["grid"]:
            doc.add_heading(_("Checklist"), level=2)
            table = doc.add_table(rows=1, cols=5)
            table.style = "Table Grid"
            for cell, text in zip(table.rows[0].cells, [_("Article"), "#", _("Checklist item"), _("Verdict"),
                                                        _("Supporting fact / override")]):
                cell.text = text
            for g in d["grid"]:
                cells = table.add_row().cells
                cells[0].text, cells[1].text, cells[2].text = g["article"], str(g["order"]), g["question"] or ""
                cells[3].text = _("satisfied") if g["satisfied"] else _("not shown")
                cells[4].text = g["override"] or g["fact"]
        doc.add_heading(_("Evidence appendix"), level=2)
        for e in ev["judgment"]["evidence"]:
            doc.add_paragraph(f"[{e['n']}] {e['kind_label']}: {e['text']}")
    doc.add_heading(_("Approval"), level=1)
    if approval:
        doc.add_paragraph(f"{_('Approved by')}: {approval.reviewer.username}  ·  {approval.decided_at:%Y-%m-%d %H:%M %Z}")
        doc.add_paragraph(f"{_('Reason')}: {approval.reason}")
        doc.add_paragraph(f"{_('Snapshot hash')} (SHA-256): {approval.snapshot_sha256}")
        doc.add_paragraph(f"{_('Review version')}: {approval.version}")
    doc.add_paragraph(f"{_('Generated')}: {c['generated_at']:%Y-%m-%d %H:%M %Z}")
    out = io.BytesIO()
    doc.save(out)
    return out.getvalue()


def pdf_renderer() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


def memo_pdf(review, *, request=None) -> bytes | None:
    """The memo page printed to PDF by headless Chromium, or None when no renderer is installed."""
    binary = pdf_renderer()
    if binary is None:
        return None
    html = render_to_string("review/memo.html", {**memo_context(review), "standalone": True}, request=request)
    with tempfile.TemporaryDirectory(prefix="lextrace-memo-") as tmp:
        source, target = Path(tmp) / "memo.html", Path(tmp) / "memo.pdf"
        source.write_text(html, encoding="utf-8")
        # A local file with no network: the memo page is self-contained (inline CSS, no scripts).
        subprocess.run([binary, "--headless", "--no-sandbox", "--disable-gpu", "--no-pdf-header-footer",
                        f"--user-data-dir={tmp}/profile", f"--print-to-pdf={target}", source.as_uri()],
                       check=True, capture_output=True, timeout=PDF_TIMEOUT_S)
        return target.read_bytes()
