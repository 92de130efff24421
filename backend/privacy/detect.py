"""Where secrets are in a text: provider tokens, secret-named assignments, auth headers, URLs with
a password, PEM private keys, JWTs. Spans cover the value only (a name before it stays), in text
order, never overlapping.

Where the patterns come from, and why they run here rather than through a library:

- Provider patterns: for the providers detect-secrets (Yelp, Apache-2.0; pip `detect-secrets`)
  covers, its plugins' `denylist` regexes (aws, github_token, gitlab_token, slack, stripe,
  sendgrid, twilio, discord, telegram_token, pypi_token, azure_storage_key, square_oauth,
  mailchimp, jwt, private_key, openai), rewritten to start with their literal, with edges added
  (never inside a longer token or base64 run) and lengths widened where the providers' current
  formats are longer. `tests/backend/privacy/test_detect.py` checks that what the installed
  plugins find in the test texts is found here too (detect-secrets is a test dependency only).
  The providers it lacks (Anthropic, Google API keys and OAuth, Hugging Face, DigitalOcean, Docker
  Hub, Heroku, Shopify, npm, GitHub fine-grained, Stripe test and webhook keys, Mailgun,
  Databricks, Slack app tokens, Slack and Discord webhooks, Azure SAS) follow the token formats
  the providers publish, as gitleaks' rules (MIT) also write them; no rule file is copied.
- Decided by `bench/secrets_bench.py` on this 2-core machine shared with other jobs (load average
  about 12 during the runs, so absolute speeds are low): detect-secrets' own scan (`scan_line`
  over every line, default plugins) covered 0.66 of the bench's 1,840 samples of 46 kinds (it
  reports a PEM key's first line and a JWT without its signature, and misses most passwords,
  GitLab, Shopify and Docker tokens in those surroundings; what it finds of the providers it has
  no plugin for, its entropy plugins find), ran below 0.1 MB/s on the fixture transcripts and costs 0.5 to 1 s to
  import (it pulls in requests); this module caught 1.0000 of them at 5 to 10 MB/s on the same
  transcripts. So the library's patterns are used, its scanner is not.

How a scan stays cheap:

- Every rule starts with a literal, and rules sharing a first character (two for a lowercase
  letter) are one alternation behind it: 32 `finditer` passes over the whole text, each at
  string-search speed (`re` searches a leading literal fast; a leading class or look-behind makes
  it try every position, 30 times slower, measured).
- The passes run over the UTF-8 bytes read as Latin-1, so a non-ASCII text (a transcript with one
  emoji is a 4-byte-a-character str) is read at one byte a character; offsets are mapped back.
- Assignments and headers start from `str.find` of seven keywords (token, secret, pass, pwd,
  key, auth, credential) in the lowercased text, when it holds a `=` or `:`; a hit costs a few Python steps, and is dropped
  at once unless `=` or `:` follows its name.
- Text with no candidate costs those passes and finds: measured 0.05 to 0.09 of `str.lower()` (a
  memcpy-speed baseline) on prose and JSON with no candidate, 0.12 of it on the fixture
  transcripts (bench/secrets_bench.py, after the gates below: a UUID or hex hash, a text with no
  16-character token run, no `=`/`:` skip their passes). A true one-pass
  multi-pattern engine (Hyperscan) would be the next step; `re` has none.
"""

from __future__ import annotations

import functools
import math
import re
from dataclasses import dataclass

from .secret_rules import (
    ASSIGN_TAIL,
    BACKS,
    CLI_PASSWORDS,
    EDGE,
    HEADER_NAMES,
    HEADER_TAIL,
    HEX,
    KEY_QUALIFIERS,
    KEYWORDS,
    LOOSE,
    MARKER,
    NAME_CHARS,
    NOT_SECRET_LAST,
    NOT_SECRET_VALUE,
    PLACEHOLDER_RX,
    PLACEHOLDERS,
    PROVIDER_KINDS,
    PROVIDER_RULES,
    SECRET_WORDS,
    SHORT_WORDS,
    SPLIT_NAME,
    URL_PASSWORD,
    WORD_ENDINGS,
    provider_passes,
)


@dataclass(frozen=True)
class Finding:
    kind: str  # e.g. "github-token", "aws-secret-key", "password"
    start: int  # the value's span in the text: only the value is redacted, never its name
    end: int


