"""The article's SGD method on one geometry, with its loss curve: does it reach a proof, and where does it stop?

Trains :func:`miner.sgd.mine_sgd` (fc_D, fc_F, fc_C; Adam on random normal batches against torch's
convolution, or the exact tensor loss with ``--exact-loss``; L1 + capped pruning, hard-example replay,
S-curve output scale, snapping and the exact proof every ``snap_every`` steps) at R = the lower bound
for a step and time budget, records the loss, scale and sparsity every 100 steps, and writes the curve
as CSV and PNG beside a JSON summary (proven card's cost, or the last loss when no proof came).

``--throughput`` measures instead what training the starts at once buys: the starts trained per second
(start-steps / s) with every start in one batched problem against one start at a time (the same code,
``starts=1``), for the sampled and the exact loss, on each ``--geometries`` geometry.

Run:    .venv/bin/python bench/sgd.py [--geometry f4x4_3x3] [--steps 30000] [--seconds 1800] [--seed 0]
                                       [--exact-loss] [--set key=value ...] [--tag T]
        .venv/bin/python bench/sgd.py --throughput [--geometries f2_3,f4x4_3x3,...] [--starts 16]
Writes build/bench/sgd_<geometry>[_exact][_<tag>].{csv,png,json}, or build/bench/sgd_throughput.json.
Runs on CUDA when present (``--set device=cpu`` to compare).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from miner.sgd import SGDConfig, mine_sgd, parse_settings, pick_device  # noqa: E402
from winohdl.core.suite import BY_NAME  # noqa: E402


def _rate(g, cfg: SGDConfig, steps: int) -> float:
    """Start-steps per second of ``steps`` steps (after 20 of warm-up), never attempting a proof."""
    warm = SGDConfig(**{**cfg.__dict__, "steps": 20})
    mine_sgd(g, warm, progress=False)
    t0 = time.perf_counter()
    mine_sgd(g, SGDConfig(**{**cfg.__dict__, "steps": steps}), progress=False)
    return cfg.starts * steps / (time.perf_counter() - t0)


MODES = {"sampled": ({"exact_loss": False, "stall_steps": 0}, 100),
         "exact": ({"exact_loss": True}, 2000),
         "schedule": ({}, 3000)}
"""What each row trains, and for how many steps: the sampled loss alone, the exact loss alone, and the
default schedule (sampled until it stalls, then exact), never attempting a proof."""


def throughput(names: list[str], starts: int, settings: dict) -> list[dict]:
    """The table of batched against one-at-a-time starts per second."""
    rows = []
    print(f"{'geometry':<14}{'loss':<10}{'steps':>6}{'one start/s':>12}{f'{starts} starts/s':>14}{'ratio':>8}",
          flush=True)
    for name in names:
        g = BY_NAME[name].geometry
        for mode, (change, steps) in MODES.items():
            base = dict(rank=g.lower_bound(), snap_every=10 ** 9, checkpoint_every=10 ** 9, **change, **settings)
            one = _rate(g, SGDConfig(**base, starts=1), steps)
            many = _rate(g, SGDConfig(**base, starts=starts), steps)
            rows.append({"geometry": name, "loss": mode, "steps": steps, "one": round(one, 1),
                         "batched": round(many, 1), "starts": starts, "ratio": round(many / one, 2),
                         "device": str(pick_device(base.get("device", "auto")))})
            print(f"{name:<14}{mode:<10}{steps:>6}{one:>12,.0f}{many:>14,.0f}{many / one:>8.2f}", flush=True)
    return rows


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--throughput", action="store_true", help="starts per second, batched against one at a time")
    ap.add_argument("--geometries", default="f2_3,f4_3,f2x2_3x3,s2_5x5,f4x4_3x3,f2x2x2_3x3x3")
    ap.add_argument("--starts", type=int, default=16)
    ap.add_argument("--geometry", default="f4x4_3x3", help="a suite name")
    ap.add_argument("--steps", type=int, default=30_000)
    ap.add_argument("--seconds", type=float, default=1800.0)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--exact-loss", action="store_true")
    ap.add_argument("--set", nargs="*", default=[], help="SGD settings as key=value (see winohdl mine --sgd)")
    ap.add_argument("--tag", default="", help="suffix of the output files (several settings side by side)")
    a = ap.parse_args()
    if a.throughput:
        rows = throughput(a.geometries.split(","), a.starts, parse_settings(a.set))
        out = ROOT / "build" / "bench" / "sgd_throughput.json"
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps({"torch_threads": __import__("torch").get_num_threads(), "rows": rows},
                                  indent=1) + "\n")
        print(f"written {out}")
        return 0
    g = BY_NAME[a.geometry].geometry
    cfg = SGDConfig(rank=g.lower_bound(), seed=a.seed, steps=a.steps, exact_loss=a.exact_loss)
    for k, v in parse_settings(a.set).items():
        setattr(cfg, k, v)
    curve: list[tuple] = []
    t0 = time.perf_counter()
    card = mine_sgd(g, cfg, budget=a.seconds, progress=sys.stderr.isatty(),
                    on_progress=lambda *row: curve.append(row))
    seconds = time.perf_counter() - t0
    stem = ROOT / "build" / "bench" / f"sgd_{a.geometry}{'_exact' if a.exact_loss else ''}{'_' + a.tag if a.tag else ''}"
    stem.parent.mkdir(parents=True, exist_ok=True)
    with open(stem.with_suffix(".csv"), "w") as fh:
        fh.write("step,loss,scale,sparsity,seconds\n")
        for row in curve:
            fh.write(",".join(f"{v:.6g}" for v in row) + "\n")
    summary = {"geometry": a.geometry, "rank": cfg.rank, "device": str(pick_device(cfg.device)),
               "config": {k: getattr(cfg, k) for k in cfg.__dataclass_fields__}, "seconds": round(seconds, 1),
               "steps_run": curve[-1][0] if curve else 0, "proven": card is not None,
               "last_loss": curve[-1][1] if curve else None, "min_loss": min((r[1] for r in curve), default=None)}
    if card is not None:
        from hdl.cost import cost_of
        summary["card"] = cost_of(card).summary()
        summary["proof_step"] = card.provenance.get("steps")
    stem.with_suffix(".json").write_text(json.dumps(summary, indent=1) + "\n")
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(7, 4))
    if curve:
        ax.semilogy([r[0] for r in curve], [max(r[1], 1e-12) for r in curve], label="loss")
        ax2 = ax.twinx()
        ax2.plot([r[0] for r in curve], [r[3] for r in curve], color="tab:orange", label="sparsity")
        ax2.set_ylabel("fraction of zero weights")
    ax.axhline(1e-2, color="grey", ls=":", label="snap-and-prove threshold")
    ax.set_xlabel("step")
    ax.set_ylabel("loss (" + ("exact tensor" if a.exact_loss else "sampled MSE") + ")")
    ax.set_title(f"SGD {a.geometry} R={cfg.rank}: " + ("proven" if card is not None else "no proof"))
    ax.legend(loc="upper right")
    fig.tight_layout()
    fig.savefig(stem.with_suffix(".png"), dpi=110)
    print(json.dumps(summary, indent=1))
    print(f"curve {stem.with_suffix('.csv')}, plot {stem.with_suffix('.png')}")
    return 0 if card is not None else 1


if __name__ == "__main__":
    raise SystemExit(main())
