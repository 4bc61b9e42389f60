"""Property tests for the extension's one masking step (extension/worker/mask.js, which
worker/dispatch.js runs over every reply): a secret inserted at any position of any text, in any
encoding the step supports, never comes out. The step is JavaScript: it runs in one long-lived
Node process fed JSON lines (tests/extension/helpers/mask-oracle.mjs).

Every secret word holds one of Q, X or Z and the text around it holds none, so a secret word
found in the output can only have come from the secret, never from the mask's own words
("[masked: 12 chars, letters+digits]") or the surrounding text."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote, quote_plus

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

REPO = Path(__file__).resolve().parents[2]
ORACLE = REPO / "tests" / "extension" / "helpers" / "mask-oracle.mjs"

PROPERTY = settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


class Masker:
    """worker/mask.js through one Node process."""

    def __init__(self) -> None:
        node = shutil.which("node")
        assert node, "Node.js is required (scripts/setup installs it)"
        self._proc = subprocess.Popen(  # noqa: S603 (a fixed argv: Node and a file in this checkout)
            [node, str(ORACLE)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            encoding="utf-8",
        )

    def __call__(
        self,
        text: str,
        learn: tuple[str, ...] = (),
        names: tuple[str, ...] = (),
        every_query: bool = False,
    ) -> str:
        assert self._proc.stdin is not None and self._proc.stdout is not None
        line = {"text": text, "learn": list(learn), "names": list(names), "everyQuery": every_query}
        self._proc.stdin.write(json.dumps(line) + "\n")
        self._proc.stdin.flush()
        out = json.loads(self._proc.stdout.readline())["out"]
        assert isinstance(out, str)
        return out

    def close(self) -> None:
        assert self._proc.stdin is not None
        self._proc.stdin.close()
        self._proc.wait(timeout=10)


@pytest.fixture(scope="module")
def mask() -> Iterator[Masker]:
    masker = Masker()
    yield masker
    masker.close()


# ---------------------------------------------------------------- what is generated

SENTINEL = "QXZ"
#: Text around a secret: no sentinel, no digit (a digit could join a card's run), no quote.
AROUND = "abcdefghijklmnoprstuvwy ABCDEFGHIJKLMNOPRSTUVWY.,;!?()\n"
#: Characters a secret word may hold besides its sentinel.
WORD = "abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJKLMNOPRSTUVWY-_.!@#$%*()/~"

SECRET_WORDS = [
    "pwd", "pin", "key", "password", "passwd", "passcode", "secret", "token", "sid", "otp",
    "sig", "session", "cookie", "credential", "signature", "auth", "apikey", "pass",
]  # fmt: skip


@st.composite
def secret_names(draw: st.DrawFn) -> str:
    """A secret-like name: one of SECRET_WORDS, alone or as a whole part of a longer name."""
    word = draw(st.sampled_from(SECRET_WORDS))
    word = draw(st.sampled_from([word, word.upper(), word.capitalize()]))
    before = draw(st.sampled_from(["", "user_", "new-", "my.", "login_", "x-api-"]))
    after = draw(st.sampled_from(["", "_id", "-value", ".v2", "Hash"]))
    if before == "" and draw(st.booleans()):
        return f"new{word.capitalize()}{after}"  # camelCase
    return f"{before}{word}{after}"


@st.composite
def secret_words(draw: st.DrawFn, alphabet: str = WORD) -> str:
    """One word of a secret: holds a sentinel, at least 4 characters."""
    left = draw(st.text(alphabet=alphabet, max_size=8))
    right = draw(st.text(alphabet=alphabet, min_size=3 - min(3, len(left)), max_size=8))
    return left + draw(st.sampled_from(SENTINEL)) + right


def secret_values(alphabet: str = WORD) -> st.SearchStrategy[list[str]]:
    """A secret value's words (joined by single spaces: a multi-word password)."""
    return st.lists(secret_words(alphabet), min_size=1, max_size=4)


around = st.text(alphabet=AROUND, max_size=40)
#: What a name starts after: the start of the text or a character no name goes on from.
boundary = st.sampled_from([" ", "\n", "&", "?", "{", ",", ";", "("])


def leaked(out: str, words: list[str]) -> list[str]:
    return [w for w in words if w in out]