def entropy(value: str) -> float:
    """Shannon entropy of the value's characters, in bits per character."""
    if not value:
        return 0.0
    counts: dict[str, int] = {}
    for ch in value:
        counts[ch] = counts.get(ch, 0) + 1
    n = len(value)
    return -sum(c / n * math.log2(c / n) for c in counts.values())


def _is_placeholder(value: str) -> bool:
    low = value.lower()
    if low in PLACEHOLDERS or PLACEHOLDER_RX.match(value):
        return True
    if value.startswith(("$", "%", "<", "{", "[", "(", "#{", "@", "&", "*")) or "${" in value or "{{" in value:
        return True  # $TOKEN, ${TOKEN}, %(pw)s, <your-token>, {token}, [secret:...] markers, #{...}, YAML anchors
    return low.startswith(("os.environ", "os.getenv", "process.env", "env.", "secrets.", "vars.", "getenv"))


def _random_enough(value: str, min_len: int, hex_ok: bool) -> bool:
    """A value that reads as generated: long enough, several character classes, not a word."""
    n = len(value)
    if n < min_len or _is_placeholder(value):
        return False
    if HEX.fullmatch(value):
        return hex_ok and n >= 16 and entropy(value) >= 3.0
    classes = (
        any(c.islower() for c in value)
        + any(c.isupper() for c in value)
        + any(c.isdigit() for c in value)
        + any(not c.isalnum() for c in value)
    )
    if classes < 2:
        return False
    if not any(c.isdigit() for c in value) and re.fullmatch(r"[A-Za-z]+(?:[_.-][A-Za-z]+)*", value) and classes < 3:
        return False  # words and identifiers: my_api_secret, some.setting
    return entropy(value) >= min(3.0, 0.72 * math.log2(n))


def _password_like(value: str) -> bool:
    """A password may be short and human: anything not a placeholder, reference or plain word."""
    if len(value) < 6 or _is_placeholder(value):
        return False
    if re.search(r"(?i)passw(?:or)?d|secret", value):
        return False  # password1, challengePassword, mysecret: examples and names, not passwords
    if value.isalpha() and (value.islower() or value.isupper()):
        return False  # a plain word or a constant's name
    return entropy(value) >= 2.3  # (self.password, args.pw unquoted are code: _is_code_ref)


@functools.lru_cache(maxsize=4096)
def _name_kind(name: str) -> str | None:
    """The finding's kind when `name` names a secret; None when it does not."""
    words = [w.lower() for w in SPLIT_NAME.split(name) if w]
    if not words or words[-1] in NOT_SECRET_LAST:
        return None
    if len(words) >= 2 and words[-2] in NOT_SECRET_LAST and words[-1] in ("key", "keys"):
        return None  # sort_key? no: cache_key, index_key
    # Short words name a secret only as the last word: DB_PASS, X_AUTH, but _PassArg, pass_fds, pin_memory not.
    last = words[-1]
    passwordish = any(w in ("password", "passwd", "passphrase", "passcode") for w in words)
    passwordish = (
        passwordish or last in ("pwd", "pass", "pswd", "pw") or any(w.endswith(("password", "passwd")) for w in words)
    )
    secretish = passwordish or last in SHORT_WORDS
    secretish = secretish or any(
        (w in SECRET_WORDS and w not in SHORT_WORDS) or w.endswith(WORD_ENDINGS) for w in words
    )
    if not secretish and words[-1] in ("key", "keys") and len(words) >= 2:
        secretish = any(w in KEY_QUALIFIERS or w.endswith(("api", "secret", "private")) for w in words[:-1])
    if not secretish:
        return None
    aws = "aws" in words or words[-3:] == ["secret", "access", "key"]
    if aws and ("secret" in words or words[-1] == "key"):
        return "aws-secret-key"
    return "password" if passwordish else "secret-assignment"


def _is_code_ref(value: str, text: str, end: int, password: bool) -> bool:
    """An unquoted value that is code: a call, an attribute, an index (self.token, args.password),
    or a variable or type named in words (key_password, proxy_auth, SecretBytes; for a password
    only without digits, since hunter2 is how people write passwords)."""
    if text[end : end + 1] in ("(", "[", ".") or re.fullmatch(r"(?a)[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+", value):
        return True
    if password:
        return bool(_IDENT.fullmatch(value)) and not any(c.isdigit() for c in value)
    return _named_in_words(value)


