"""Static plots of evaluation runs for docs/RESULTS.md (matplotlib, a CJK font for category titles)."""

from __future__ import annotations

from pathlib import Path

CJK_FONTS = ["Noto Sans CJK SC", "Noto Sans CJK JP", "Noto Serif CJK SC", "WenQuanYi Zen Hei", "DejaVu Sans"]


def _pyplot():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    plt.rcParams["font.sans-serif"] = CJK_FONTS
    plt.rcParams["axes.unicode_minus"] = False
    return plt


def _pct(value) -> float:
    return 0.0 if value is None else 100.0 * float(value)


def plots_write(runs: list, directory: Path) -> list[Path]:
    """Three PNGs: accuracy per run (the ablation bars), charge accuracy per category, seconds per defendant."""
    plt = _pyplot()
    directory.mkdir(parents=True, exist_ok=True)
    labels = [r.ablation if len({x.dataset for x in runs}) == 1 else r.label for r in runs]
    written = []

    fig, ax = plt.subplots(figsize=(max(6, 1.1 * len(runs)), 3.6))
    xs = range(len(runs))
    width = 0.38
    ax.bar([x - width / 2 for x in xs], [_pct(r.metrics["charges"]["accuracy"]) for r in runs], width, label="charge accuracy")
    ax.bar([x + width / 2 for x in xs], [_pct(r.metrics["articles"]["accuracy"]) for r in runs], width, label="article accuracy")
    ax.set_xticks(list(xs), labels, rotation=30, ha="right")
    ax.set_ylabel("%")
    ax.set_ylim(0, 100)
    ax.legend(loc="upper right")
    ax.set_title(f"{runs[0].dataset}: accuracy per run")
    fig.tight_layout()
    written.append(directory / "accuracy_per_run.png")
    fig.savefig(written[-1], dpi=110)
    plt.close(fig)

    titles = sorted({t for r in runs for t in (r.metrics.get("categories") or {})})
    if titles:
        fig, ax = plt.subplots(figsize=(8, 3.8))
        width = 0.8 / len(runs)
        for i, (run, label) in enumerate(zip(runs, labels)):
            values = [_pct((run.metrics["categories"].get(t) or {}).get("charge_accuracy")) for t in titles]
            ax.bar([j + i * width - 0.4 + width / 2 for j in range(len(titles))], values, width, label=label)
        ax.set_xticks(range(len(titles)), titles, fontsize=8)
        ax.set_ylabel("charge accuracy %")
        ax.set_ylim(0, 100)
        ax.legend(fontsize=7, ncol=min(4, len(runs)))
        ax.set_title("charge accuracy per category (charge_categories.json)")
        fig.tight_layout()
        written.append(directory / "accuracy_per_category.png")
        fig.savefig(written[-1], dpi=110)
        plt.close(fig)

    fig, ax = plt.subplots(figsize=(max(6, 1.1 * len(runs)), 3.2))
    ax.bar(list(xs), [r.metrics["cost"]["seconds"]["mean"] or 0 for r in runs], color="#5f6b7a")
    ax.set_xticks(list(xs), labels, rotation=30, ha="right")
    ax.set_ylabel("seconds per defendant (mean)")
    ax.set_title("cost")
    fig.tight_layout()
    written.append(directory / "cost_per_run.png")
    fig.savefig(written[-1], dpi=110)
    plt.close(fig)
    return written
