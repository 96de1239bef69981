"""The memo of an approved run: DOCX (python-docx), and PDF printed from the memo page by a
headless Chromium where one is installed.

A court header and the case number; per defendant the approved outcome (the what-if when the
reviewer overrode evidence) beside the machine's, the reasoning with its numbered citations, the
verified legal basis only (the articles that apply, each with its elements and the reviewer's
overrides), the evidence cited; the reviewer's signature block; and an appendix of the articles
considered and rejected.
"""

from __future__ import annotations

import io
import shutil
import subprocess
import tempfile
from pathlib import Path

from django.conf import settings
from django.template.loader import render_to_string
from django.utils import timezone
from django.utils.translation import gettext as _

from apps.cases.evidence import evidence_context
from apps.review.models import ReviewItem, WhatIf
from apps.review.services.reviews import approval_current
from apps.review.viewmodels import describe, value_label

DOCX_TYPE = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
PDF_TIMEOUT_S = 60


def case_number(case) -> str:
    """The case's reference on the memo: Lextrace's own number (the court's docket number is not held)."""
    return f"LX-{timezone.localtime(case.created_at):%Y}-{case.pk:05d}"


def memo_context(review) -> dict:
    """Per defendant: the approved outcome (the what-if when the reviewer overrode evidence) beside
    the machine's, the verified basis only (the articles that apply, with their elements), and the
    articles considered and rejected for the appendix."""
    run = review.run
    approval = approval_current(review)
    version = approval.version if approval else review.version
    whatifs = {w.result_id: w for w in WhatIf.objects.filter(review=review, version=version)}
    overrides: dict[int, dict] = {}
    for i in ReviewItem.objects.filter(review=review, version=version, action=ReviewItem.Action.OVERRIDE) \
            .select_related("actor"):
        overrides.setdefault(i.result_id, {})[(i.target, i.ref)] = i
    defendants = []
    for r in run.results.order_by("position"):
        whatif = whatifs.get(r.pk)
        machine = evidence_context(r.bundle)
        ev = evidence_context(whatif.bundle) if whatif and whatif.bundle else machine
        basis = []
        for a in ev["verified_articles"]:
            items = []
            for item in a["items"]:
                o = overrides.get(r.pk, {}).get(("item", f"{a['article_pk']}:{item['item_pk']}"))
                items.append({"number": item["number"], "question": item.get("question"),
                              "satisfied": item.get("satisfied"), "fact": item.get("span_text") or "",
                              "why": item["why"]["text"],
                              "override": f"{value_label('item', o.value)}: {o.reason}" if o else ""})
            basis.append({"label": a["label"], "law": a["law"], "text": a["text"], "decision": a["why"]["text"],
                          "charges": a["charges"], "items": items})
        rejected = [{"label": a["label"], "law": a["law"], "decision": a["why"]["text"], "charges": a["charges"]}
                    for a in ev["rejected_articles"]]
        defendants.append({
            "name": r.defendant, "ev": ev, "machine": machine, "basis": basis, "rejected": rejected,
            "whatif": bool(whatif and whatif.bundle),
            "overrides": [{"what": describe(machine, o.target, o.ref), "to": value_label(o.target, o.value),
                           "reason": o.reason, "by": o.actor.username} for o in overrides.get(r.pk, {}).values()]})
    return {"run": run, "case": run.case, "review": review, "approval": approval, "defendants": defendants,
            "case_number": case_number(run.case), "court": settings.COURT_NAME or run.case.team.name,
            "generated_at": timezone.now()}


def _reasoning_text(ev: dict) -> str:
    return "".join(s["text"] for s in ev["judgment"]["reasoning"])


def _outcome_lines(ev: dict) -> list[str]:
    if not ev["ok"]:
        return [f"{_('Outcome')}: {ev['status_label']}"]
    term = ev["judgment"]["term"]
    return [f"{_('Charges')}: {'、'.join(ev['judgment']['charges'])}",
            f"{_('Articles')}: {'、'.join(a['label'] for a in ev['judgment']['articles'])}",
            f"{_('Term')}: {term['label'] if term else '—'}"]


