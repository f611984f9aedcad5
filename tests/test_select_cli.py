"""``sslkit select``: a features file (.npy, .csv) or a folder of images to a CSV of the chosen rows, the same rows
as the selector called from Python; every bad input one clear line and exit status 2."""

import csv

import numpy as np
import pytest

from sslkit.cli import main
from sslkit.select import GKHR, make_selector
from sslkit.select_cli import load_input


def features(n=120, d=5, seed=0):
    return np.random.default_rng(seed).normal(size=(n, d))


def read(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def test_npy_to_csv_is_rdss_in_selection_order(tmp_path, capsys):
    X = features()
    np.save(tmp_path / "f.npy", X)
    out = tmp_path / "chosen.csv"
    assert main(["select", str(tmp_path / "f.npy"), "--budget", "10", "-o", str(out), "--no-progress"]) == 0
    rows = read(out)
    expected = GKHR(10).fit(X).indices_
    assert [int(r["index"]) for r in rows] == expected.tolist()
    assert [int(r["rank"]) for r in rows] == list(range(1, 11))
    assert "chose 10 of 120 samples (5 features)" in capsys.readouterr().out


@pytest.mark.parametrize("method", ["random", "KMeans", "usl", "activeft"])
def test_every_label_free_selector(tmp_path, method):
    X = features(80, 4, seed=1)
    np.save(tmp_path / "f.npy", X)
    out = tmp_path / "c.csv"
    argv = ["select", str(tmp_path / "f.npy"), "-m", "6", "--method", method, "-o", str(out), "--no-progress"]
    assert main(argv) == 0
    expected = make_selector(method, 6, seed=0, device="auto").fit(X).indices_
    assert [int(r["index"]) for r in read(out)] == expected.tolist()


def test_csv_with_header_and_id_column(tmp_path):
    X = features(50, 3, seed=2)
    path = tmp_path / "table.csv"
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["a", "name", "b", "c"])
        for i, row in enumerate(X):
            w.writerow([row[0], f"sample-{i}", row[1], row[2]])
    out = tmp_path / "c.csv"
    assert main(["select", str(path), "-m", "5", "--id-column", "name", "-o", str(out), "--no-progress"]) == 0
    rows = read(out)
    expected = GKHR(5).fit(X).indices_
    assert [r["name"] for r in rows] == [f"sample-{i}" for i in expected]


def test_image_folder_to_file_names(tmp_path):
    Image = pytest.importorskip("PIL.Image")
    rng = np.random.default_rng(3)
    folder = tmp_path / "imgs"
    folder.mkdir()
    for i in range(30):
        Image.fromarray(rng.integers(0, 256, (10, 12), dtype=np.uint8)).save(folder / f"img_{i:02d}.png")
    (folder / "notes.txt").write_text("not an image")
    out = tmp_path / "c.csv"
    argv = ["select", str(folder), "-m", "4", "--extractor", "pixels_pca", "--image-size", "8", "-o", str(out)]
    assert main([*argv, "--no-progress"]) == 0
    rows = read(out)
    assert len(rows) == 4 and all(r["name"].startswith("img_") and r["name"].endswith(".png") for r in rows)
    assert all(r["name"] == f"img_{int(r['index']):02d}.png" for r in rows)  # index = sorted path order
    # the command and the estimator agree (notebooks/howto_rdss_images): GKHR on load_input's features
    F, names = load_input(folder, extractor="pixels_pca", image_size=8, progress=False)
    chosen = GKHR(4, seed=0).fit(F).indices_.tolist()
    assert [int(r["index"]) for r in rows] == chosen and [r["name"] for r in rows] == [names[i] for i in chosen]


