"""The SGD method survives interruption: checkpoints (contents, resumption, refusals), Ctrl-C before
and after a proof (in-process and as SIGINT to the command), and the command with progress on.

Every run is seeded; nothing asserts a wall time. Torch runs on one thread here: the networks
are tiny and several threads on a busy machine are many times slower than one.
"""

from __future__ import annotations

import dataclasses
import fcntl
import os
import pty
import select
import signal
import struct
import subprocess
import sys
import termios
import time
from pathlib import Path

import pytest
import torch

from hdl.cost import cost_key
from miner import sgd as sgd_module
from miner.search import Method, MineSettings, mine_card
from miner.sgd import (BilinearNet, SGDConfig, SparseTensor, _new_run, _prune, _train_step, mine_sgd,
                       parse_settings)
from miner.sgd_checkpoint import CHECKPOINT_FORMAT, load_checkpoint
from winohdl.core.suite import BY_NAME
from winohdl.core.card import AlgorithmCard
from winohdl.core.errors import Interrupted, LimitError, WinohdlError
from winohdl.core.geometry import Geometry

ROOT = Path(__file__).resolve().parent.parent
F23 = Geometry((2,), (3,), (1,), (1,))          # R = 4; SGD proves it in ~1000 steps at batch 64..256
NO_SNAP = 10 ** 9                               # snap_every that never tries a proof
WAIT = 120                                      # generous bound on any one wait (never reached when healthy)


@pytest.fixture(autouse=True)
def one_thread():
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


def short(**kw) -> SGDConfig:
    """A fast f2_3 run that never attempts a proof (unless told)."""
    base = dict(rank=4, steps=200, starts=3, batch=64, hard_buffer=32, snap_every=NO_SNAP,
                checkpoint_every=NO_SNAP, seed=3, device="cpu")
    base.update(kw)
    return SGDConfig(**base)


def one_error_line(err: str) -> str:
    assert "Traceback" not in err
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), err
    return lines[0]


# ---- checkpoint contents and resumption ---------------------------------------------------------------

def test_checkpoint_records_the_run_and_loads_weights_only(tmp_path):
    ckpt = tmp_path / "c.sgd-r4-s3.pt"
    cfg = short()
    assert mine_sgd(F23, cfg, checkpoint=ckpt, progress=False) is None
    state = torch.load(ckpt, map_location="cpu", weights_only=True)
    assert state["format"] == CHECKPOINT_FORMAT
    assert state["geometry"] == F23.to_dict() and state["rank"] == 4 and state["seed"] == 3
    assert state["settings"] == dataclasses.asdict(cfg) and state["step"] == 200
    # each start's replay buffer: its hardest samples with torch's outputs
    assert [t.shape for t in state["hard"]] == [(3, 32, F23.n_d), (3, 32, F23.n_g), (3, 32, F23.n_y)]
    assert {k: tuple(v.shape) for k, v in state["net"].items()} == {"fc_D": (3, 4, F23.n_d),
                                                                    "fc_F": (3, 4, F23.n_g), "fc_C": (3, F23.n_y, 4)}
    assert state["exact"] is False  # 200 steps: the sampled loss has not stalled over 500
    assert state["opt"]["state"] and isinstance(state["gen"], torch.Tensor) and state["scale"] > 1.0
    mask = os.umask(0)
    os.umask(mask)
    assert ckpt.stat().st_mode & 0o777 == 0o666 & ~mask  # usual permissions, not a temp file's 0600
    assert [p.name for p in tmp_path.iterdir()] == [ckpt.name]  # no temporary left behind


def test_resume_continues_the_same_run(tmp_path):
    whole, halves = tmp_path / "whole.pt", tmp_path / "halves.pt"
    assert mine_sgd(F23, short(steps=200), checkpoint=whole, progress=False) is None
    assert mine_sgd(F23, short(steps=100), checkpoint=halves, progress=False) is None
    assert torch.load(halves, weights_only=True)["step"] == 100
    # the step budget may grow on resume; network, optimiser, generator and replay buffer carry on
    assert mine_sgd(F23, short(steps=200), checkpoint=halves, resume=True, progress=False) is None
    a, b = (torch.load(p, weights_only=True) for p in (whole, halves))
    assert b["step"] == 200
    for key in a["net"]:
        torch.testing.assert_close(b["net"][key], a["net"][key], rtol=1e-5, atol=1e-6)
    for ours, theirs in zip(b["hard"], a["hard"]):
        torch.testing.assert_close(ours, theirs, rtol=1e-5, atol=1e-6)
    assert torch.equal(b["gen"], a["gen"]) and b["scale"] == pytest.approx(a["scale"])