def _named_in_words(value: str) -> bool:
    """An identifier a person named: key_password, proxy_auth, SecretBytes, v4auth_header."""
    return bool(_IDENT.fullmatch(value)) and (not any(c.isdigit() for c in value) or _wordy(value))


_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*", re.ASCII)
_WORD_RUN = re.compile(r"[A-Z]?[a-z]{2,}", re.ASCII)


def _wordy(value: str) -> bool:
    """Made of words (io.modelcontextprotocol/subscriptionId, v4auth_header, PKCS7PrivateKeyTypes),
    as names and types are; a generated value's letters come in short runs (Xk7mQ2vL9zB4)."""
    letters = sum(c.isalpha() for c in value)
    if letters == 0 or HEX.fullmatch(value) or len(_DIGIT_RUN.findall(value)) >= 3:
        return False  # digits strewn through it: generated (names keep digits together: Ed25519Key)
    if not any(c in "_./:-" for c in value) and sum(map(_reads_as_word, _CAMEL_WORD.findall(value))) < 2:
        return False  # names are split into words by separators or capitals; a run-on is not a name
    in_words = sum(len(w) for w in _WORD_RUN.findall(value) if len(w) >= 3 and _reads_as_word(w))
    return in_words >= 0.75 * letters


_DIGIT_RUN = re.compile(r"[0-9]+")
_CAMEL_WORD = re.compile(r"[A-Z][a-z]{2,}")
_CONSONANTS5 = re.compile(r"(?i)[b-df-hj-np-tv-xz]{5}", re.ASCII)


def _reads_as_word(run: str) -> bool:
    """A run of letters with vowels where words have them (subscription, Private): a random run
    (Vbnq, Eqhxlx) has too few, or five consonants in a row."""
    vowels = sum(c in "aeiouyAEIOUY" for c in run)
    return vowels >= 0.2 * len(run) and not _CONSONANTS5.search(run)


def _keyword_hits(text: str) -> list[tuple[int, int]]:
    """(start, end) of every keyword in `text` (ASCII, or UTF-8 read as Latin-1), any case, in order.
    On str, not bytes: `in` and `find` on bytes cost 3 to 5 times more a call (bytes `in` first tries
    its argument as an int), and lowering a Latin-1 character never makes an ASCII one, so the
    keywords are where bytes.lower() would put them."""
    low = text.lower()
    if not (
        "key" in low
        or "token" in low
        or "pass" in low
        or "auth" in low
        or "secret" in low
        or "pwd" in low
        or "credential" in low
    ):
        return []  # most strings: seven `in` (a (?i) regex alternation is 5x slower on short ones)
    hits: list[tuple[int, int]] = []
    for kw in KEYWORDS:
        at = low.find(kw)
        while at != -1:
            hits.append((at, at + len(kw)))
            at = low.find(kw, at + 1)
    hits.sort()
    return hits


def _scan_names(text: str, found: list[Finding]) -> None:
    """Assignments (NAME=value, "name": "value", name: value) and headers whose name is a secret's.
    `text` is ASCII, or UTF-8 read as Latin-1 (one character per byte)."""
    if "=" not in text and ":" not in text:
        return  # every name is followed by `=` or `:` (checked below); prose often has neither
    n = len(text)
    last_end = -1
    for start, end in _keyword_hits(text):
        if start < last_end:
            continue
        j = end
        hi = j + 80 if j + 80 < n else n
        while j < hi and text[j] in NAME_CHARS:
            j += 1
        last_end = j
        k = j  # the name must be followed by `=` or `:`, past a closing quote and blanks
        if k < n and text[k] == "\\":
            k += 1
        if k < n and text[k] in "\"'`":
            k += 1
        while k < n and text[k] in " \t" and k - j < 8:
            k += 1
        if k >= n or text[k] not in "=:":
            continue
        i = start
        lo = i - 80 if i > 80 else 0
        while i > lo and text[i - 1] in NAME_CHARS:
            i -= 1
        if i > 0 and text[i - 1] == "\\" and text[i] in "ntr":
            i += 1  # a JSON-escaped line break before the name: \nAuthorization
        name = text[i:j].strip(".-")
        if not name:
            continue
        f = _header_value(text, name, j) if name.lower() in HEADER_NAMES else _assigned_value(text, name, j)
        if f is not None:
            found.append(f)
            last_end = f.end


