"""`core.redact`: every form a secret takes in an address, a DSN or a header is masked, and what
is needed to fix the address stays."""
from __future__ import annotations

import pytest

from core.redact import body_excerpt, redact, redact_url

S = "s3cr3t-XYZ"


@pytest.mark.parametrize("text, shown", [
    (f"postgresql://u:{S}@db.example:5432/memsense", "postgresql://u:***@db.example:5432/memsense"),
    (f"postgres://u@db/memsense?sslmode=require&password={S}", "postgres://u@db/memsense?sslmode=require&password=***"),
    (f"https://{S}@embed.example/v1/embeddings", "https://***@embed.example/v1/embeddings"),
    (f"http://user:{S}@127.0.0.1:8080/embed?token={S}&model=m", "http://user:***@127.0.0.1:8080/embed?token=***&model=m"),
    (f"https://h/e?access_token={S}#id_token={S}", "https://h/e?access_token=***#id_token=***"),
    (f"https://h/e?api_key={S}&apikey={S}&key={S}&sig={S}", "https://h/e?api_key=***&apikey=***&key=***&sig=***"),
    (f"http://localhost:port/?api_key={S}", "http://localhost:port/?api_key=***"),  # a malformed port too
])
def test_urls(text, shown):
    assert redact_url(text) == shown
    assert redact(f"cannot reach {text} (refused)") == f"cannot reach {shown} (refused)"


@pytest.mark.parametrize("text, shown", [
    (f"host=127.0.0.1 port=5432 password={S} dbname=memsense", "host=127.0.0.1 port=5432 password=*** dbname=memsense"),
    (f"host=h password='{S} with spaces' user=me", "host=h password='***' user=me"),
    (f"Authorization: Bearer {S}\nHost: h", "Authorization: ***\nHost: h"),
    (f'{{"headers": {{"authorization": "Basic {S}", "x-api-key": "{S}"}}}}',
     '{"headers": {"authorization": "***", "x-api-key": "***"}}'),
    (f"Cookie: session={S}; theme=dark", "Cookie: ***"),
    (f"no memory store at postgresql:/u:{S}@h/db", "no memory store at postgresql:/u:***@h/db"),  # a path ate a slash
])
def test_free_text(text, shown):
    assert redact(text) == shown


@pytest.mark.parametrize("text", [
    "route_weights.vec_full: must be a finite number >= 0",
    "unknown user 'demo-ana'; users in this store: demo-ana, demo-mei",
    "write postgresql://USER:PASSWORD@HOST:PORT/DATABASE",  # the template in messages stays readable
    "cannot reach a Qdrant server at http://127.0.0.1:6333 (refused)",
])
def test_messages_without_secrets_are_unchanged(text):
    assert redact(text) == text


def test_an_error_body_is_a_short_redacted_excerpt():
    body = ('{"error": {"message": "bad key; request headers were Authorization: Bearer ' + S + '"}}').encode()
    assert body_excerpt(body) == "bad key; request headers were Authorization: ***"
    long = ("x" * 500 + f" token={S}").encode()
    shown = body_excerpt(long)
    assert len(shown) <= 120 and S not in shown


def test_a_password_with_an_unescaped_at_sign_is_refused_before_connecting_and_never_shown():
    """Found by a walkthrough: libpq ends the password at its first '@' and took the rest for the
    host, so its error named 'Secret@127.0.0.1' (the password's tail) on screen."""
    from tests.cli.test_bad_input_catalogue import run_cli

    dsn = "postgresql://ms:Hunter2@Secret@127.0.0.1:1/memsense"
    code, out, err, tb = run_cli(["search", "--store", dsn, "--embedder", "http://127.0.0.1:9/embed", "--user", "u",
                                  "where"])
    assert (code, tb) == (1, None)
    assert "Secret" not in err and "Hunter2" not in err and "%40" in err, err
    assert err.splitlines() == [f"memsense: error: {redact_url(dsn)} holds more than one '@': write an '@' inside "
                                "the user or the password as %40 (postgresql://USER:PASSWORD@HOST:PORT/DATABASE)"]


def test_memsense_messages_name_where_to_fix_it_in_the_cli_and_in_the_app():
    """Found by a walkthrough: the app's dialogs told the user to fix --service or --store, flags
    of the command line the app has no field called so."""
    import socket

    from core.errors import MemsenseError
    from core.recall.memsense.engine import PostgresEngine
    from core.recall.memsense.service import service_search

    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with pytest.raises(MemsenseError) as service:
        service_search(f"http://127.0.0.1:{port}", tenant="default", scope="user", user="u", query="q", top_k=4)
    with pytest.raises(MemsenseError) as embedder:
        PostgresEngine(f"postgresql://ms@127.0.0.1:{port}/memsense", embedder="")
    assert "fix its URL (--service, or Service in the app's Connect dialog)" in str(service.value)
    assert "(--embedder, or Embedder in the app's Connect dialog)" in str(embedder.value)


@pytest.mark.parametrize("url, address, password", [
    ("postgresql://ms:Hunter2@127.0.0.1:5432/memsense", "postgresql://ms@127.0.0.1:5432/memsense", "Hunter2"),
    ("postgresql://ms:Hunter2@Secret@127.0.0.1/memsense", "postgresql://ms@127.0.0.1/memsense", "Hunter2@Secret"),
    ("postgresql://ms:a%40b%3Ac@h/db", "postgresql://ms@h/db", "a@b:c"),
    ("postgresql://ms@h/db", "postgresql://ms@h/db", None),
    ("not a url", "not a url", None),
])
def test_a_password_is_split_off_an_address_and_put_back_encoded(url, address, password):
    from core.redact import split_password, with_password

    assert split_password(url) == (address, password)
    if password is not None:
        rebuilt = with_password(address, password)
        assert split_password(rebuilt) == (address, password) and rebuilt.count("@") == 1