def test_resume_reaches_a_proof(tmp_path):
    ckpt = tmp_path / "c.pt"
    assert mine_sgd(F23, short(steps=300, batch=256, hard_buffer=512, seed=1), checkpoint=ckpt,
                    progress=False) is None
    card = mine_sgd(F23, short(steps=5000, batch=256, hard_buffer=512, seed=1, snap_every=500), checkpoint=ckpt,
                    resume=True, progress=False)
    assert card is not None and card.rank == 4 and card.provenance["steps"] > 300
    assert AlgorithmCard.from_json(card.to_json()) == card


@pytest.mark.parametrize("change, words", [
    ({"seed": 4}, "seed 3, not 4"),
    ({"rank": 5}, "rank 4, not 5"),
    ({"batch": 128}, "batch 64 there, 128 here"),
    ({"lr": 1e-3}, "lr 0.003 there, 0.001 here"),
    ({"exact_loss": True}, "exact_loss False there, True here"),
    ({"steps": 100}, "already at step 200"),
], ids=["seed", "rank", "batch", "lr", "exact-loss", "steps-done"])
def test_resume_refuses_a_mismatching_checkpoint(tmp_path, change, words):
    ckpt = tmp_path / "c.pt"
    mine_sgd(F23, short(), checkpoint=ckpt, progress=False)
    before = ckpt.read_bytes()
    with pytest.raises(WinohdlError, match=words) as info:
        mine_sgd(F23, short(**change), checkpoint=ckpt, resume=True, progress=False)
    assert str(ckpt) in str(info.value) and "\n" not in str(info.value)
    assert ckpt.read_bytes() == before  # a refused checkpoint is left as it was


def test_resume_allows_budget_and_proof_settings_to_change(tmp_path):
    ckpt = tmp_path / "c.pt"
    mine_sgd(F23, short(), checkpoint=ckpt, progress=False)
    state = load_checkpoint(ckpt, F23, short(steps=300, snap_every=7, q_max=2, checkpoint_every=50,
                                             device="auto"))
    assert state["step"] == 200


# ---- refusals through the command line ------------------------------------------------------------------

def _checkpoint_for_cli(tmp_path) -> Path:
    """A real f2_3 checkpoint where ``mine --output 2 --kernel 3 --sgd batch=64 -o tmp/c.json`` looks."""
    ckpt = tmp_path / "c.sgd-r4-s0.pt"
    cfg = SGDConfig(rank=4, steps=100, batch=64, seed=0, snap_every=NO_SNAP)
    assert mine_sgd(F23, cfg, checkpoint=ckpt, progress=False) is None
    return ckpt


