"""The one redaction of secrets in what the tool prints, logs or shows in a dialog.

Addresses carry secrets in many places: the user info of a URL (`postgresql://u:PASSWORD@h/db`,
`https://TOKEN@host`), query parameters and fragments (`?password=`, `?token=`, `#access_token=`,
`api_key`...), libpq `key=value` strings (`host=h password=...`), and HTTP headers echoed in an
error body (`Authorization: Bearer ...`). `redact_url` masks one address; `redact` masks every
secret in free text (an error message, a server's answer), and is what every error path calls:
the CLI's error line, the GUI's error dialog, and each message that names a store, an embedder or
a service. A secret becomes `***`; what is needed to fix the address (scheme, user name, host,
port, database, the names of the parameters) stays.
"""
from __future__ import annotations

import json
import re
from urllib.parse import parse_qsl, quote, unquote, urlencode, urlsplit, urlunsplit

MASK = "***"
PLACEHOLDER = "PASSWORD"
"""The password of the address templates in messages (`postgresql://USER:PASSWORD@HOST...`): shown."""

_SECRET_NAME = re.compile(
    r"pass(word|wd|phrase)?$|pwd$|token|secret|api[-_.]?key|apikey|access[-_.]?key|private[-_.]?key|^key$"
    r"|^sig$|signature|credential|^auth$|authorization|cookie|session[-_.]?id|^x-amz-security", re.IGNORECASE)
"""Names whose value is a secret: `password`, `sslpassword`, `token`, `access_token`, `api_key`,
`X-Api-Key`, `client_secret`, `key`, `sig`, `Authorization`, `Cookie`..."""

_WHOLE_VALUE_HEADERS = re.compile(
    r"""(?P<name>\b(?:proxy-)?authorization|\bcookie|\bset-cookie|\bx-api-key|\bapi-key)(?P<q>["']?)"""
    r"""(?P<sep>\s*[:=]\s*)(?P<open>["']?)(?P<value>[^\r\n"']*)""", re.IGNORECASE)
"""A header whose whole value (`Bearer abc`, `Basic ...`, every cookie) is secret, to the end of its line."""

_URL = re.compile(r"""\b[a-zA-Z][a-zA-Z0-9+.-]*://[^\s'"<>`]+""")

_PAIR = re.compile(
    r"""(?P<q>["']?)(?P<name>[A-Za-z_][\w.-]*)(?P=q)(?P<sep>\s*[=:]\s*)"""
    r"""(?P<value>"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|[^\s&;,)}\]]+)""")
"""`name=value`, `name: value`, `"name": "value"` and libpq's `name='quoted value'`."""

_SCAN = re.compile(f"(?P<url>{_URL.pattern})|{_PAIR.pattern}")


def is_secret_name(name: str) -> bool:
    """True for a parameter, field or header name whose value is a secret."""
    return bool(_SECRET_NAME.search(name.strip().strip("\"'")))


def split_password(url: str) -> tuple[str, str | None]:
    """`url` without the password of its user info, and that password percent-decoded; `(url,
    None)` when it holds none. The password runs to the last '@', as `redact_url` reads it."""
    parts = urlsplit(url)
    if not parts.scheme or "@" not in parts.netloc:
        return url, None
    userinfo, host = parts.netloc.rsplit("@", 1)
    user, has_password, password = userinfo.partition(":")
    if not has_password:
        return url, None
    return urlunsplit(parts._replace(netloc=f"{user}@{host}")), unquote(password)


def with_password(url: str, password: str) -> str:
    """`url` with `password` in its user info, percent-encoded (an '@', ':' or '/' in it would
    otherwise end it early); `url` as it is for an empty password."""
    parts = urlsplit(url)
    if not password or not parts.scheme:
        return url
    userinfo, _, host = parts.netloc.rpartition("@")
    user = userinfo.partition(":")[0]
    return urlunsplit(parts._replace(netloc=f"{user}:{quote(password, safe='')}@{host}"))


def redact_url(url: str) -> str:
    """`url` with the password (or a lone user info that is a token) and every secret query or
    fragment parameter replaced by `***`; anything that is not a URL is returned as `redact` masks it."""
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - a malformed port raises here, and the text is then masked as text
    except ValueError:
        return _PAIR.sub(_mask_pair, _redact_userinfo_text(url))
    if not parts.scheme or not parts.netloc:
        return _PAIR.sub(_mask_pair, url)
    netloc = parts.netloc
    if "@" in netloc:
        userinfo, host = netloc.rsplit("@", 1)
        user, has_password, password = userinfo.partition(":")
        keep_user = has_password or parts.scheme.startswith("postgres")  # a lone user of http(s) is a token
        shown = password if password == PLACEHOLDER else MASK
        netloc = (f"{user}:{shown}" if has_password else user if keep_user else MASK) + "@" + host
    return urlunsplit(parts._replace(netloc=netloc, query=_redact_params(parts.query),
                                     fragment=_redact_params(parts.fragment)))


def _redact_params(text: str) -> str:
    if "=" not in text:
        return text
    pairs = parse_qsl(text, keep_blank_values=True)
    if not any(is_secret_name(k) for k, _ in pairs):
        return text
    return urlencode([(k, MASK if is_secret_name(k) else v) for k, v in pairs], safe="*")


_USERINFO = re.compile(r"(\b[a-zA-Z][\w+.-]*:/{1,2}[^/@\s:]*:)(?!PASSWORD@)[^/@\s]*@")
"""`scheme://user:password@`, also as a path collapses it (`postgresql:/u:password@`)."""


def _redact_userinfo_text(text: str) -> str:
    return _USERINFO.sub(rf"\1{MASK}@", text)


def _mask_pair(m: re.Match) -> str:
    value = m.group("value")
    head = f"{m.group('q')}{m.group('name')}{m.group('q')}{m.group('sep')}"
    if not is_secret_name(m.group("name")):
        return head + _redact_pairs(value)  # the value may be a URL, or hold another pair
    quote = value[0] if value[:1] in "\"'" else ""
    return f"{head}{quote}{MASK}{quote}"


def _redact_pairs(text: str) -> str:
    """Every URL (user info, parameters) and every secret `name=value` pair of `text`, masked."""
    return _SCAN.sub(lambda m: redact_url(m.group("url")) if m.group("url") else _mask_pair(m), text)


def redact(text: object) -> str:
    """`text` (a message, an address, a server's answer) with every secret in it masked."""
    out = _WHOLE_VALUE_HEADERS.sub(lambda m: f"{m['name']}{m['q']}{m['sep']}{m['open']}{MASK}", str(text))
    return _redact_pairs(_redact_userinfo_text(out))


def body_excerpt(raw: bytes, limit: int = 120) -> str:
    """What an HTTP error body may show: its `error`/`message`/`detail` field when it is JSON,
    else its text; on one line, secrets masked, at most `limit` characters. Headers a server
    echoes back (an `Authorization` line) never show: they are masked before the cut."""
    text = raw[:4096].decode("utf-8", "replace")
    try:
        obj = json.loads(text)
    except ValueError:
        obj = None
    if isinstance(obj, dict):
        for key in ("error", "message", "detail"):
            field = obj.get(key)
            if isinstance(field, dict):
                field = field.get("message") or field.get("detail")
            if isinstance(field, str) and field.strip():
                text = field
                break
    one_line = redact(" ".join(text.split()))
    return one_line if len(one_line) <= limit else one_line[: limit - 1].rstrip() + "…"
