"""The command line: exit codes, one-line errors, nothing half-written."""

import json

import pytest

from miner.constructive import constructive_card
from winohdl.core.suite import BY_NAME


def test_mine_writes_a_proven_card(tmp_path, cli):
    out = tmp_path / "c.json"
    code, text, _ = cli("mine", "--output", "2", "--kernel", "3", "--method", "constructive", "-o", str(out))
    assert code == 0 and "certified minimal" in text
    assert json.loads(out.read_text())["rank"] == 4
    code, text, _ = cli("check", str(out))
    assert code == 0 and "proven exact" in text


def test_mine_pareto_writes_the_front(tmp_path, cli):
    """``mine --pareto --polish``: the table, the plot and one proven card per point, the bound's
    cheapest point the card whose points the cost chose (F(4,3): 658 adder bits, not 770)."""
    out = tmp_path / "front"
    code, text, _ = cli("mine", "--output", "4", "--kernel", "3", "--pareto", "--polish", "5", "-o", str(out))
    assert code == 0 and "points by cost+polish" in text
    assert (out / "front.txt").read_text().strip() and (out / "front.png").stat().st_size > 0
    cards = sorted(out.glob("*.json"))
    assert len(cards) == text.count("(proven,")
    for c in cards:
        assert cli("check", str(c))[0] == 0
    assert min(int(line.split()[1]) for line in text.splitlines() if line.strip().startswith("6 ")) == 658
    # again into the same folder without the budget: the folder is replaced as a whole
    code, text, _ = cli("mine", "--output", "4", "--kernel", "3", "--pareto", "-o", str(out))
    assert code == 0 and len(sorted(out.glob("*.json"))) == text.count("(proven,") < len(cards)
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "notes.txt").write_text("keep")
    code, _, err = cli("mine", "--output", "4", "--kernel", "3", "--pareto", "-o", str(tmp_path / "mine"))
    assert code == 2 and "not a front folder" in err and (tmp_path / "mine" / "notes.txt").read_text() == "keep"


def test_no_saving_is_said(tmp_path, cli):
    code, text, _ = cli("mine", "--output", "2x2", "--kernel", "3x3", "--dilation", "2",
                        "--method", "constructive", "-o", str(tmp_path / "c.json"))
    assert code == 0 and "no saving possible" in text


def test_version_is_the_one_in_the_package(cli):
    """``--version`` shows winohdl.__version__, the only version (pyproject.toml reads it from there)."""
    import tomllib
    from pathlib import Path

    import winohdl
    project = tomllib.loads((Path(__file__).resolve().parent.parent / "pyproject.toml").read_text())
    assert "version" not in project["project"] and project["project"]["dynamic"] == ["version"]
    assert project["tool"]["hatch"]["version"]["path"] == "winohdl/__init__.py"
    code, text, _ = cli("--version")
    assert code == 0 and text.split() == ["winohdl", winohdl.__version__]


def test_bounds_table(cli):
    code, text, _ = cli("bounds", "--output", "2x2", "--kernel", "3x3", "--stride", "2", "--tiles", "1,2")
    assert code == 0 and "lower bound  25" in text


@pytest.mark.parametrize("argv, words", [
    (["mine", "--output", "0", "--kernel", "3"], "output must be >= 1"),
    (["mine", "--output", "-1", "--kernel", "3"], "output must be >= 1"),
    (["mine", "--output", "two", "--kernel", "3"], "whole numbers"),
    (["mine", "--output", "2", "--kernel", "3", "--stride", "0"], "stride must be >= 1"),
    (["mine", "--output", "2", "--kernel", "3", "--dilation", "0"], "dilation must be >= 1"),
    (["mine", "--output", "2x2", "--kernel", "3x3x3"], "same number of axes"),
    (["mine", "--output", "2x2x2x2", "--kernel", "3"], "1 to 3 axes"),
    (["mine", "--output", "2", "--kernel", "3", "--rank", "3"], "below the proven lower bound 4"),
    (["mine", "--output", "2", "--kernel", "3", "--method", "magic"], "invalid choice: 'magic'"),
    (["mine", "--output", "2", "--kernel", "3", "--q-max", "0"], "argument --q-max: must be >= 1"),
    (["mine", "--output", "2", "--kernel", "3", "--method", "sgd", "--steps", "-5"], "argument --steps: must be >= 0"),
    (["mine", "--output", "2", "--kernel", "3", "--polish", "-1"], "argument --polish: must be a finite number >= 0"),
    (["mine", "--output", "2", "--kernel", "3", "--method", "sgd", "--sgd", "speed=3"], "KEY=VALUE"),
    (["mine", "--output", "2", "--kernel", "3", "--method", "sgd", "--sgd", "batch=0"], "batch must be > 0"),
    (["mine", "--output", "2", "--kernel", "3", "--method", "sgd", "--sgd", "lr=fast"], "lr must be a number"),
    (["mine", "--kernel", "3"], "required"),
])
def test_bad_input_one_line_exit_2(tmp_path, cli, argv, words):
    code, out, err = cli(*argv, *(["-o", str(tmp_path / "c.json")] if argv[0] == "mine" else []))
    assert code == 2
    assert words in err and err.count("\n") == 1 and "Traceback" not in err
    assert not list(tmp_path.iterdir())