@pytest.mark.parametrize("damage", ["truncated", "empty", "garbage", "unsafe-pickle"])
def test_unreadable_checkpoint_refused_in_one_line(tmp_path, cli, damage):
    ckpt = _checkpoint_for_cli(tmp_path)
    data = ckpt.read_bytes()
    if damage == "truncated":
        ckpt.write_bytes(data[: len(data) // 2])
    elif damage == "empty":
        ckpt.write_bytes(b"")
    elif damage == "garbage":
        ckpt.write_bytes(b"not a checkpoint\n" * 10)
    else:  # needs weights_only=False (a pickled module): refused, never executed
        torch.save({"format": CHECKPOINT_FORMAT, "net": torch.nn.Linear(2, 2)}, ckpt)
    before = ckpt.read_bytes()
    code, out, err = cli("mine", "--output", "2", "--kernel", "3", "--method", "sgd", "--sgd", "batch=64",
                         "--steps", "200", "--resume", "-o", tmp_path / "c.json")
    line = one_error_line(err)
    assert code == 2 and str(ckpt) in line and "truncated, corrupt or not an SGD checkpoint" in line
    assert not (tmp_path / "c.json").exists() and ckpt.read_bytes() == before


def test_other_geometry_checkpoint_refused(tmp_path, cli):
    ckpt = _checkpoint_for_cli(tmp_path)
    other = tmp_path / "c.sgd-r5-s0.pt"  # where an o3 k3 (R = 5) run looks
    ckpt.rename(other)
    code, _, err = cli("mine", "--output", "3", "--kernel", "3", "--method", "sgd", "--sgd", "batch=64",
                       "--resume", "-o", tmp_path / "c.json")
    line = one_error_line(err)
    assert code == 2 and str(other) in line and "is for o2_k3_s1_d1, not o3_k3_s1_d1" in line


def test_missing_checkpoint_refused(tmp_path, cli):
    code, _, err = cli("mine", "--output", "2", "--kernel", "3", "--method", "sgd", "--resume",
                       "-o", tmp_path / "c.json")
    assert code == 2 and "no checkpoint at" in one_error_line(err) and not list(tmp_path.iterdir())


def test_budget_without_a_proof_names_the_checkpoint(tmp_path, cli):
    code, _, err = cli("mine", "--output", "2", "--kernel", "3", "--method", "sgd", "--steps", "150",
                       "--sgd", "batch=64", "--sgd", f"snap_every={NO_SNAP}", "-o", tmp_path / "c.json")
    line = one_error_line(err)
    ckpt = tmp_path / "c.sgd-r4-s0.pt"
    assert code == 2 and "no proven card" in line and str(ckpt) in line and "--resume" in line
    assert torch.load(ckpt, weights_only=True)["step"] == 150 and not (tmp_path / "c.json").exists()


@pytest.mark.parametrize("setting, words", [
    ("batch=100000000000", "--sgd batch is 100000000000 samples, above the limit of 65536"),
    ("hard_buffer=100000000000", "--sgd hard_buffer is 100000000000 samples, above the limit"),
    ("steps=1e12", "--sgd steps is 1000000000000 steps, above the limit"),
    ("lr=nan", "lr must be a finite number"),
    ("l1=inf", "l1 must be a finite number"),
    ("starts=0", "--sgd starts must be > 0"),
    ("starts=5000", "--sgd starts is 5000 starts, above the limit of 1024"),
])
def test_sgd_settings_are_bounded(tmp_path, cli, setting, words):
    code, _, err = cli("mine", "--output", "2", "--kernel", "3", "--method", "sgd", "--sgd", setting,
                       "-o", tmp_path / "c.json")
    assert code == 2 and words in one_error_line(err) and not list(tmp_path.iterdir())
    if "limit" in words:
        assert "WINOHDL_MAX_" in err
        with pytest.raises(LimitError):
            parse_settings([setting])


def test_every_setting_is_documented_and_typed():
    from miner.sgd import SETTINGS
    tunable = [f.name for f in dataclasses.fields(SGDConfig) if f.name not in ("rank", "seed", "device")]
    assert sorted(SETTINGS) == sorted(tunable)
    assert parse_settings(["starts=4", "stall_steps=0", "near_exact=0.5"]) == {"starts": 4, "stall_steps": 0,
                                                                            "near_exact": 0.5}


def test_a_step_too_large_is_refused_before_any_work(tmp_path, cli):
    code, _, err = cli("mine", "--output", "2", "--kernel", "3", "--method", "sgd", "--sgd", "starts=300",
                       "--sgd", "batch=65536", "-o", tmp_path / "c.json")
    line = one_error_line(err)
    assert code == 2 and "one SGD step (300 starts) is" in line and "WINOHDL_MAX_SGD_STEP_FLOATS" in line
    assert not list(tmp_path.iterdir())


# ---- Ctrl-C in-process (should_stop), deterministic ---------------------------------------------------

def _settings(tmp_path, **kw) -> MineSettings:
    base = dict(method=Method.SGD, seed=1, seconds=60.0, polish_seconds=60.0, device="cpu",
                sgd={"batch": 256}, checkpoint=tmp_path / "c.sgd-r4-s1.pt")
    base.update(kw)
    return MineSettings(**base)


def test_stop_before_a_proof_saves_the_checkpoint(tmp_path):
    calls = []

    def should_stop():  # "Ctrl-C" after 150 polls of the training loop
        calls.append(1)
        return len(calls) > 150

    s = _settings(tmp_path, sgd={"batch": 64, "snap_every": NO_SNAP})
    with pytest.raises(Interrupted, match="interrupted before a card was proven"):
        mine_card(F23, s, cost_key, should_stop=should_stop)
    state = torch.load(s.checkpoint, weights_only=True)
    assert state["step"] == 150 and state["seed"] == 1


def test_stop_during_polish_keeps_the_proven_card(tmp_path, monkeypatch):
    proven, polls = [], []
    real = sgd_module.mine_sgd_card

    def mine_then_mark(*args, **kw):
        card = real(*args, **kw)
        proven.append(card is not None)
        return card

    def should_stop():  # "Ctrl-C" a few polls into the polish that follows the proof
        if proven:
            polls.append(1)
        return len(polls) > 3

    monkeypatch.setattr(sgd_module, "mine_sgd_card", mine_then_mark)
    card = mine_card(F23, _settings(tmp_path), cost_key, should_stop=should_stop)
    assert proven == [True] and len(polls) > 3  # polish started and polled the flag
    assert card.provenance["interrupted"] is True and card.rank == 4
    assert AlgorithmCard.from_json(card.to_json()) == card


# ---- the command as a user runs it: SIGINT, progress on -------------------------------------------------

def _env(**extra) -> dict:
    env = dict(os.environ, OMP_NUM_THREADS="1", PYTHONUNBUFFERED="1", **extra)
    env.pop("COLUMNS", None)
    return env


def _start(argv, err_file: Path, **env) -> subprocess.Popen:
    with open(err_file, "wb") as err:  # the child has its own copy of the file: ours is closed
        return subprocess.Popen([sys.executable, "-m", "winohdl", *map(str, argv)], cwd=ROOT, env=_env(**env),
                                stdout=subprocess.PIPE, stderr=err, stdin=subprocess.DEVNULL)


def _wait_for(proc: subprocess.Popen, err_file: Path, text: str) -> None:
    deadline = time.monotonic() + WAIT
    while text not in err_file.read_text(errors="replace"):
        if proc.poll() is not None:
            pytest.fail(f"exited {proc.returncode} before {text!r} appeared:\n{err_file.read_text()}")
        if time.monotonic() > deadline:
            proc.kill()
            pytest.fail(f"{text!r} never appeared:\n{err_file.read_text()}")
        time.sleep(0.02)


def _finish(proc: subprocess.Popen) -> tuple[int, str]:
    try:
        out, _ = proc.communicate(timeout=WAIT)
    except subprocess.TimeoutExpired:
        proc.kill()
        raise
    return proc.returncode, out.decode()


def test_sigint_before_a_proof_exits_130_and_resumes(tmp_path, cli):
    out, err = tmp_path / "c.json", tmp_path / "err.txt"
    ckpt = tmp_path / "c.sgd-r4-s0.pt"
    proc = _start(["mine", "--output", "2", "--kernel", "3", "--method", "sgd", "--seconds", "60",
                   "--sgd", "batch=64", "--sgd", f"snap_every={NO_SNAP}", "--sgd", f"checkpoint_every={NO_SNAP}",
                   "-o", out], err, WINOHDL_PROGRESS="1")
    _wait_for(proc, err, "loss=")  # training is under way (the bar's first update, step 100)
    assert not ckpt.exists()
    proc.send_signal(signal.SIGINT)
    code, _ = _finish(proc)
    text = err.read_text()
    last = text.replace("\r", "\n").strip().splitlines()[-1]
    assert code == 130 and "Traceback" not in text
    assert last.startswith("error: ") and "interrupted" in last and str(ckpt) in last and "--resume" in last
    assert not out.exists()
    state = torch.load(ckpt, weights_only=True)
    assert state["step"] >= 100 and state["settings"]["batch"] == 64
    # as the message says: the same command with --resume (proofs allowed again) continues to a card
    code, text, _ = cli("mine", "--output", "2", "--kernel", "3", "--method", "sgd", "--seconds", "60",
                        "--sgd", "batch=64", "--sgd", "snap_every=500", "--polish", "0", "--resume", "-o", out)
    assert code == 0 and AlgorithmCard.load(out).provenance["steps"] > state["step"]


def test_sigint_during_polish_keeps_the_card(tmp_path):
    # o2x2 k2x2 (R = 9): SGD proves it in ~1000 steps, and polishing it runs for its whole budget
    out, err = tmp_path / "c.json", tmp_path / "err.txt"
    proc = _start(["mine", "--output", "2x2", "--kernel", "2x2", "--method", "sgd", "--seconds", "60",
                   "--sgd", "batch=256", "--polish", "60", "-o", out], err, WINOHDL_PROGRESS="1")
    _wait_for(proc, err, "proven exact at step")  # printed as SGD returns its card; polish starts next
    proc.send_signal(signal.SIGINT)
    code, stdout = _finish(proc)
    text = err.read_text()
    assert code == 0 and "Traceback" not in text and "interrupted: kept the best proven card" in text
    card = AlgorithmCard.load(out)
    assert card.rank == 9 and card.provenance["method"] == "sgd" and card.provenance["interrupted"] is True
    assert f"card       {out}" in stdout


def test_mine_sgd_with_progress_under_a_terminal(tmp_path):
    out = tmp_path / "c.json"
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))  # a 120-column terminal
    proc = subprocess.Popen([sys.executable, "-m", "winohdl", "mine", "--output", "2", "--kernel", "3",
                             "--method", "sgd", "--seed", "1", "--sgd", "batch=256", "--polish", "1",
                             "--seconds", "60", "-o", str(out)],
                            cwd=ROOT, env=_env(), stdin=slave, stdout=slave, stderr=slave)
    os.close(slave)
    chunks, deadline = [], time.monotonic() + WAIT
    while time.monotonic() < deadline:  # drain the terminal until the command closes it
        ready, _, _ = select.select([master], [], [], 0.5)
        if not ready:
            if proc.poll() is not None:
                break
            continue
        try:
            data = os.read(master, 65536)
        except OSError:  # EIO: the other side is closed
            break
        if not data:
            break
        chunks.append(data)
    os.close(master)
    try:
        code = proc.wait(timeout=WAIT)
    except subprocess.TimeoutExpired:
        proc.kill()
        raise
    text = b"".join(chunks).decode(errors="replace")
    assert code == 0 and "Traceback" not in text and "error" not in text
    assert "sgd        R=4, 16 starts on cpu; budget 60 s or 100,000 steps" in text  # what it will do
    assert "sgd R=4, 16 starts" in text and "proven exact at step" in text  # progress was on: a terminal
    assert f"card       {out}" in text
    card = AlgorithmCard.load(out)
    assert card.rank == 4 and card.provenance["method"] == "sgd"


