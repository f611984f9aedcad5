"""Committed records in Colab: fetched from the install source when the repository folder is absent (issue 21)."""

import io
import tarfile

import pytest

from sslkit.experiments.runs import published


def _tarball(files: dict) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        for name, text in files.items():
            data = text.encode()
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def test_tarball_url_is_githubs_archive_of_the_commit():
    assert (
        published.tarball_url("https://github.com/org/repo", "abc123")
        == "https://codeload.github.com/org/repo/tar.gz/abc123"
    )
    with pytest.raises(ValueError, match="GitHub"):
        published.tarball_url("https://gitlab.com/org/repo", "abc")


def test_extract_results_keeps_only_the_results_records(tmp_path):
    archive = _tarball(
        {
            "repo-abc/notebooks/results/some_experiment/cpu.jsonl": '{"a": 1}\n',
            "repo-abc/notebooks/results/some_experiment/notes.txt": "no",
            "repo-abc/notebooks/some_experiment.md": "no",
            "repo-abc/sslkit/__init__.py": "no",
        }
    )
    assert published.extract_results(archive, tmp_path) == 1
    assert (tmp_path / "some_experiment" / "cpu.jsonl").read_text() == '{"a": 1}\n'
    assert [p.name for p in tmp_path.rglob("*") if p.is_file()] == ["cpu.jsonl"]


def test_committed_results_dir_fetches_once_from_the_install_source(tmp_path, monkeypatch):
    monkeypatch.setattr(published, "repo_root", lambda: tmp_path / "site-packages")  # no notebooks/results there
    monkeypatch.setattr(published, "install_source", lambda: ("https://github.com/org/repo", "c0ffee"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.delenv("SSLKIT_OFFLINE", raising=False)
    urls = []

    class Response(io.BytesIO):
        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return False

    def urlopen(url, timeout):
        urls.append(url)
        return Response(_tarball({"repo-c0ffee/notebooks/results/a_table1/paper.jsonl": "{}\n"}))

    monkeypatch.setattr(published.urllib.request, "urlopen", urlopen)
    got = published.committed_results_dir()
    assert (got / "a_table1" / "paper.jsonl").is_file() and got.name == "c0ffee"
    assert published.committed_results_dir() == got and len(urls) == 1  # cached: fetched once
    assert urls == ["https://codeload.github.com/org/repo/tar.gz/c0ffee"]


def test_committed_results_dir_is_the_repository_folder_offline_or_in_a_clone(tmp_path, monkeypatch):
    monkeypatch.setattr(published, "repo_root", lambda: tmp_path)
    monkeypatch.setattr(published, "install_source", lambda: ("https://github.com/org/repo", "c0ffee"))
    monkeypatch.setenv("SSLKIT_OFFLINE", "1")
    assert published.committed_results_dir() == tmp_path / "notebooks" / "results"  # offline: nothing fetched
    (tmp_path / "notebooks" / "results").mkdir(parents=True)
    monkeypatch.delenv("SSLKIT_OFFLINE")
    assert published.committed_results_dir() == tmp_path / "notebooks" / "results"  # a clone: its own folder
