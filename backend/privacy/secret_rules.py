"""The tables secret detection reads (detect.py is the engine that runs them): provider token
patterns, command-line and URL password forms, the words that make a name secret-named, header
names, and what a value that is not a secret looks like (placeholders, references, code).
detect.py's docstring says where the patterns come from."""

from __future__ import annotations

import functools
import re

# A marker already in the text (redacted once before) is never a secret again (redact.MARKER is
# the same pattern; it lives here too so that detection imports nothing of redact).
MARKER = re.compile(r"\[secret:[a-z0-9-]+#[0-9a-f]{4}\]", re.ASCII)

# (kind, pattern, value group, back, edge). Every pattern starts with a literal, so that `re` finds
# its candidates at string-search speed (a leading look-behind or character class makes it try
# every position: 30x slower, measured). `back`, when set, is a pattern that must end where the
# match starts (the part of the token before its literal: the `s` of `sk_live_`, the digits of a
# Telegram token); `edge` asks for no token character just before the value's start.
# Findings that overlap become one (see _disjoint).
PROVIDER_RULES: tuple[tuple[str, str, int | str, str | None, bool], ...] = (
    (
        "private-key",
        r"BEGIN[ A-Z0-9]*PRIVATE KEY(?: BLOCK)? ?-{4,5}"
        r"(?:(?:[A-Za-z0-9+/=:,. \t\r\n-]|\\+[nrt]){20,20000}?-{4,5} ?END[ A-Z0-9]*PRIVATE KEY(?: BLOCK)? ?-{4,5}"
        r"|(?:(?:[ \t\r\n]|\\+[nrt])*[A-Za-z0-9+/=]{16,})+)",
        0,
        r"-{4,5} ?",
        False,
    ),
    ("private-key", r"PuTTY-User-Key-File-\d+: [\s\S]{0,20000}?Private-MAC: [0-9a-fA-F]+", 0, None, False),
    ("github-token", r"gh[pousr]_[A-Za-z0-9]{36,251}(?![A-Za-z0-9_])", 0, None, True),
    ("github-token", r"github_pat_[A-Za-z0-9_]{22,255}(?![A-Za-z0-9_])", 0, None, True),
    (
        "gitlab-token",
        r"gl(?:(?:pat|dt|ft|soat|rt)-[A-Za-z0-9_-]{20,64}|cbt-(?:[0-9a-fA-F]{2}_)?[A-Za-z0-9_-]{20,50}"
        r"|imt-[A-Za-z0-9_-]{25}|ptt-[A-Za-z0-9_-]{40}|agent-[A-Za-z0-9_-]{50,1024}|oas-[A-Za-z0-9_-]{64})(?![A-Za-z0-9_-])",
        0,
        None,
        True,
    ),
    ("gitlab-token", r"GR1348941[A-Za-z0-9_-]{20,50}(?![A-Za-z0-9_-])", 0, None, True),
    (
        "slack-webhook",
        r"hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9_]+/[A-Za-z0-9_/]+",
        0,
        r"(?:https?://)?",
        False,
    ),
    ("slack-token", r"xox[abposre]-(?:\d+-)*[A-Za-z0-9-]{10,250}(?![A-Za-z0-9_])", 0, None, True),
    ("slack-token", r"xapp-\d-[A-Z0-9]+-\d+-[A-Za-z0-9]+(?![A-Za-z0-9_])", 0, None, True),
    (
        "discord-webhook",
        r"discord(?:app)?\.com/api/webhooks/\d+/[A-Za-z0-9_-]{20,}",
        0,
        r"(?:https?://(?:ptb\.|canary\.)?)?",
        False,
    ),
    ("stripe-key", r"k_(?:live|test)_[0-9a-zA-Z]{20,247}(?![A-Za-z0-9_])", 0, r"[sr]", True),
    ("stripe-key", r"whsec_[A-Za-z0-9]{24,}(?![A-Za-z0-9_])", 0, None, True),
    ("anthropic-key", r"sk-ant-[A-Za-z0-9_-]{20,}(?![A-Za-z0-9_])", 0, None, True),
    ("openai-key", r"sk-(?!ant-)[A-Za-z0-9_-]{20,}(?![A-Za-z0-9_])", 0, None, True),
    ("aws-access-key", r"A(?:3T[A-Z0-9]|KIA|SIA|BIA|CCA)[A-Z0-9]{16}(?![A-Za-z0-9_])", 0, None, True),
    ("google-api-key", r"AIza[0-9A-Za-z_-]{35}(?![A-Za-z0-9_])", 0, None, True),
    ("google-oauth-secret", r"GOCSPX-[A-Za-z0-9_-]{28}(?![A-Za-z0-9_])", 0, None, True),
    ("google-oauth-token", r"ya29\.[0-9A-Za-z_-]{30,}(?![A-Za-z0-9_])", 0, None, True),
    ("azure-storage-key", r"AccountKey=(?P<v>[A-Za-z0-9+/]{20,120}={0,2})", "v", None, False),
    ("azure-storage-key", r"SharedAccessKey=(?P<v>[A-Za-z0-9+/]{20,120}={0,2})", "v", None, False),
    ("azure-sas", r"sig=(?P<v>[A-Za-z0-9%+/]{30,}(?:%3D|=){0,2})", "v", r"[?&;]", False),
    ("twilio-key", r"AC[0-9a-f]{32}(?![A-Za-z0-9_])", 0, None, True),
    ("twilio-key", r"SK[0-9a-f]{32}(?![A-Za-z0-9_])", 0, None, True),
    ("sendgrid-key", r"SG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}(?![A-Za-z0-9_])", 0, None, True),
    ("mailgun-key", r"key-[0-9a-f]{32}(?![A-Za-z0-9_])", 0, None, True),
    ("mailchimp-key", r"-us[0-9]{1,2}(?![A-Za-z0-9_])", 0, r"[0-9a-f]{32}", True),
    ("npm-token", r"npm_[A-Za-z0-9]{36}(?![A-Za-z0-9_])", 0, None, True),
    ("pypi-token", r"pypi-AgE[A-Za-z0-9_-]{50,}(?![A-Za-z0-9_])", 0, None, True),
    ("docker-token", r"dckr_(?:pat|oat)_[A-Za-z0-9_-]{20,}(?![A-Za-z0-9_])", 0, None, True),
    ("heroku-key", r"HRKU-[A-Za-z0-9_-]{20,}(?![A-Za-z0-9_])", 0, None, True),
    ("shopify-token", r"shp(?:at|ss|ca|pa)_[a-fA-F0-9]{32}(?![A-Za-z0-9_])", 0, None, True),
    ("huggingface-token", r"hf_[A-Za-z0-9]{30,}(?![A-Za-z0-9_])", 0, None, True),
    ("huggingface-token", r"api_org_[A-Za-z0-9]{30,}(?![A-Za-z0-9_])", 0, None, True),
    ("digitalocean-token", r"do[opr]_v1_[a-f0-9]{64}(?![A-Za-z0-9_])", 0, None, True),
    ("square-token", r"sq0(?:csp|atp)-[0-9A-Za-z_-]{22,43}(?![A-Za-z0-9_])", 0, None, True),
    ("databricks-token", r"dapi[a-f0-9]{32}(?:-\d)?(?![A-Za-z0-9_])", 0, None, True),
    ("jwt", r"eyJ[A-Za-z0-9_-]{5,}\.eyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]*(?![A-Za-z0-9_])", 0, None, True),
    (
        "discord-token",
        r"\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27,40}(?![A-Za-z0-9_.-])",
        0,
        r"(?<![A-Za-z0-9_.+/-])[MNO][A-Za-z0-9_-]{23,27}",
        False,
    ),
    ("telegram-token", r":[0-9A-Za-z_-]{35}(?![A-Za-z0-9_-])", 0, r"(?:(?<=bot)|(?<![\w:]))\d{8,10}", False),
)
EDGE = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_+/-")
BACKS = tuple(re.compile(f"(?:{back})\\Z", re.ASCII) if back else None for _k, _p, _g, back, _e in PROVIDER_RULES)