# ---- the article's method proves (seeded runs; figures in `winohdl bench mine`) ----------------------------

@pytest.mark.parametrize("exact_loss", [False, True], ids=["sampled", "exact-loss"])
def test_starts_do_not_interact(exact_loss):
    """Another start beside it leaves a start's trajectory unchanged, bit for bit (Adam, L1 and pruning
    are per start; the shared samples are the same)."""
    g = BY_NAME["f2_3"].geometry
    cfg = short(starts=2, exact_loss=exact_loss, stall_steps=0, near_exact=1e9, l1=1e-3, prune_threshold=0.05)
    runs = [_new_run(g, cfg, torch.device("cpu")) for _ in range(2)]
    with torch.no_grad():
        runs[1].net.fc_D[1].mul_(-3.0)
    T = SparseTensor.of(g, torch.device("cpu"))
    for _ in range(60):
        losses = [_train_step(run, T, {"fc_D": 0.5, "fc_F": 0.5, "fc_C": 0.5}) for run in runs]
    assert losses[0][0] == losses[1][0] and losses[0][1] != losses[1][1]
    for name in ("fc_D", "fc_F", "fc_C"):
        ours, theirs = (getattr(run.net, name) for run in runs)
        assert torch.equal(ours[0], theirs[0]) and not torch.equal(ours[1], theirs[1])
    assert runs[0].net.sparsity(0) > 0  # pruning acted