def test_argparse_errors_exit_2(cli):
    code, _, err = cli("frobnicate")
    assert code == 2 and err.count("\n") == 1


@pytest.mark.parametrize("content, words", [
    ("{", "not valid JSON"),
    ('{"format": "winohdl-card/1"}', "no geometry"),
    ("[1, 2]", "must be a JSON object"),
])
def test_check_rejects_malformed(tmp_path, cli, content, words):
    p = tmp_path / "bad.json"
    p.write_text(content)
    code, _, err = cli("check", str(p))
    assert code == 2 and words in err and err.count("\n") == 1


def test_check_rejects_tampered_card(tmp_path, cli):
    data = constructive_card(BY_NAME["f2x2_3x3"].geometry).to_json()
    data["BT"][3][5] = "7"
    p = tmp_path / "t.json"
    p.write_text(json.dumps(data))
    code, _, err = cli("check", str(p))
    assert code == 2 and "identity fails at" in err


def test_unwritable_output(tmp_path, cli):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    code, _, err = cli("mine", "--output", "2", "--kernel", "3", "--method", "constructive",
                       "-o", str(blocker / "c.json"))
    assert code == 2 and "cannot write" in err and err.count("\n") == 1


def test_engine_command_generates_and_verifies_a_layer(tmp_path, cli):
    out = tmp_path / "eng"
    code, text, err = cli("engine", "--output", "2", "--kernel", "3", "--in-channels", "2", "--out-channels", "2",
                          "--feature-map", "9", "--padding", "1", "--sim", "icarus", "--family", "none", "-o", out)
    assert code == 0, err
    assert text.count("PASS") == 2 and "bit-exact vs torch" in text  # winograd and direct engines
    assert (out / "design.json").is_file()


@pytest.mark.parametrize("argv, words", [
    (["--in-channels", "0"], "--in-channels: must be >= 1"),
    (["--feature-map", "2"], "feature"),
    (["--parallel-out", "3"], "divide"),
    (["--sim", "modelsim"], "invalid choice"),
])
def test_engine_bad_input(tmp_path, cli, argv, words):
    base = {"--output": "2", "--kernel": "3", "--in-channels": "2", "--out-channels": "2", "--feature-map": "9"}
    args = dict(base)
    args.update(dict(zip(argv[::2], argv[1::2])))
    code, _, err = cli("engine", *[x for kv in args.items() for x in kv], "-o", tmp_path / "e")
    assert code == 2 and words in err and err.count("\n") == 1
    assert not list(tmp_path.iterdir())


def _design_folder(tmp_path, cli, *extra):
    folder = tmp_path / "d"
    code, _, err = cli("gen", "--output", "2x2", "--kernel", "3x3", "--quiet", "-o", str(folder), *extra)
    assert code == 0, err
    return folder


def test_prove_command_proves_both_cores(tmp_path, cli):
    folder = _design_folder(tmp_path, cli, "--pipeline", "deep")
    code, text, _ = cli("prove", str(folder), "--target", "both")
    assert code == 0, text
    assert "wino   PROVEN" in text and "direct PROVEN" in text
    reports = sorted(p.name for p in (folder / "prove").glob("*/proof_*.json"))
    assert reports == ["proof_direct.json", "proof_wino.json"]
    assert json.loads(next((folder / "prove").glob("*/proof_wino.json")).read_text())["verdict"] == "PROVEN"


def test_prove_command_disproves_an_edited_adder(tmp_path, cli):
    """A hand edit (one '+' turned into '-') is refused without --allow-edits (exit 2) and disproven with it
    (exit 1), naming a monomial and an input that Icarus confirms."""
    folder = _design_folder(tmp_path, cli)
    v = next(folder.glob("wino_*.v"))
    text = v.read_text()
    i = text.index(") + $signed(")
    v.write_text(text[:i] + ") - $signed(" + text[i + len(") + $signed("):])
    code, _, err = cli("prove", str(folder))
    assert code == 2 and "--allow-edits" in err and err.count("\n") == 1
    code, out, _ = cli("prove", str(folder), "--allow-edits")
    assert code == 1 and "DISPROVEN" in out
    assert "monomial" in out and "icarus" in out


def test_prove_command_unreadable_verilog_is_bad_input(tmp_path, cli):
    folder = _design_folder(tmp_path, cli)
    next(folder.glob("wino_*.v")).write_text("this is not verilog\n")
    code, _, err = cli("prove", str(folder), "--allow-edits")
    errors = [line for line in err.splitlines() if line.startswith("error: ")]
    assert code == 2 and len(errors) == 1 and errors[0].startswith("error: yosys cannot read"), err
    assert "Traceback" not in err and "--allow-edits" in err.splitlines()[0]  # the note names the edited file