@functools.cache
def provider_passes() -> tuple[tuple[re.Pattern[str], dict[str, int]], ...]:
    """The rules as one pattern per first character (two for a lowercase letter; 32 passes over a
    text instead of 42): the shared characters stand before the alternation, so `re` still searches for it at string speed (an
    alternation of groups that each start with it is searched position by position: 50x slower).
    Rule i is the group `r<i>` (after the shared character); its value group `v<i>`. Compiled on
    the first scan, not at import (a command that redacts nothing does not pay for it)."""
    by_first: dict[str, list[int]] = {}
    for i, (_kind, pattern, *_rest) in enumerate(PROVIDER_RULES):
        first = pattern[:2] if pattern[0] == "\\" else pattern[0]
        if first.islower() and pattern[1].isalnum():
            first = pattern[:2]  # lowercase letters are common in text: share two of them, not one
        by_first.setdefault(first, []).append(i)
    out = []
    for key, members in by_first.items():
        first = key if len(members) > 1 else ""  # one rule alone keeps its whole literal prefix
        alts = [f"(?P<r{i}>{PROVIDER_RULES[i][1][len(first) :].replace('(?P<v>', f'(?P<v{i}>')})" for i in members]
        out.append((re.compile(first + "(?:" + "|".join(alts) + ")", re.ASCII), {f"r{i}": i for i in members}))
    return tuple(out)