def _header_value(text: str, name: str, at: int) -> Finding | None:
    """The credential of a header (`Authorization: Bearer <value>`, `x-api-key: <value>`)."""
    h = HEADER_TAIL.match(text, at)
    if h is None or not _random_enough(h.group("v"), 8, hex_ok=True) or _named_in_words(h.group("v")):
        return None
    kind = "auth-header" if "auth" in name.lower() else "api-key-header"
    return Finding(kind, h.start("v"), h.end("v"))


def _assigned_value(text: str, name: str, at: int) -> Finding | None:
    """The value given to a secret-named name at `at` (just past the name), when it is a literal
    that reads as a secret: not a reference, a placeholder, a path, a hash or a plain word."""
    kind = _name_kind(name)
    if kind is None:
        return None
    a = ASSIGN_TAIL.match(text, at)
    if a is None or a.group("op") == "==":
        return None  # no assignment, or a comparison
    value = a.group("v")
    q = a.group("q")
    if q is not None:
        if text[a.end("v") : a.end("v") + len(q)] != q:
            return None  # the value goes on past a blank or a comma: prose, not a literal
    elif _is_code_ref(value, text, a.end("v"), kind == "password"):
        return None
    if NOT_SECRET_VALUE.fullmatch(value) and not (HEX.fullmatch(value) and len(value) >= 16):
        return None
    if kind == "password":
        return Finding(kind, a.start("v"), a.end("v")) if _password_like(value) else None
    if not _random_enough(value, 8, hex_ok=True) or _wordy(value):
        return None
    return Finding(kind, a.start("v"), a.end("v"))


def find_secrets(text: str) -> list[Finding]:
    """The secrets in `text`, in order, none overlapping."""
    if len(text) < _SHORTEST or not text.strip(_HEX_ID):
        return []  # short strings; ids and hashes (UUIDs, git hashes): no rule can match them
    # Every rule is ASCII, so the scan runs over the UTF-8 bytes read as Latin-1: one byte a
    # character, whatever the text holds (a str with one emoji takes 4 bytes a character, and every
    # pass over it 4 times the memory). A character outside ASCII becomes 2 to 4 characters that no
    # rule's class tells apart, so findings start and end on character boundaries; their offsets
    # are mapped back at the end.
    raw = text.encode("utf-8", "surrogatepass")
    work = text if len(raw) == len(text) else raw.decode("latin-1")
    found = _find(work, raw)
    if found and work is not text:
        found = _to_char_offsets(found, raw)
    return found


def _to_char_offsets(found: list[Finding], raw: bytes) -> list[Finding]:
    out: list[Finding] = []
    byte_at = char_at = 0
    for f in found:
        start = char_at + len(raw[byte_at : f.start].decode("utf-8", "surrogatepass"))
        end = start + len(raw[f.start : f.end].decode("utf-8", "surrogatepass"))
        out.append(Finding(f.kind, start, end))
        byte_at, char_at = f.end, end
    return out


# Every provider token (and JWT, PEM body) holds a run of at least this many token characters:
# text without one (most metadata values, names, short prose) skips the provider passes. It is
# looked for as 16 `a` in the bytes translated token character -> `a`, any other byte -> blank:
# `bytes.translate` and `in` run at memory speed, where the regex `[...]{16}` tries every
# position (8x slower on prose, measured).
_TOKEN_CHARS = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_+/=%.-"
_TOKEN_TABLE = bytes(0x61 if c in _TOKEN_CHARS else 0x20 for c in range(256))
_TOKEN_RUN = b"a" * 16
_SHORTEST = 8  # no rule finds a secret in fewer characters ("pw=abc12" is too short to be one)
# A text of these characters only (a UUID, a git hash, a hex digest) holds no secret: every
# provider rule's leading literal, every command-line flag and keyword has a character outside
# them, and URLs and names need a `:` or `=` (tests/backend/privacy/test_redact_values.py checks
# it against the rules). One str.strip, where the full scan of a UUID costs 30 times more.
_HEX_ID = "0123456789abcdef-"