def test_pruning_acts_only_near_exact_and_within_the_cap():
    g = BY_NAME["f2_3"].geometry
    net = BilinearNet(g, 4, starts=2, seed=1)
    before = [p.detach().clone() for p in net.parameters()]
    _prune(net, 10.0, {"fc_D": 0.25, "fc_F": 0.0, "fc_C": 1.0}, torch.tensor([True, False]))
    d, f, c = (p.detach() for p in net.parameters())
    assert torch.equal(d[1], before[0][1]) and torch.equal(c[1], before[2][1])  # start 1 is not near exact
    assert int((d[0] == 0).sum()) == 4  # every weight is below 10: the cap, a quarter of 16
    kept = before[0][0].abs().flatten().sort().values[4:]
    assert torch.equal(d[0].abs().flatten().sort().values[4:], kept)  # the smallest went
    assert torch.equal(f[0], before[1][0]) and int((c[0] == 0).sum()) == c[0].numel()


def test_the_sampled_loss_hands_over_to_the_exact_one_when_it_stalls(tmp_path):
    g = BY_NAME["f4x4_3x3"].geometry
    cfg = SGDConfig(rank=36, steps=120, starts=2, batch=64, hard_buffer=16, stall_steps=40, snap_every=NO_SNAP,
                    device="cpu")
    ckpt = tmp_path / "c.pt"
    mine_sgd(g, cfg, checkpoint=ckpt, progress=False)
    assert torch.load(ckpt, weights_only=True)["exact"] is True
    mine_sgd(g, dataclasses.replace(cfg, stall_steps=0), checkpoint=ckpt, progress=False)
    assert torch.load(ckpt, weights_only=True)["exact"] is False  # 0: the article's sampled loss throughout