PROVIDER_KINDS = frozenset(k for k, *_ in PROVIDER_RULES)
# Kinds whose shape alone is loose (sk-..., digits:..., M...x.y, AC+hex): their value must also
# read as generated.
LOOSE = frozenset({"openai-key", "telegram-token", "discord-token", "twilio-key"})

# URLs with a password: scheme://user:password@host. The value is the password.
URL_PASSWORD = re.compile(r"://(?P<user>[^\s:/@\"'\\<>{}]*):(?P<v>[^\s@/\"'\\<>]{1,256})@(?=[A-Za-z0-9\[_])", re.ASCII)

# Passwords given on a command line or in a .netrc: curl -u user:password, machine h login u password p.
CLI_PASSWORDS = (
    (" -u", re.compile(r"""(?<=\s)-u\s*["']?[^\s:"'$]+:(?P<v>[^\s"']{1,256})""", re.ASCII)),
    ("--user", re.compile(r"""--user[=\s]\s*["']?[^\s:"'$]+:(?P<v>[^\s"']{1,256})""", re.ASCII)),
    ("machine", re.compile(r"machine\s+\S+\s+login\s+\S+\s+password\s+(?P<v>\S{1,256})", re.ASCII)),
    (
        "--",  # docker login --password X, gh --token X, --client-secret X (the `=` form is an assignment)
        re.compile(
            r"""--(?:[a-z]+-)*(?:password|passwd|token|api-key|apikey|secret|auth-token)[ \t]+["']?"""
            r"""(?P<v>[^\s"'$<{-][^\s"']{3,255})""",
            re.ASCII,
        ),
    ),
)

# Every assignment, header and secret-named field has one of these words in its name. They are
# looked for in the lowercased text (str.find; a case-insensitive regex is 20x slower).
KEYWORDS = ("token", "secret", "pass", "pwd", "credential", "key", "auth")
NAME_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-")

# After a name: an optional closing quote (JSON-escaped too), the assignment, an optional opening
# quote; then the value, up to its closing quote or the first blank, comma, bracket or backslash.
ASSIGN_TAIL = re.compile(
    r"""(?:\\?["'`])?[ \t]*(?P<op>:=|=>|==|=|:)[ \t]*(?P<q>\\?["'`])?"""
    r"""(?P<v>[^\s"'`\\,;(){}\[\]<>]{1,512})""",
    re.ASCII,
)
# A header's tail: name: [scheme] value, as HTTP, curl -H and JSON write it.
HEADER_TAIL = re.compile(
    r"""(?:\\?["'])?[ \t]*[:=][ \t]*(?:\\?["'])?(?:(?i:bearer|basic|token|digest|apikey|sso-key|key)[ \t]+)?"""
    r"""(?P<v>[A-Za-z0-9._~+/=:-]{1,2048})""",
    re.ASCII,
)
HEADER_NAMES = frozenset(
    {
        "authorization",
        "proxy-authorization",
        "x-api-key",
        "api-key",
        "x-apikey",
        "x-auth-token",
        "x-access-token",
        "private-token",
        "x-goog-api-key",
        "x-gitlab-token",
        "x-vault-token",
        "ocp-apim-subscription-key",
        "x-figma-token",
    }
)

