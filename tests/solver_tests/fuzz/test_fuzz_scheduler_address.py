"""`--scheduler ADDRESS` (fuzz, and the compiler campaigns) where no Dask scheduler answers (issue 25 item 15):
something else at the address (a web server, garbage, a peer that accepts and says nothing, one that hangs
up), an address layoutproof does not take (tls://, ucx://, another transport, no port, an empty one) is one
line on stderr naming --scheduler, exit 2, within the connect deadline. The peers are loopback servers
started here."""
from __future__ import annotations

import socket
import threading
import time

import pytest

from solver.cli.main import main
from solver.fuzz import campaign
from solver.fuzz.compilers import cute_dsl

pytest.importorskip("distributed")
FUZZ = ["fuzz", "--target", "desc", "--arch", "sm90", "--valid", "--count", "2"]
SLOW = 20                # seconds no refusal here comes near (the connect deadline is 1 s in these tests)


def _http(connection):
    connection.recv(65536)
    connection.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: 5\r\n\r\nhello")


def _garbage(connection):
    connection.sendall(b"\xff" * 64 + b"garbage" * 100)
    connection.recv(65536)


def _silent(connection):
    connection.recv(65536)
    time.sleep(5)


def _hang_up(connection):
    pass


PEERS = {"a web server": _http, "garbage": _garbage, "a silent peer": _silent, "a peer that hangs up": _hang_up}


@pytest.fixture
def peer(request):
    """tcp://127.0.0.1:PORT of a loopback server behaving as PEERS[request.param] on every connection."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(16)
    behave = PEERS[request.param]

    def serve():
        while True:
            try:
                connection, _ = server.accept()
            except OSError:            # closed: the test is over
                return

            def one(connection=connection):
                try:
                    behave(connection)
                except OSError:
                    pass
                finally:
                    connection.close()
            threading.Thread(target=one, daemon=True).start()
    threading.Thread(target=serve, daemon=True).start()
    yield f"tcp://127.0.0.1:{server.getsockname()[1]}"
    server.close()


@pytest.fixture(autouse=True)
def short_deadline(monkeypatch):
    monkeypatch.setattr(campaign, "CONNECT_SECONDS", 1)


def _refused(capsys, run, argv) -> str:
    started = time.monotonic()
    code = run(argv)
    out, err = capsys.readouterr()
    assert code == 2 and out == "" and err.count("\n") == 1 and "--scheduler" in err, (code, err)
    assert time.monotonic() - started < SLOW
    return err


@pytest.mark.parametrize("peer", sorted(PEERS), indirect=True)
def test_a_peer_that_is_no_dask_scheduler_is_one_line_exit_2(capsys, peer):
    err = _refused(capsys, main, [*FUZZ, "--scheduler", peer])
    assert peer in err


@pytest.mark.parametrize("peer", ["a web server"], indirect=True)
def test_the_compiler_campaigns_refuse_it_too(capsys, tmp_path, peer):
    _refused(capsys, cute_dsl.main, ["--count", "3", "--scheduler", peer, "--out", str(tmp_path / "o.jsonl")])
    assert not (tmp_path / "o.jsonl").exists()


@pytest.mark.parametrize("address, says", [
    ("", "an empty address"),
    ("   ", "an empty address"),
    ("tls://127.0.0.1:8786", "tls:// needs TLS certificates"),
    ("ucx://127.0.0.1:8786", "ucx:// is a transport layoutproof does not set up"),
    ("inproc://x", "inproc://"),
    ("ws://127.0.0.1:8786", "ws://"),
    ("tcp://", "a port from 1 to 65535"),
    ("tcp://127.0.0.1", "a port from 1 to 65535"),
    ("tcp://127.0.0.1:0", "a port from 1 to 65535"),
    ("tcp://127.0.0.1:65536", "a port from 1 to 65535"),
    ("tcp://:8786", "a port from 1 to 65535"),
    ("local:", "a port from 1 to 65535"),
    ("tcp://a b:8786", "no host name"),
])
def test_an_address_layoutproof_does_not_take_is_one_line_exit_2(capsys, tmp_path, address, says):
    assert says in _refused(capsys, main, [*FUZZ, "--scheduler", address])
    assert says in _refused(capsys, cute_dsl.main, ["--count", "3", "--scheduler", address,
                                                     "--out", str(tmp_path / "o.jsonl")])


def test_the_addresses_taken_are_local_and_tcp():
    assert campaign.scheduler_address("local") == "local"
    assert campaign.scheduler_address("tcp://10.0.0.1:8786") == "tcp://10.0.0.1:8786"
    assert campaign.scheduler_address("node7:8786") == "tcp://node7:8786"          # Dask reads HOST:PORT as tcp
    assert campaign.scheduler_address("tcp://[::1]:8786") == "tcp://[::1]:8786"