@functools.cache
def _any_provider() -> re.Pattern[str]:
    """Every provider rule in one alternation, groups unnamed: searched position by position, so
    slow on long texts, but one call instead of 32 passes on the short strings that make up most
    of a node's input and metadata (ids, names, paths), and most of them match nothing."""
    alts = [re.sub(r"\(\?P<\w+>", "(?:", pattern) for _kind, pattern, *_rest in PROVIDER_RULES]
    return re.compile("|".join(f"(?:{a})" for a in alts), re.ASCII)


_SHORT_TEXT = 256


def _find(text: str, raw: bytes) -> list[Finding]:
    found: list[Finding] = []
    if raw.translate(_TOKEN_TABLE).find(_TOKEN_RUN) != -1 and (len(text) > _SHORT_TEXT or _any_provider().search(text)):
        _scan_providers(text, found)
    if "://" in text and "@" in text:
        for m in URL_PASSWORD.finditer(text):
            value = m.group("v")
            if _is_placeholder(value) or value.lower() in ("pass", "pw", "password", "x-oauth-basic"):
                continue
            found.append(Finding("url-password", m.start("v"), m.end("v")))
    for needle, rx in CLI_PASSWORDS:
        if needle in text:
            for m in rx.finditer(text):
                value = m.group("v")
                flag = text[m.start() : m.start("v")]
                kind = "secret-assignment" if needle == "--" and "pass" not in flag else "password"
                ok = (
                    _password_like(value)
                    if kind == "password"
                    else _random_enough(value, 8, True) and not _wordy(value)
                )
                if ok:
                    found.append(Finding(kind, m.start("v"), m.end("v")))
    _scan_names(text, found)
    if not found:
        return []
    if "[secret:" in text:
        markers = [mk.span() for mk in MARKER.finditer(text)]
        if markers:
            found = [f for f in found if not any(s < f.end and f.start < e for s, e in markers)]
    return _disjoint(found)


def _scan_providers(text: str, found: list[Finding]) -> None:
    """The provider rules, one pass per group (see provider_passes)."""
    for rx, members in provider_passes():
        for m in rx.finditer(text):
            name = m.lastgroup
            i = members[name] if name in members else next(members[g] for g in members if m.group(g) is not None)
            kind, _pattern, group, _back, edge = PROVIDER_RULES[i]
            back = BACKS[i]
            s, e = m.span(f"v{i}") if group == "v" else (m.start(), m.end(f"r{i}"))
            if back is not None:
                b = back.search(text, max(0, s - 48), s)
                if b is None:
                    continue
                s = b.start()
            if edge and s > 0 and text[s - 1] in EDGE:
                continue  # inside a longer run of token or base64 characters: a hash, a blob
            if kind in LOOSE and not _token_shaped(text[s:e]):
                continue
            found.append(Finding(kind, s, e))


def _token_shaped(value: str) -> bool:
    """The looser provider shapes (sk-..., digits:..., M...x.y, AC+hex) must look generated."""
    body = value.split("-", 1)[-1] if value.startswith("sk-") else value
    if value.startswith("sk-") and len(body) < 32 and "T3BlbkFJ" not in body:
        return False
    has_digit = any(c.isdigit() for c in body)
    has_alpha = any(c.isalpha() for c in body)
    return has_digit and has_alpha and entropy(body) >= 3.0


_RANK = {"private-key": 0}


def _rank(f: Finding) -> int:
    """Which kind names a merged span: a provider's over a header's, URL's or assignment's."""
    if f.kind in _RANK:
        return _RANK[f.kind]
    if f.kind in PROVIDER_KINDS:
        return 1
    if f.kind in ("auth-header", "api-key-header", "url-password"):
        return 2
    return 3


def _disjoint(found: list[Finding]) -> list[Finding]:
    """The findings in text order; where two overlap they become one finding over both spans,
    named by the more specific rule (a GitHub token inside an assignment is a github-token)."""
    found.sort(key=lambda f: (f.start, -(f.end - f.start)))
    out: list[Finding] = []
    for f in found:
        if out and f.start < out[-1].end:
            prev = out[-1]
            kind = prev.kind if _rank(prev) <= _rank(f) else f.kind
            out[-1] = Finding(kind, prev.start, max(prev.end, f.end))
            continue
        out.append(f)
    return out