# ---------------------------------------------------------------- the properties


@PROPERTY
@given(
    name=secret_names(),
    words=secret_values(),
    encoding=st.sampled_from(["raw", "colon", "form", "single", "double", "json", "query"]),
    before=around,
    sep=boundary,
    after=around,
)
def test_a_secret_named_value_is_masked_whole_in_every_encoding_at_any_position(
    mask: Masker, name: str, words: list[str], encoding: str, before: str, sep: str, after: str
) -> None:
    value = " ".join(words)
    if encoding in ("raw", "colon"):  # console text: up to the next & or the end of the line
        words = [w.replace("&", "") or "Q" for w in words]
        value = " ".join(words)
        pair = f"{name}={value}" if encoding == "raw" else f"{name}: {value}"
        shown = words
    elif encoding == "form":  # application/x-www-form-urlencoded, as a body or a query
        pair = f"{name}={quote_plus(value)}"
        shown = [quote_plus(w) for w in words]
    elif encoding == "query":
        pair = f"https://a.test/p?page=2&{name}={quote(value)}&b=1"
        shown = [quote(w) for w in words]
    elif encoding == "single":
        words = [w.replace("'", "") or "Q" for w in words]
        value = " ".join(words)
        pair, shown = f"{name}='{value}'", words
    elif encoding == "double":
        words = [w.replace('"', "") or "Q" for w in words]
        value = " ".join(words)
        pair, shown = f'{name}="{value}"', words
    else:  # JSON, the value escaped as JSON escapes it
        pair = json.dumps({name: value, "n": 1})
        shown = [json.dumps(w)[1:-1] for w in words]
    text = f"{before}{sep}{pair}{after}"
    out = mask(text)
    assert leaked(out, shown) == [], (text, out)
    assert leaked(out, words) == [], (text, out)
    assert f"{name}" in out  # the name stays: the agent sees what was masked
    assert mask(out) == out  # and masking it again changes nothing


@PROPERTY
@given(
    header=st.sampled_from(["Cookie", "Set-Cookie", "Authorization", "cookie", "AUTHORIZATION"]),
    words=secret_values(),
    before=around,
    after=around,
)
def test_a_cookie_or_authorization_header_line_is_masked_whole(
    mask: Masker, header: str, words: list[str], before: str, after: str
) -> None:
    text = f"{before}\n{header}: {' '.join(words)}\n{after}"
    out = mask(text)
    assert leaked(out, words) == [], (text, out)
    assert after.split("\n")[-1] in out  # the next lines stay


@PROPERTY
@given(
    scheme=st.sampled_from(["Bearer", "Basic", "bearer", "Token"]),
    token=secret_words("abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJKLMNOPRSTUVWY-_.~+/="),
    pad=st.text(alphabet="abcdef0123456789", min_size=8, max_size=8),
    before=around,
    after=around,
)
def test_an_auth_scheme_credential_and_a_jwt_are_masked(
    mask: Masker, scheme: str, token: str, pad: str, before: str, after: str
) -> None:
    credential = token + pad
    payload = re.sub(r"[^A-Za-z0-9_-]", "", token)  # base64url: a JWT's own alphabet
    jwt = f"eyJ{pad}Q.{payload}{pad}.{pad}"
    text = f"{before} {scheme} {credential} {after} {jwt} {after}"
    out = mask(text)
    assert leaked(out, [credential, jwt, jwt[3:]]) == [], (text, out)


def _luhn_complete(digits: str) -> str:
    """``digits`` with the check digit that makes it pass Luhn."""
    total = 0
    for i, ch in enumerate(reversed(digits)):
        d = int(ch)
        if i % 2 == 0:
            d = d * 2 - 9 if d * 2 > 9 else d * 2
        total += d
    return digits + str((10 - total % 10) % 10)


@PROPERTY
@given(
    body=st.text(alphabet="0123456789", min_size=15, max_size=15),
    joiner=st.sampled_from(["", " ", "-"]),
    before=around,
    sep=boundary,
    after=around,
)
def test_a_card_number_is_masked_however_it_is_grouped(
    mask: Masker, body: str, joiner: str, before: str, sep: str, after: str
) -> None:
    card = _luhn_complete(body)
    shown = joiner.join(card[i : i + 4] for i in range(0, 16, 4))
    out = mask(f"{before}{sep}{shown}{after}")
    assert shown not in out and card not in out.replace(" ", "").replace("-", ""), out