def test_the_exact_loss_trains_on_one_thread_and_gives_the_rest_back():
    torch.set_num_threads(2)  # the caller's setting (the fixture restores its own afterwards)
    threads = []
    mine_sgd(F23, short(exact_loss=True, steps=100), progress=False,
             on_progress=lambda *_: threads.append(torch.get_num_threads()))
    assert threads == [1] and torch.get_num_threads() == 2


def test_older_checkpoint_refused_in_one_line(tmp_path):
    ckpt = tmp_path / "c.pt"
    mine_sgd(F23, short(), checkpoint=ckpt, progress=False)
    state = torch.load(ckpt, weights_only=True)
    torch.save(dict(state, format="winohdl-sgd-checkpoint/1"), ckpt)
    with pytest.raises(WinohdlError, match="written by an older winohdl .one start at a time.") as info:
        mine_sgd(F23, short(), checkpoint=ckpt, resume=True, progress=False)
    assert str(ckpt) in str(info.value) and "\n" not in str(info.value)


@pytest.mark.parametrize("exact_loss", [False, True], ids=["sampled", "exact-loss"])
def test_sgd_proves_f23(exact_loss):
    g = BY_NAME["f2_3"].geometry
    cfg = SGDConfig(rank=4, steps=5000, batch=256, exact_loss=exact_loss, seed=1)
    card = mine_sgd(g, cfg, progress=False)
    assert card is not None and card.rank == 4
    assert card.provenance["method"] == "sgd" and card.provenance["steps"] <= 5000
    assert AlgorithmCard.from_json(card.to_json()) == card


@pytest.mark.parametrize("name", ["f4_3", "s2_5x5"])
def test_sgd_proves_with_the_article_batch(name):
    g = BY_NAME[name].geometry
    cfg = SGDConfig(rank=g.lower_bound(), steps=6000, starts=4, seed=0)  # batch 2048, the article's
    card = mine_sgd(g, cfg, progress=False)
    assert card is not None and card.rank == g.lower_bound() and card.provenance["steps"] <= 6000
    assert AlgorithmCard.from_json(card.to_json()) == card


def test_learning_rate_half_life_is_applied(tmp_path):
    """lr_half_life=H: the optimiser's rate at step t is lr * 2^(-t/H) (read back from the checkpoint)."""
    g = BY_NAME["f2_3"].geometry
    cfg = SGDConfig(rank=4, steps=300, lr=0.01, lr_half_life=100, exact_loss=True, device="cpu", seed=2)
    ckpt = tmp_path / "c.pt"
    assert mine_sgd(g, cfg, checkpoint=ckpt, progress=False) is None  # 300 steps: before the first snap
    state = torch.load(ckpt, weights_only=True)
    assert state["step"] == 300
    assert state["opt"]["param_groups"][0]["lr"] == pytest.approx(0.01 * 0.5 ** (299 / 100))
    with pytest.raises(WinohdlError, match="lr_half_life must be >= 0"):
        parse_settings(["lr_half_life=-5"])