@pytest.mark.parametrize(
    "make, argv, message",
    [
        (None, ["missing.npy", "-m", "3"], "no such file or folder"),
        (lambda p: np.save(p / "x.npy", np.zeros(5)), ["x.npy", "-m", "3"], "one row per sample"),
        (lambda p: np.save(p / "x.npy", np.zeros((4, 2))), ["x.npy", "-m", "5"], "exceeds the 4 samples"),
        (lambda p: np.save(p / "x.npy", np.zeros((4, 2))), ["x.npy", "-m", "0"], "positive integer"),
        (lambda p: np.save(p / "x.npy", np.full((4, 2), np.nan)), ["x.npy", "-m", "2"], "NaN or infinite"),
        (lambda p: np.save(p / "x.npy", np.zeros((4, 2))), ["x.npy", "-m", "2", "--method", "herding"], "one of"),
        (lambda p: np.save(p / "x.npy", np.zeros((4, 2))), ["x.npy", "-m", "2", "--method", "stratified"], "label"),
        (lambda p: (p / "x.csv").write_text("a,b\n1,x\n"), ["x.csv", "-m", "1"], "'x' is not a number"),
        (lambda p: (p / "x.csv").write_text("a,b\n1,2\n3\n"), ["x.csv", "-m", "1"], "has 1 cells"),
        (lambda p: (p / "x.csv").write_text(""), ["x.csv", "-m", "1"], "empty"),
        (lambda p: (p / "x.csv").write_text("a,b\n1,2\n"), ["x.csv", "-m", "1", "--id-column", "z"], "no column 'z'"),
        (lambda p: (p / "x.txt").write_text("1 2"), ["x.txt", "-m", "1"], "give a .npy or .csv"),
        (lambda p: (p / "d").mkdir(), ["d", "-m", "1"], "no images"),
        (lambda p: (p / "d").mkdir() or (p / "d" / "a.png").write_text("x"), ["d", "-m", "1"], "not a readable image"),
    ],
)
def test_bad_input_is_one_clear_line(tmp_path, capsys, monkeypatch, make, argv, message):
    monkeypatch.chdir(tmp_path)
    if make is not None:
        make(tmp_path)
    assert main(["select", *argv, "--no-progress", "-o", str(tmp_path / "o.csv")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("sslkit: error:") and message in err and err.count("\n") == 1, err


def test_help_lists_the_methods(capsys):
    assert main(["select", "--help"]) == 0
    assert "rdss" in capsys.readouterr().out


def test_mu_is_exact_up_to_the_named_size_and_landmarks_beyond(tmp_path, monkeypatch):
    from sslkit import select_cli

    assert select_cli.mu_method_for(select_cli.EXACT_MU_MAX_SAMPLES) == "exact"
    assert select_cli.mu_method_for(select_cli.EXACT_MU_MAX_SAMPLES + 1) == "landmarks"
    assert select_cli.mu_method_for(10, "rff") == "rff"
    X = features(9000, 4, seed=3)  # more samples than the 8192 landmarks
    np.save(tmp_path / "f.npy", X)
    monkeypatch.setattr(select_cli, "EXACT_MU_MAX_SAMPLES", 1000)  # this pool is "large": auto takes landmarks
    out = tmp_path / "c.csv"
    assert main(["select", str(tmp_path / "f.npy"), "-m", "8", "-o", str(out), "--no-progress"]) == 0
    landmarks = GKHR(8, mu_method="landmarks").fit(X).indices_
    assert [int(r["index"]) for r in read(out)] == landmarks.tolist()
    assert not np.array_equal(landmarks, GKHR(8).fit(X).indices_)  # so the file shows which mu ran
    argv = ["select", str(tmp_path / "f.npy"), "-m", "8", "-o", str(out), "--no-progress", "--mu", "exact"]
    assert main(argv) == 0 and [int(r["index"]) for r in read(out)] == GKHR(8).fit(X).indices_.tolist()


def test_mu_choices_are_the_selectors_and_an_estimate_needs_rdss(tmp_path, capsys):
    from sslkit.select.kernel_mean import MU_METHODS
    from sslkit.select_cli import MU_CHOICES

    assert MU_CHOICES == ("auto", *MU_METHODS)
    np.save(tmp_path / "f.npy", features(40, 3))
    argv = ["select", str(tmp_path / "f.npy"), "-m", "4", "--method", "kmeans", "--mu", "rff", "--no-progress"]
    assert main([*argv, "-o", str(tmp_path / "o.csv")]) == 2
    assert "--mu rff applies to rdss only" in capsys.readouterr().err