@PROPERTY
@given(
    fields=st.lists(
        st.tuples(st.sampled_from(["login", "answer", "u", "field", "email"]), secret_words()),
        min_size=1,
        max_size=3,
        unique_by=lambda f: f[0],
    ),
    path=st.sampled_from(["/", "/login", "/a/b"]),
    before=around,
    after=around,
)
@pytest.mark.promise("H4-14")
def test_a_learned_form_url_has_every_query_value_masked_wherever_it_appears(
    mask: Masker, fields: list[tuple[str, str]], path: str, before: str, after: str
) -> None:
    url = f"http://127.0.0.1:8000{path}?" + "&".join(f"{k}={quote_plus(v)}" for k, v in fields)
    text = f"{before} {url} {after} 127.0.0.1:8000{url.split(':8000', 1)[1]}"
    out = mask(text, learn=(url,))
    values = [v for _, v in fields] + [quote_plus(v) for _, v in fields]
    assert leaked(out, values) == [], (text, out)
    assert f"127.0.0.1:8000{path}?" in out  # where it went stays visible
    # Without the lesson, names that are not secret-like stay as they are.
    assert mask(url) == url


#: Names a page may give its password field that no fixed rule calls secret.
odd_names = st.sampled_from(["zz9", "fieldq", "answer", "u", "login_field", "Field2", "x-y"])


@PROPERTY
@given(
    name=odd_names,
    words=secret_values(),
    encoding=st.sampled_from(["raw", "form", "query", "json"]),
    before=around,
    sep=boundary,
    after=around,
)
def test_a_value_under_a_learned_password_field_name_is_masked_whole_at_any_position(
    mask: Masker, name: str, words: list[str], encoding: str, before: str, sep: str, after: str
) -> None:
    value = " ".join(w.replace("&", "") or "Q" for w in words)
    words = value.split(" ")
    if encoding == "raw":  # a console line
        pair, shown = f"{name}={value}", words
    elif encoding == "form":
        pair, shown = f"{name}={quote_plus(value)}", [quote_plus(w) for w in words]
    elif encoding == "query":
        pair = f"https://sink.test/c?{name}={quote(value)}&page=2"
        shown = [quote(w) for w in words]
    else:
        pair = json.dumps({name: value, "n": 1})
        shown = [json.dumps(w)[1:-1] for w in words]
    text = f"{before}{sep}{pair}{after}"
    out = mask(text, names=(name.upper(),))  # learned in any case
    assert leaked(out, shown) == [] and leaked(out, words) == [], (text, out)
    assert name in out
    assert mask(out, names=(name,)) == out


@PROPERTY
@given(
    fields=st.lists(
        st.tuples(st.sampled_from(["q", "answer", "u", "next", "1", ""]), secret_words()),
        min_size=1,
        max_size=3,
    ),
    before=around,
    after=around,
)
def test_failing_closed_masks_every_query_value_of_every_url(
    mask: Masker, fields: list[tuple[str, str]], before: str, after: str
) -> None:
    url = "http://h.test/p?" + "&".join(f"{k}={quote_plus(v)}" for k, v in fields)
    text = f"{before} {url} {after} h.test/p?{url.split('?', 1)[1]}#frag"
    out = mask(text, every_query=True)
    values = [v for _, v in fields] + [quote_plus(v) for _, v in fields]
    assert leaked(out, values) == [], (text, out)
    assert "h.test/p?" in out and out.endswith("#frag")
    assert mask(out, every_query=True) == out


@PROPERTY
@given(
    name=st.sampled_from(["spinner", "monkey", "keyboard", "author", "pinned", "sidebar", "page"]),
    value=st.text(alphabet="abcdefghijklmnoprstuvwy", min_size=1, max_size=12),
    before=around,
    sep=boundary,
)
def test_a_name_that_only_contains_a_short_secret_word_stays_visible(
    mask: Masker, name: str, value: str, before: str, sep: str
) -> None:
    text = f"{before}{sep}{name}={value}&next=1"
    assert mask(text) == text
