"""Broken downloads against a real HTTP server on 127.0.0.1.

A standard-library server in a thread serves the dataset file right, truncated (Content-Length
larger than the body), corrupted, stalled, or answers 404/500. ``prepare_dataset`` fetches it
through the real download path of a config entry whose url points at that server; each failure
must end in a ``DownloadError`` or ``VerificationError`` that says what happened, with no file left
under ``data_dir`` that a later run would accept.
"""

from __future__ import annotations

import copy
import lzma
import threading
import time
import types
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

import alphaseed.pipeline.data as data
from alphaseed.pipeline.data import fingerprint, load_dataset, parse_libsvm, prepare_dataset, processed_path
from alphaseed.errors import DownloadError, MalformedFileError, VerificationError

TEXT = b"".join(b"%d 1:%d 2:%.2f\n" % (1 if i % 2 else -1, i, i / 7) for i in range(1, 41))
BODY = lzma.compress(TEXT)


class Server:
    """Plays a script of behaviours, one per request, then repeats the last one."""

    def __init__(self):
        self.script: list[str] = ["good"]
        self.requests: Counter = Counter()
        self.release = threading.Event()  # ends stalled responses when the test is over
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):
                count = sum(server.requests.values())
                server.requests[self.path] += 1
                behaviour = server.script[min(count, len(server.script) - 1)]
                getattr(self, f"serve_{behaviour}")()

            def send(self, body: bytes, length: int | None = None, status: int = 200):
                self.send_response(status)
                self.send_header("Content-Length", str(len(body) if length is None else length))
                self.end_headers()
                self.wfile.write(body)
                self.wfile.flush()

            def serve_good(self):
                self.send(BODY)

            def serve_truncated(self):
                self.send(BODY[: len(BODY) // 2], length=len(BODY))
                self.close_connection = True

            def serve_corrupted(self):
                damaged = bytearray(BODY)
                damaged[len(damaged) // 2] ^= 0xFF
                self.send(bytes(damaged))

            def serve_other_content(self):
                # Well-formed, but not the configured dataset (another version, a mirror's error page)
                self.send(lzma.compress(TEXT.replace(b"1:3 ", b"1:4 ")))

            def serve_stall(self):
                self.send_response(200)
                self.send_header("Content-Length", str(len(BODY)))
                self.end_headers()
                self.wfile.write(BODY[:100])
                self.wfile.flush()
                server.release.wait(timeout=20)

            def serve_not_found(self):
                self.send(b"no such file", status=404)

            def serve_server_error(self):
                self.send(b"try later", status=500)

            def log_message(self, *args):
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def url(self, name: str) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/libsvm/{name}"

    @property
    def total(self) -> int:
        return sum(self.requests.values())


@pytest.fixture
def server():
    server = Server()
    server.thread.start()
    yield server
    server.release.set()
    server.httpd.shutdown()
    server.httpd.server_close()
    server.thread.join(timeout=10)


@pytest.fixture
def pauses(monkeypatch) -> list:
    """The pauses between download attempts, recorded instead of slept."""
    recorded = []
    monkeypatch.setattr(data, "time", types.SimpleNamespace(sleep=recorded.append))
    return recorded


@pytest.fixture
def config(tmp_path, repo_config, server, monkeypatch) -> dict:
    monkeypatch.delenv(data.MIRROR_ENV, raising=False)
    source = tmp_path / "reference.txt"
    source.write_bytes(TEXT)
    X, raw = parse_libsvm(source)
    config = copy.deepcopy(repo_config)
    config.update(data_dir=str(tmp_path / "data"), mirror=None,
                  download={"timeout_s": 1.0, "retries": 2})
    config["datasets"] = {"remote": {
        "url": server.url("remote.xz"), "n": 40, "dim": 2, "C": 1, "gamma": 1,
        "labels": {"positive": [1], "negative": [-1]}, "counts": {"positive": 20, "negative": 20},
        "fingerprint": fingerprint(raw, X),
    }}
    return config


def files_under(folder) -> list[Path]:
    return sorted(path for path in Path(folder).rglob("*") if path.is_file())


def test_the_right_file_is_fetched_verified_and_converted(config, server, pauses):
    target = prepare_dataset("remote", config)
    assert target == processed_path("remote", config)
    downloaded = Path(config["data_dir"], "downloads", "remote.xz")
    assert files_under(config["data_dir"]) == sorted([downloaded, target])
    assert downloaded.read_bytes() == BODY and server.total == 1 and pauses == []
    X, y = load_dataset("remote", config)
    assert X.shape == (40, 2) and int((y == 1).sum()) == 20


def test_a_download_cut_short_is_retried_then_reported(config, server, pauses):
    server.script = ["truncated"]
    with pytest.raises(DownloadError, match=r"remote\.xz \(3 attempt\(s\); last error: .*"):
        prepare_dataset("remote", config)
    assert server.total == 3 and len(pauses) == 2
    assert files_under(config["data_dir"]) == []


def test_a_transfer_cut_short_once_succeeds_on_the_retry(config, server, pauses):
    server.script = ["truncated", "good"]
    prepare_dataset("remote", config)
    assert server.total == 2 and len(pauses) == 1
    assert Path(config["data_dir"], "downloads", "remote.xz").read_bytes() == BODY


@pytest.mark.parametrize(
    "behaviour, error, message",
    [("corrupted", MalformedFileError, "cannot read or decompress"),
     ("other_content", VerificationError, "fingerprint mismatch")],
)
def test_a_complete_but_wrong_file_is_deleted_and_named(config, server, pauses, behaviour, error,
                                                        message):
    server.script = [behaviour]
    with pytest.raises(error, match=f"{message}.*the download was deleted") as raised:
        prepare_dataset("remote", config)
    assert "remote.xz" in str(raised.value)
    assert server.total == 1  # the bytes arrived as sent: fetching again would not help
    assert files_under(config["data_dir"]) == []
    # The next run fetches afresh and succeeds once the server is right again.
    server.script = ["good"]
    prepare_dataset("remote", config)
    assert server.total == 2


def test_a_stalled_server_times_out_on_every_attempt(config, server, pauses):
    server.script = ["stall"]
    started = time.monotonic()
    with pytest.raises(DownloadError, match="timed out"):
        prepare_dataset("remote", config)
    # 3 attempts of about timeout_s = 1 s each; never a hang.
    assert time.monotonic() - started < 10
    assert server.total == 3 and files_under(config["data_dir"]) == []


def test_not_found_is_not_retried(config, server, pauses):
    server.script = ["not_found"]
    with pytest.raises(DownloadError, match="HTTP 404") as raised:
        prepare_dataset("remote", config)
    assert server.url("remote.xz") in str(raised.value) and "mirror" in str(raised.value)
    assert server.total == 1 and pauses == []
    assert files_under(config["data_dir"]) == []


def test_a_server_error_is_retried_with_growing_pauses(config, server, pauses):
    server.script = ["server_error"]
    with pytest.raises(DownloadError, match="HTTP 500"):
        prepare_dataset("remote", config)
    assert server.total == 3 and pauses == sorted(pauses) and pauses[0] > 0
    assert files_under(config["data_dir"]) == []


def test_a_stale_damaged_download_is_deleted_then_fetched_again(config, server, pauses):
    # A file left in downloads/ by an older run is verified like a fresh one, never trusted.
    stale = Path(config["data_dir"], "downloads", "remote.xz")
    stale.parent.mkdir(parents=True)
    stale.write_bytes(BODY[:-10])
    with pytest.raises(MalformedFileError, match="remote.xz"):
        prepare_dataset("remote", config)
    assert files_under(config["data_dir"]) == [] and server.total == 0
    prepare_dataset("remote", config)
    assert server.total == 1 and stale.read_bytes() == BODY


def test_a_leftover_temporary_file_is_never_taken_for_the_download(config, server, pauses):
    # What a download killed mid-transfer leaves: only the temporary name beside the target.
    leftover = Path(config["data_dir"], "downloads", ".remote.xz.0123abcd.tmp")
    leftover.parent.mkdir(parents=True)
    leftover.write_bytes(BODY[:50])
    prepare_dataset("remote", config)
    assert server.total == 1
    assert Path(config["data_dir"], "downloads", "remote.xz").read_bytes() == BODY