def memo_docx(review) -> bytes:
    from docx import Document
    from docx.enum.text import WD_ALIGN_PARAGRAPH

    c = memo_context(review)
    run, approval = c["run"], c["approval"]
    doc = Document()
    for text, size in ((c["court"], 0), (_("Review memo on a criminal case"), 1)):
        heading = doc.add_heading(text, level=size)
        heading.alignment = WD_ALIGN_PARAGRAPH.CENTER
    number = doc.add_paragraph(f"{_('Case number')}: {c['case_number']}")
    number.alignment = WD_ALIGN_PARAGRAPH.RIGHT
    doc.add_paragraph(f"{_('Case')}: {run.case.title}")
    doc.add_paragraph(f"{_('Offence date')}: {run.offence_date:%Y-%m-%d}  ·  {_('Defendants')}: {'、'.join(run.defendants)}"
                      f"  ·  {_('Run')} #{run.pk} ({_('case version')} {run.case_version})")
    for d in c["defendants"]:
        ev = d["ev"]
        doc.add_heading(f"{_('Defendant')}: {d['name']}", level=1)
        if d["whatif"]:
            doc.add_paragraph(_("The outcome below is the judgment on the evidence as the reviewer changed it; "
                                "the machine's outcome and the reviewer's overrides follow it."))
        for line in _outcome_lines(ev):
            doc.add_paragraph(line)
        if d["whatif"]:
            doc.add_paragraph(f"{_('The machine had proposed')}: " + "; ".join(_outcome_lines(d["machine"])))
        if ev["ok"]:
            doc.add_heading(_("Reasoning"), level=2)
            doc.add_paragraph(_reasoning_text(ev))
        if d["overrides"]:
            doc.add_heading(_("Reviewer's overrides"), level=2)
            for o in d["overrides"]:
                doc.add_paragraph(f"{o['what']} → {o['to']}: {o['reason']} ({o['by']})", style="List Bullet")
        for a in d["basis"]:
            doc.add_heading(f"{_('Legal basis')}: {a['label']} {a['law']}", level=2)
            doc.add_paragraph(a["text"])
            doc.add_paragraph(_("Auditor agent's conclusion") + f": {a['decision']}")
            if a["items"]:
                table = doc.add_table(rows=1, cols=4)
                table.style = "Table Grid"
                for cell, text in zip(table.rows[0].cells, [_("No."), _("Element"), _("Finding"),
                                                            _("Supporting fact / override")]):
                    cell.text = text
                for g in a["items"]:
                    cells = table.add_row().cells
                    cells[0].text, cells[1].text = str(g["number"]), g["question"] or ""
                    cells[2].text = _("satisfied") if g["satisfied"] else _("not shown")
                    cells[3].text = g["override"] or g["fact"] or g["why"]
        doc.add_heading(_("Evidence cited"), level=2)
        for e in ev["judgment"]["evidence"]:
            doc.add_paragraph(f"[{e['n']}] {e['kind_label']}: {e['text']}")
    doc.add_heading(_("Reviewer"), level=1)
    if approval:
        decided = timezone.localtime(approval.decided_at)
        doc.add_paragraph(f"{_('Approved by')}: {approval.reviewer.get_full_name() or approval.reviewer.username}"
                          f" ({approval.reviewer.username})")
        doc.add_paragraph(f"{_('Reason')}: {approval.reason}")
        doc.add_paragraph(f"{_('Date')}: {decided:%Y-%m-%d %H:%M}")
        doc.add_paragraph(f"{_('Signature')}: ______________________")
    appendix = [d for d in c["defendants"] if d["rejected"]]
    if appendix:
        doc.add_heading(_("Appendix: articles considered and rejected"), level=1)
        doc.add_paragraph(_("These articles were checked against the facts and found not to apply. "
                            "They are not part of the legal basis."))
        for d in appendix:
            for a in d["rejected"]:
                doc.add_paragraph(f"{d['name']} · {a['label']} ({'、'.join(a['charges']) or '—'}): {a['decision']}",
                                  style="List Bullet")
    if approval:
        doc.add_paragraph(f"{_('Review version')} {approval.version} · {_('Snapshot hash')} (SHA-256) "
                          f"{approval.snapshot_sha256}")
    doc.add_paragraph(f"{_('Generated')}: {timezone.localtime(c['generated_at']):%Y-%m-%d %H:%M}")
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