SPLIT_NAME = re.compile(r"[_.-]+|(?<=[a-z0-9])(?=[A-Z])", re.ASCII)
# Last words of a name that make it about a secret, not the secret: token_type, key_id, secret_name.
NOT_SECRET_LAST = frozenset(
    [
        "id",
        "ids",
        "count",
        "counts",
        "type",
        "types",
        "name",
        "names",
        "file",
        "files",
        "path",
        "paths",
        "dir",
        "url",
        "uri",
        "urls",
        "endpoint",
        "host",
        "len",
        "length",
        "size",
        "limit",
        "limits",
        "env",
        "var",
        "vars",
        "field",
        "fields",
        "header",
        "headers",
        "prefix",
        "kind",
        "hash",
        "hashes",
        "sha",
        "digest",
        "expires",
        "expiry",
        "expiration",
        "at",
        "ttl",
        "format",
        "mode",
        "version",
        "policy",
        "usage",
        "budget",
        "estimate",
        "regex",
        "pattern",
        "source",
        "provider",
        "index",
        "ref",
        "label",
        "helper",
        "method",
        "location",
        "algorithm",
        "alg",
        "enabled",
        "required",
        "set",
        "fingerprint",
        "tokens",
        "tokenizer",
        "tokenize",
        "tokenized",
        "prompt",
        "prompts",
        "input",
        "output",
        "cached",
        "cache",
        "max",
        "min",
        "used",
        "total",
        "rate",
        "placeholder",
        "hint",
        "help",
        "description",
        "desc",
        "error",
        "errors",
        "message",
        "status",
        "valid",
        "validity",
        "len",
        "store",
        "storage",
        "manager",
        "service",
        "client",
        "server",
        "handler",
        "callback",
        "func",
        "function",
        "class",
        "module",
        "lib",
        "bytes",
        "bits",
        "store",
        "strength",
        "policy",
        "rule",
        "rules",
        "scope",
        "scopes",
        "issuer",
        "audience",
        "spec",
        "schema",
        "option",
        "options",
        "display",
        "mask",
        "masked",
        "redacted",
        "length",
        "config",
        "settings",
    ]
)
SECRET_WORDS = frozenset({"token", "secret", "password", "passwd", "pwd", "pass", "passphrase", "credential"})
SECRET_WORDS |= {"credentials", "apikey", "auth", "pswd", "pw", "secrets", "passcode", "pin"}
KEY_QUALIFIERS = frozenset(
    [
        "api",
        "access",
        "secret",
        "private",
        "signing",
        "encryption",
        "master",
        "client",
        "app",
        "application",
        "service",
        "account",
        "auth",
        "session",
        "ssh",
        "gpg",
        "pgp",
        "license",
        "webhook",
        "deploy",
        "admin",
        "write",
        "read",
        "root",
        "hmac",
        "jwt",
        "cookie",
        "shared",
        "storage",
        "subscription",
        "consumer",
        "integration",
        "bot",
    ]
)
SHORT_WORDS = frozenset({"pass", "pw", "pwd", "pswd", "auth", "pin"})
WORD_ENDINGS = ("password", "passwd", "secret", "token", "apikey")

PLACEHOLDERS = frozenset(
    [
        "changeme",
        "change_me",
        "change-me",
        "changeit",
        "password",
        "passwd",
        "secret",
        "token",
        "apikey",
        "api_key",
        "key",
        "value",
        "example",
        "sample",
        "dummy",
        "test",
        "testing",
        "fake",
        "placeholder",
        "redacted",
        "hidden",
        "masked",
        "none",
        "null",
        "nil",
        "true",
        "false",
        "undefined",
        "empty",
        "string",
        "str",
        "int",
        "bool",
        "boolean",
        "number",
        "bytes",
        "optional",
        "any",
        "object",
        "required",
        "sensitive",
        "todo",
        "tbd",
        "fixme",
        "xxx",
        "yyy",
        "zzz",
        "foo",
        "bar",
        "baz",
        "foobar",
        "abc",
        "abc123",
        "123456",
        "12345678",
        "password123",
        "letmein",
        "admin",
        "root",
        "user",
        "username",
        "default",
        "secret123",
        "mysecret",
        "mypassword",
        "yourpassword",
        "your_password",
        "your-password",
        "pass",
        "pwd",
        "var",
        "env",
        "self",
        "this",
        "none",
    ]
)
PLACEHOLDER_RX = re.compile(
    r"(?i)^(?:[x*.#_-]+|0+|(?:your|my|the|some|insert|enter|replace|put)[_-]?\w*|\w*(?:example|placeholder|dummy|redacted"
    r"|here|goes|xxxx|\*\*\*)\w*)$",
    re.ASCII,
)
# Values that are references or code, not literals.
NOT_SECRET_VALUE = re.compile(
    r"""(?ix)
    (?:sha(?:1|224|256|384|512)|md5|blake2b?)[:-][A-Za-z0-9+/=]+   # digests, npm integrity
    | [0-9a-f]{7,40}                                                # git hashes (an assignment may still take hex)
    | v?\d+(?:\.\d+)+(?:[-+.][\w.]+)?                               # versions
    | \d+(?:\.\d+)?[a-z]{0,3}                                       # numbers, sizes, durations
    | (?:\.{1,2}|~)?/[\w.-]*/[\w./-]*|(?:\.{1,2}|~)?/[a-z0-9_.-]{0,30}|[a-z]:\\.*  # paths
    | [\w./-]+\.(?:json|ya?ml|toml|pem|key|crt|cer|txt|env|ini|cfg|conf|py|js|ts|sh|p12|pfx|jks|gpg|asc|pub)
    | https?://\S*                                                  # a URL (its password is another rule's)
    """,
    re.ASCII,
)
HEX = re.compile(r"[0-9a-fA-F]+", re.ASCII)
