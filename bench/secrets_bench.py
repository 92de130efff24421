"""Secret detection figures (opmem issue 21), each beside a baseline measured in the same run.

  python bench/secrets_bench.py [--quick] [--show-fixtures]

1. Recall on a seeded generator of 40+ secret kinds (provider tokens, PEM keys, JWTs, URLs with a
   password, auth headers, secret-named assignments) in realistic surroundings: shell exports,
   `.env` files printed by cat, curl headers, JSON and YAML configs, Python tracebacks,
   docker-compose environments, connection strings, log lines, and the same texts as the JSON
   lines of a transcript. A secret counts as caught when its value is fully covered by findings and
   nothing of it survives redact_text. Beside it, detect-secrets' own line scan (`scan_line` with its
   default plugins) on the same samples: a value counts as caught there when a reported secret
   covers it. Target: recall >= 0.98.
2. False positives: every file under the shared fixtures (read as text) and a generated corpus of
   must-never values (git hashes, UUIDs, sha1/256/512 hex, `sha256:` digests, paths, base64 image
   data and JSON blobs, versions, npm lockfile lines, env var references, placeholders, markers,
   code using `token`/`key`/`password` names), and the installed Python packages' own source
   (real code and docs full of such names). Each figure beside its line count.
   Target: <= 1 per 10,000 lines. `--show-fixtures` lists each fixture finding (kind, file, line,
   the name before it and the value's length, never the value) for review.
3. Throughput on the fixture transcripts (ordinary session text) and on plain prose with no
   candidate, beside `str.lower()` and a trivial `re.search` over the same text, as ratios; and
   detect-secrets' per-line scan on the same transcripts.
4. Redacting twice equals redacting once on every generated sample.
"""

from __future__ import annotations

import base64
import json
import random
import re
import string
import subprocess
import sys
import sysconfig
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from harness import best_of, parser

from opmem_tui.backend.privacy import find_secrets, redact_text

FIXTURES = Path(__file__).resolve().parents[2] / "shared" / "fixtures"
if not FIXTURES.is_dir():
    FIXTURES = Path("/work/shared/fixtures")

ALNUM = string.ascii_letters + string.digits
UPPER_DIGITS = string.ascii_uppercase + string.digits
HEX = "0123456789abcdef"
B64 = ALNUM + "+/"
B64URL = ALNUM + "-_"
# Password characters: what .env files, YAML and JSON hold unquoted or in quotes without escapes.
PW = ALNUM + "!#%^*-_+=.~@"
URL_PW = ALNUM + "-._~"


class Gen:
    def __init__(self, seed: int) -> None:
        self.r = random.Random(seed)

    def s(self, alphabet: str, n: int) -> str:
        return "".join(self.r.choice(alphabet) for _ in range(n))

    def mixed(self, alphabet: str, n: int) -> str:
        """Random, with at least one digit, one lower and one upper letter (as generated tokens are)."""
        while True:
            v = self.s(alphabet, n)
            if any(c.isdigit() for c in v) and any(c.islower() for c in v) and any(c.isupper() for c in v):
                return v

    def password(self, n: int | None = None, alphabet: str = PW) -> str:
        n = n or self.r.randint(10, 24)
        while True:
            v = self.mixed(alphabet, n)
            if v[0] not in "!#%^*-_+=.~@" and v[-1] not in ".-":
                return v

    def b64(self, nbytes: int, url: bool = False) -> str:
        raw = bytes(self.r.getrandbits(8) for _ in range(nbytes))
        return base64.urlsafe_b64encode(raw).decode().rstrip("=") if url else base64.b64encode(raw).decode()

    def pem(self, label: str, lines: int) -> str:
        body = "\n".join(self.b64(48) for _ in range(lines))
        if label == "OPENSSH PRIVATE KEY":
            body = "b3BlbnNzaC1rZXktdjEAAAAA" + body[24:]
        return f"-----BEGIN {label}-----\n{body}\n-----END {label}-----"

    def jwt(self) -> str:
        head = base64.urlsafe_b64encode(json.dumps({"alg": "HS256", "typ": "JWT"}).encode()).decode().rstrip("=")
        claims = {"sub": str(self.r.randint(1, 10**9)), "name": self.s(string.ascii_lowercase, 8), "iat": 1700000000}
        payload = base64.urlsafe_b64encode(json.dumps(claims).encode()).decode().rstrip("=")
        return f"{head}.{payload}.{self.b64(32, url=True)}"


# Each kind: (label, env name, value maker). The env name is the variable a user would hold it in.
def kinds(g: Gen) -> dict[str, tuple[str, object]]:
    r = g.r
    return {
        "aws-access-key": ("AWS_ACCESS_KEY_ID", lambda: "AKIA" + g.s(UPPER_DIGITS, 16)),
        "aws-secret-key": ("AWS_SECRET_ACCESS_KEY", lambda: g.mixed(B64, 40)),
        "github-classic": ("GITHUB_TOKEN", lambda: "ghp_" + g.mixed(ALNUM, 36)),
        "github-fine-grained": ("GH_TOKEN", lambda: "github_pat_" + g.mixed(ALNUM, 22) + "_" + g.mixed(ALNUM, 59)),
        "github-app": ("GITHUB_APP_TOKEN", lambda: r.choice(("ghs_", "ghu_")) + g.mixed(ALNUM, 36)),
        "gitlab": ("GITLAB_TOKEN", lambda: "glpat-" + g.mixed(ALNUM + "-_", 20)),
        "slack-bot": (
            "SLACK_BOT_TOKEN",
            lambda: f"xoxb-{r.randint(10**10, 10**12)}-{r.randint(10**10, 10**12)}-{g.mixed(ALNUM, 24)}",
        ),
        "slack-user": (
            "SLACK_USER_TOKEN",
            lambda: (
                f"xoxp-{r.randint(10**10, 10**12)}-{r.randint(10**10, 10**12)}-{r.randint(10**10, 10**12)}-{g.s(HEX, 32)}"
            ),
        ),
        "slack-webhook": (
            "SLACK_WEBHOOK_URL",
            lambda: (
                f"https://hooks.slack.com/services/T{g.s(UPPER_DIGITS, 8)}/B{g.s(UPPER_DIGITS, 10)}/{g.mixed(ALNUM, 24)}"
            ),
        ),
        "stripe-live": (
            "STRIPE_SECRET_KEY",
            lambda: r.choice(("sk_live_", "rk_live_")) + g.mixed(ALNUM, r.randint(24, 99)),
        ),
        "stripe-test": ("STRIPE_KEY", lambda: "sk_test_" + g.mixed(ALNUM, r.randint(24, 99))),
        "openai": (
            "OPENAI_API_KEY",
            lambda: r.choice(
                (
                    "sk-proj-" + g.mixed(B64URL, 74) + "T3BlbkFJ" + g.mixed(B64URL, 74),
                    "sk-" + g.mixed(ALNUM, 20) + "T3BlbkFJ" + g.mixed(ALNUM, 20),
                    "sk-svcacct-" + g.mixed(B64URL, 74) + "T3BlbkFJ" + g.mixed(B64URL, 74),
                )
            ),
        ),
        "anthropic": ("ANTHROPIC_API_KEY", lambda: "sk-ant-api03-" + g.mixed(B64URL, 93) + "AA"),
        "google-api-key": ("GOOGLE_API_KEY", lambda: "AIza" + g.mixed(B64URL, 35)),
        "gcp-service-account": ("GOOGLE_APPLICATION_CREDENTIALS_JSON", lambda: g.pem("PRIVATE KEY", r.randint(8, 26))),
        "azure-storage": ("AZURE_STORAGE_KEY", lambda: g.b64(64)),
        "twilio": ("TWILIO_AUTH_TOKEN", lambda: g.s(HEX, 32)),
        "twilio-api-key": ("TWILIO_API_KEY", lambda: "SK" + g.s(HEX, 32)),
        "sendgrid": ("SENDGRID_API_KEY", lambda: "SG." + g.mixed(B64URL, 22) + "." + g.mixed(B64URL, 43)),
        "mailgun": ("MAILGUN_API_KEY", lambda: "key-" + g.s(HEX, 32)),
        "npm": ("NPM_TOKEN", lambda: "npm_" + g.mixed(ALNUM, 36)),
        "pypi": ("PYPI_TOKEN", lambda: "pypi-AgEIcHlwaS5vcmc" + g.mixed(B64URL, r.randint(70, 160))),
        "docker-hub": ("DOCKERHUB_TOKEN", lambda: "dckr_pat_" + g.mixed(B64URL, 27)),
        "heroku": (
            "HEROKU_API_KEY",
            lambda: r.choice(("HRKU-AA" + g.mixed(B64URL, 58), str(uuid.UUID(int=r.getrandbits(128))))),
        ),
        "shopify": ("SHOPIFY_ACCESS_TOKEN", lambda: r.choice(("shpat_", "shpss_")) + g.s(HEX, 32)),
        "discord-bot": (
            "DISCORD_BOT_TOKEN",
            lambda: r.choice("MNO") + g.mixed(B64URL, 23) + "." + g.mixed(B64URL, 6) + "." + g.mixed(B64URL, 27),
        ),
        "telegram-bot": ("TELEGRAM_BOT_TOKEN", lambda: f"{r.randint(10**8, 10**10 - 1)}:AA{g.mixed(B64URL, 33)}"),
        "huggingface": ("HF_TOKEN", lambda: "hf_" + g.mixed(ALNUM, 34)),
        "digitalocean": ("DIGITALOCEAN_TOKEN", lambda: "dop_v1_" + g.s(HEX, 64)),
        "datadog": ("DD_API_KEY", lambda: g.s(HEX, 32)),
        "datadog-app": ("DD_APP_KEY", lambda: g.s(HEX, 40)),
        "jwt": ("SESSION_TOKEN", g.jwt),
        "pem-rsa": ("SSH_KEY", lambda: g.pem("RSA PRIVATE KEY", r.randint(10, 25))),
        "pem-ec": ("EC_KEY", lambda: g.pem("EC PRIVATE KEY", r.randint(3, 5))),
        "pem-openssh": ("DEPLOY_KEY", lambda: g.pem("OPENSSH PRIVATE KEY", r.randint(5, 20))),
        "postgres-url": ("DATABASE_URL", lambda: g.password(alphabet=URL_PW)),
        "mysql-url": ("MYSQL_URL", lambda: g.password(alphabet=URL_PW)),
        "redis-url": ("REDIS_URL", lambda: g.password(alphabet=URL_PW)),
        "mongodb-url": ("MONGO_URI", lambda: g.password(alphabet=URL_PW)),
        "amqp-url": ("AMQP_URL", lambda: g.password(alphabet=URL_PW)),
        "git-https-token": ("GIT_REMOTE", lambda: "ghp_" + g.mixed(ALNUM, 36)),
        "basic-auth": (
            "AUTH",
            lambda: base64.b64encode(f"{g.s(string.ascii_lowercase, 6)}:{g.password()}".encode()).decode(),
        ),
        "bearer-header": ("AUTH", lambda: g.mixed(B64URL, r.randint(24, 64))),
        "x-api-key": ("AUTH", lambda: g.mixed(ALNUM, r.randint(24, 48))),
        "generic-secret": (
            r.choice(("APP_SECRET", "JWT_SECRET", "CLIENT_SECRET", "SECRET_KEY", "WEBHOOK_SECRET", "SIGNING_KEY")),
            lambda: g.mixed(ALNUM + "-_", r.randint(16, 48)),
        ),
        "password": (
            "PASSWORD",
            lambda: g.password(),
        ),
    }


URL_FORMS = {
    "postgres-url": "postgres://{user}:{v}@db.internal:5432/app",
    "mysql-url": "mysql://root:{v}@127.0.0.1:3306/shop",
    "redis-url": "redis://:{v}@cache:6379/0",
    "mongodb-url": "mongodb+srv://{user}:{v}@cluster0.ab12c.mongodb.net/app?retryWrites=true&w=majority",
    "amqp-url": "amqp://{user}:{v}@rabbit:5672/vhost",
    "git-https-token": "https://{user}:{v}@github.com/acme/api.git",
}
PASSWORD_NAMES = ("PASSWORD", "DB_PASSWORD", "POSTGRES_PASSWORD", "MYSQL_ROOT_PASSWORD", "REDIS_PASS", "ADMIN_PWD")


def surround(g: Gen, kind: str, name: str, value: str) -> str:
    """`value` in one of the places a session shows secrets."""
    r = g.r
    user = r.choice(("app", "admin", "deploy", "svc_api", "postgres"))
    if kind in URL_FORMS:
        url = URL_FORMS[kind].format(user=user, v=value)
        return r.choice(
            (
                f"$ export {name}={url}\n",
                f"$ cat .env\nNODE_ENV=production\n{name}={url}\nPORT=8080\n",
                f'{{\n  "database": {{\n    "url": "{url}"\n  }}\n}}\n',
                f"$ git remote -v\norigin\t{url} (fetch)\norigin\t{url} (push)\n"
                if kind == "git-https-token"
                else f"$ psql {url}\npsql: error: connection refused\n",
                f"2025-03-04 10:12:01,553 INFO  [db] connecting to {url}\n",
                f'  File "/srv/app/db.py", line 41, in connect\n    engine = create_engine("{url}")\nOperationalError: could not connect\n',
            )
        )
    if kind == "basic-auth":
        return r.choice(
            (
                f'$ curl -s -H "Authorization: Basic {value}" https://api.internal/v1/users\n',
                f"GET /v1/users HTTP/1.1\nHost: api.internal\nAuthorization: Basic {value}\nAccept: */*\n",
                f'headers = {{"Authorization": "Basic {value}"}}\n',
            )
        )
    if kind == "bearer-header":
        return r.choice(
            (
                f"$ curl -H 'Authorization: Bearer {value}' https://api.example.com/v2/me\n",
                f'fetch(url, {{ headers: {{ "Authorization": "Bearer {value}" }} }})\n',
                f"> GET /me HTTP/2\n> authorization: Bearer {value}\n> user-agent: curl/8.4.0\n",
                f'$ http GET :8000/api/items "Authorization: Token {value}"\n',
            )
        )
    if kind == "x-api-key":
        return r.choice(
            (
                f'$ curl https://api.anthropic.example/v1/messages -H "x-api-key: {value}" -H "content-type: application/json"\n',
                f"requests.get(url, headers={{'X-API-Key': '{value}'}})\n",
                f"> x-api-key: {value}\n",
            )
        )
    if kind in ("pem-rsa", "pem-ec", "pem-openssh"):
        return r.choice(
            (
                f"$ cat ~/.ssh/id_rsa\n{value}\n$ ls\n",
                f"{name.lower()}: |\n" + "\n".join("  " + line for line in value.splitlines()) + "\n",
                f"Here is the key you asked about:\n\n```\n{value}\n```\n",
            )
        )
    if kind == "gcp-service-account":
        doc = {
            "type": "service_account",
            "project_id": "acme-prod-4412",
            "private_key_id": g.s(HEX, 40),
            "private_key": value + "\n",
            "client_email": "deployer@acme-prod-4412.iam.gserviceaccount.com",
            "client_id": str(r.randint(10**20, 10**21)),
            "token_uri": "https://oauth2.googleapis.com/token",
        }
        return f"$ cat sa.json\n{json.dumps(doc, indent=2)}\n"
    if kind == "azure-storage":
        cs = f"DefaultEndpointsProtocol=https;AccountName=acmestore{r.randint(1, 99)};AccountKey={value};EndpointSuffix=core.windows.net"
        return r.choice(
            (
                f'$ export AZURE_STORAGE_CONNECTION_STRING="{cs}"\n',
                f'  "ConnectionStrings": {{ "Storage": "{cs}" }}\n',
                f'$ az storage account show-connection-string -n acme\n{{\n  "connectionString": "{cs}"\n}}\n',
            )
        )
    if kind == "slack-webhook":
        return r.choice(
            (
                f"$ curl -X POST -H 'Content-type: application/json' --data '{{\"text\":\"deploy done\"}}' {value}\n",
                f"{name}={value}\n",
            )
        )
    if kind == "password":
        name = r.choice(PASSWORD_NAMES)
        if r.random() < 0.25:
            return r.choice(
                (
                    f"$ curl -s -u {user}:{value} https://jenkins.internal/api/json\n",
                    f"$ docker login registry.internal -u {user} --password {value}\n",
                    f"machine api.internal\n  login {user}\n  password {value}\n",
                    f"$ psql 'host=db.internal user={user} password={value} dbname=app'\n",
                )
            )
    low = name.lower()
    forms = [
        f"$ export {name}={value}\n",
        f'$ export {name}="{value}"\n',
        f"$ cat .env\n# local settings\nNODE_ENV=development\nPORT=3000\n{name}={value}\nLOG_LEVEL=debug\n",
        f'{{\n  "name": "worker",\n  "env": {{\n    "{name}": "{value}",\n    "REGION": "eu-west-1"\n  }}\n}}\n',
        f"app:\n  region: eu-west-1\n  {low}: {value}\n  retries: 3\n",
        f'app:\n  {low}: "{value}"\n',
        f"services:\n  web:\n    image: acme/web:1.4.2\n    environment:\n      - {name}={value}\n      - DEBUG=0\n",
        f"2025-03-04T10:11:12.123Z DEBUG loaded config {low}={value} from env\n",
        "Traceback (most recent call last):\n"
        '  File "/srv/app/main.py", line 88, in <module>\n'
        f'    client = Client({low}="{value}", timeout=30)\n'
        '  File "/srv/app/client.py", line 12, in __init__\n'
        "    raise ConnectionError(url)\nConnectionError: https://api.internal\n",
        f"{low} = '{value}'\n",
        f'{name}: "{value}"\n',
    ]
    # Bare in prose only where the token's shape says what it is (a UUID or hex alone is no secret).
    if not kind.startswith(("generic", "password", "aws-secret", "twilio", "datadog")) and not re.fullmatch(
        r"[0-9a-f-]+", value
    ):
        forms.append(f"The key is {value} and it expires next week.\n")
        forms.append(f"$ echo {value} | docker login --password-stdin\n")
    return r.choice(forms)


def samples(seed: int, per_kind: int) -> list[tuple[str, str, list[str]]]:
    """(kind, text, values): each text holds its values; a third of them wrapped as transcript JSON lines."""
    g = Gen(seed)
    out = []
    table = kinds(g)
    for kind, (name, make) in table.items():
        for i in range(per_kind):
            value = make()  # type: ignore[operator]
            text = surround(g, kind, name, value)
            if i % 3 == 2:  # as a transcript line holds it: JSON-escaped
                text = (
                    json.dumps({"type": "tool_result", "tool_use_id": f"toolu_{g.s(ALNUM, 24)}", "content": text})
                    + "\n"
                )
            out.append((kind, text, [value]))
    return out


def _forms(value: str) -> list[str]:
    """The value as written raw, JSON-escaped once (a JSON config) and twice (that config in a
    transcript line)."""
    once = json.dumps(value)[1:-1]
    return [value, once, json.dumps(once)[1:-1]]


def caught(text: str, value: str) -> bool:
    """Every place of the value in the text covered by findings, and none of it left after redaction.
    A value split over lines in its text (a PEM key indented in YAML) is checked line by line."""
    findings = find_secrets(text)
    redacted = redact_text(text)
    for form in _forms(value):
        if form in text:
            return _covered(text, form, findings) and form not in redacted
    pieces = [p for p in value.splitlines() if p]
    if len(pieces) > 1 and all(any(f in text for f in _forms(p)) for p in pieces):
        return all(caught(text, p) for p in pieces)
    raise AssertionError(f"generator bug: value not in its text: {value!r}")


def _covered(text: str, value: str, findings: list) -> bool:
    at = text.find(value)
    while at >= 0:
        end = at + len(value)
        covered = at
        for f in findings:
            if f.start <= covered < f.end:
                covered = f.end
        if covered < end:
            return False
        at = text.find(value, end)
    return True


# ---------------------------------------------------------------- negatives


def negatives(seed: int, lines: int) -> dict[str, list[str]]:
    """Must-never corpora, by category, about `lines` lines in all."""
    g = Gen(seed)
    r = g.r
    per = max(1, lines // 14)

    def uuid4() -> str:
        return str(uuid.UUID(int=r.getrandbits(128), version=4))

    words = [
        "fix",
        "add",
        "refactor",
        "update",
        "remove",
        "bump",
        "merge",
        "revert",
        "docs",
        "tests",
        "cache",
        "parser",
        "store",
        "index",
    ]
    cats: dict[str, list[str]] = {}
    cats["git hashes"] = [
        r.choice(
            (
                f"{g.s(HEX, r.randint(7, 12))} {r.choice(words)} {r.choice(words)} in the {r.choice(words)}",
                f"commit {g.s(HEX, 40)}",
                f"Merge: {g.s(HEX, 7)} {g.s(HEX, 7)}",
                f"HEAD is now at {g.s(HEX, 7)} {r.choice(words)}",
                f'  "sha": "{g.s(HEX, 40)}",',
                f"git checkout {g.s(HEX, 40)} -- src/app.py",
                f"GIT_COMMIT={g.s(HEX, 40)}",
            )
        )
        for _ in range(per)
    ]
    cats["uuids"] = [
        r.choice(
            (
                f'{{"uuid": "{uuid4()}", "parentUuid": "{uuid4()}", "sessionId": "{uuid4()}"}}',
                f"request_id={uuid4()} status=200",
                f"  id: {uuid4()}",
                f"/home/ana/.claude/projects/-work-api/{uuid4()}.jsonl",
                f'"tool_use_id": "{uuid4()}"',
                f"trace {uuid4().upper()}",
            )
        )
        for _ in range(per)
    ]
    cats["content hashes"] = [
        r.choice(
            (
                f"{g.s(HEX, 64)}  dist/app-1.2.3.tar.gz",
                f"{g.s(HEX, 40)}  README.md",
                f"sha512: {g.s(HEX, 128)}",
                f'"checksum": "{g.s(HEX, 64)}"',
                f"md5sum: {g.s(HEX, 32)}",
                f'  hash = "{g.s(HEX, 64)}"',
                f'etag: W/"{g.s(HEX, 32)}"',
            )
        )
        for _ in range(per)
    ]
    cats["docker digests"] = [
        r.choice(
            (
                f"docker pull python@sha256:{g.s(HEX, 64)}",
                f'"Digest": "sha256:{g.s(HEX, 64)}"',
                f"Digest: sha256:{g.s(HEX, 64)}",
                f"FROM node:20-alpine@sha256:{g.s(HEX, 64)}",
                f"{g.s(HEX, 12)}: Pull complete",
            )
        )
        for _ in range(per)
    ]
    cats["paths"] = [
        r.choice(
            (
                f"/home/ana/src/{r.choice(words)}/secret_key_{r.randint(1, 9)}.py",
                "~/.aws/credentials",
                f"src/privacy/token_{r.choice(words)}.rs:{r.randint(1, 400)}:12",
                f"PRIVATE_KEY_PATH=/etc/ssl/private/{r.choice(words)}.pem",
                f"password_file: /run/secrets/db_password_{r.randint(1, 9)}",
                f"C:\\Users\\ana\\AppData\\Roaming\\{r.choice(words)}\\token.json",
                f'  File "/usr/lib/python3.12/site-packages/keyring/backends/{r.choice(words)}.py", line {r.randint(1, 900)}, in get_password',
                f"SSH_KEY_FILE=~/.ssh/id_ed25519_{r.choice(words)}",
            )
        )
        for _ in range(per)
    ]
    cats["base64 images"] = [
        r.choice(
            (
                f'{{"type": "image", "source": {{"type": "base64", "media_type": "image/png", "data": "{g.b64(r.randint(300, 3000))}"}}}}',
                f"![shot](data:image/png;base64,{g.b64(r.randint(200, 2000))})",
                f'<img src="data:image/jpeg;base64,{g.b64(r.randint(200, 2000))}">',
            )
        )
        for _ in range(per)
    ]
    cats["base64 blobs in JSON"] = [
        r.choice(
            (
                f'{{"content": "{g.b64(r.randint(100, 2000))}", "encoding": "base64"}}',
                f'"payload": "{g.b64(r.randint(60, 800))}",',
                f'"signature": "{g.b64(r.randint(64, 256))}",',
                f'"encrypted_content": "{g.b64(r.randint(200, 1500))}"',
            )
        )
        for _ in range(per)
    ]
    cats["versions"] = [
        r.choice(
            (
                f'"version": "{r.randint(0, 20)}.{r.randint(0, 40)}.{r.randint(0, 99)}"',
                f"Successfully installed httpx-{r.randint(0, 1)}.{r.randint(10, 28)}.{r.randint(0, 9)} anyio-4.{r.randint(0, 9)}.0",
                f"Python 3.{r.randint(8, 13)}.{r.randint(0, 12)}",
                f"node v{r.randint(16, 22)}.{r.randint(0, 19)}.{r.randint(0, 9)}",
                f"go version go1.{r.randint(18, 23)}.{r.randint(0, 9)} linux/amd64",
                f"  textual>={r.randint(0, 8)}.{r.randint(0, 9)},<{r.randint(9, 10)}",
            )
        )
        for _ in range(per)
    ]
    cats["npm lockfile"] = [
        r.choice(
            (
                f'      "resolved": "https://registry.npmjs.org/{r.choice(words)}/-/{r.choice(words)}-{r.randint(1, 9)}.{r.randint(0, 9)}.{r.randint(0, 9)}.tgz",',
                f'      "integrity": "sha512-{g.b64(64)}",',
                f'      "integrity": "sha1-{g.b64(20)}",',
                f"  integrity sha512-{g.b64(64)}",
                f'"node_modules/{r.choice(words)}": {{ "version": "2.{r.randint(0, 9)}.{r.randint(0, 9)}", "dev": true }},',
            )
        )
        for _ in range(per)
    ]
    cats["env references"] = [
        r.choice(
            (
                "export GITHUB_TOKEN=$GH_TOKEN",
                '  -H "Authorization: Bearer ${OPENAI_API_KEY}"',
                "token: ${{ secrets.GITHUB_TOKEN }}",
                'api_key = os.environ["OPENAI_API_KEY"]',
                'password = os.getenv("DB_PASSWORD")',
                "const token = process.env.SLACK_BOT_TOKEN;",
                "DATABASE_URL=postgres://app:${DB_PASSWORD}@db:5432/app",
                "curl -u $USER:$API_TOKEN https://api.internal",
                "AWS_SECRET_ACCESS_KEY: ${AWS_SECRET_ACCESS_KEY}",
                "password=%(password)s",
                "secret_key = settings.SECRET_KEY",
                "token = self._token",
                "headers['Authorization'] = f'Bearer {token}'",
            )
        )
        for _ in range(per)
    ]
    cats["placeholders"] = [
        r.choice(
            (
                "OPENAI_API_KEY=<your-api-key>",
                "export API_TOKEN=xxx",
                "password: changeme",
                'SECRET_KEY="..."',
                "api_key: YOUR_API_KEY_HERE",
                "DB_PASSWORD=********",
                "token = '<token>'",
                "Authorization: Bearer <token>",
                "postgres://user:password@localhost:5432/db",
                "mysql://root:<password>@localhost/app",
                "CLIENT_SECRET=replace-me",
                "x-api-key: YOUR_KEY",
                '"password": "",',
                "API_KEY=your_api_key",
                "password: str",
            )
        )
        for _ in range(per)
    ]
    cats["markers"] = [
        r.choice(
            (
                f"export GITHUB_TOKEN=[secret:github-token#{g.s(HEX, 4)}]",
                f"PASSWORD=[secret:password#{g.s(HEX, 4)}]",
                f"postgres://app:[secret:url-password#{g.s(HEX, 4)}]@db/app",
                f"Authorization: Bearer [secret:auth-header#{g.s(HEX, 4)}]",
                f'"client_secret": "[secret:secret-assignment#{g.s(HEX, 4)}]"',
                f"[secret:private-key#{g.s(HEX, 4)}]",
            )
        )
        for _ in range(per)
    ]
    cats["code with secret words"] = [
        r.choice(
            (
                "for key, value in sorted(options.items()):",
                f'"max_tokens": {r.randint(256, 8192)}, "input_tokens": {r.randint(10, 99999)}',
                'tokenizer = AutoTokenizer.from_pretrained("bert-base-uncased")',
                '{"key": "ctrl+shift+p", "command": "workbench.action.showCommands"}',
                'cache_key = f"user:{user_id}:profile"',
                "rows.sort(key=lambda row: row.created_at)",
                "id = Column(Integer, primary_key=True)",
                "if password == confirm_password:",
                'token_type: "Bearer"',
                "def get_password(self, service: str, username: str) -> str | None:",
                "passwordless login is enabled for this workspace",
                "The API key must be kept secret; rotate it every 90 days.",
                f"keyId: {r.randint(1, 9999)}",
                "authorization: required",
                '"token_count": 1532, "tokens_per_second": 41.2',
                "secret_name: prod/db/credentials",
                "KEY_ID=alias/prod-kms",
                "ssh-keygen -t ed25519 -C ana@laptop -f ~/.ssh/id_ed25519",
                "  auth: true",
                "credentials: include",
            )
        )
        for _ in range(per)
    ]
    cats["log lines"] = [
        f"2025-0{r.randint(1, 9)}-1{r.randint(0, 9)}T{r.randint(10, 23)}:{r.randint(10, 59)}:{r.randint(10, 59)}.{r.randint(100, 999)}Z "
        f"{r.choice(('INFO', 'WARN', 'DEBUG'))} {r.choice(words)} took {r.randint(1, 900)}ms span={g.s(HEX, 16)} trace={g.s(HEX, 32)}"
        for _ in range(per)
    ]
    return cats


# ---------------------------------------------------------------- detect-secrets, the library


def ds_scanner():
    """detect-secrets' own line scan with its default plugins, or None when it is not installed."""
    try:
        from detect_secrets.core.scan import scan_line
        from detect_secrets.settings import default_settings
    except ImportError:
        return None

    def scan(text: str) -> list[str]:
        with default_settings():
            return [s.secret_value or "" for line in text.splitlines() for s in scan_line(line)]

    return scan


def recall_figures(data: list[tuple[str, str, list[str]]], ds) -> None:
    """1 and 4: recall (ours beside detect-secrets' line scan) and idempotence."""
    misses: dict[str, int] = {}
    total_by_kind: dict[str, int] = {}
    for kind, text, values in data:
        total_by_kind[kind] = total_by_kind.get(kind, 0) + 1
        if not all(caught(text, v) for v in values):
            misses[kind] = misses.get(kind, 0) + 1
            if misses[kind] == 1:
                print(f"  missed {kind}: {text[:160]!r}")
    n = len(data)
    recall = 1 - sum(misses.values()) / n
    print(f"kinds: {len(total_by_kind)}  samples: {n}")
    ds_recall = None
    if ds is not None:
        ds_caught = 0
        for _kind, text, values in data:
            found = ds(text)
            if all(any(v in f or (f and f in v and len(f) >= 0.9 * len(v)) for f in found) for v in values):
                ds_caught += 1
        ds_recall = ds_caught / n
    print(
        f"recall: {recall:.4f} ({n - sum(misses.values())}/{n})  vs detect-secrets scan_line: "
        + (f"{ds_recall:.4f}  ratio {recall / ds_recall:.2f}" if ds_recall else "not installed")
        + f"  target >= 0.98: {'MET' if recall >= 0.98 else 'MISSED'}"
    )
    if misses:
        print("  misses by kind: " + ", ".join(f"{k} {v}/{total_by_kind[k]}" for k, v in sorted(misses.items())))
    twice = sum(1 for _k, text, _v in data if redact_text(redact_text(text)) != redact_text(text))
    print(f"redact twice != redact once: {twice} of {n} samples  target 0: {'MET' if twice == 0 else 'MISSED'}")


def fixture_figures(show: bool) -> list[str]:
    """2: findings in every fixture file; returns the transcripts' texts for the throughput figures."""
    fx_lines = fx_findings = fx_bytes = 0
    fx_text: list[str] = []
    shown: list[str] = []
    for path in sorted(p for p in FIXTURES.rglob("*") if p.is_file()):
        text = path.read_bytes().decode("utf-8", "replace")
        fx_bytes += len(text.encode())
        fx_lines += text.count("\n") + 1
        found = find_secrets(text)
        fx_findings += len(found)
        for f in found:
            line = text.count("\n", 0, f.start) + 1
            before = text[max(0, f.start - 40) : f.start].replace("\n", "\\n")
            shown.append(f"    {f.kind} {path.relative_to(FIXTURES)}:{line} after {before!r} ({f.end - f.start} chars)")
        if "transcripts" in path.parts:
            fx_text.append(text)
    per10k = fx_findings / fx_lines * 1e4
    print(
        f"fixtures: {fx_findings} findings in {fx_lines:,} lines ({fx_bytes / 1e6:.1f} MB, every file under shared/fixtures)"
        f" = {per10k:.2f} per 10k lines (each reviewed by hand: see the report; --show-fixtures lists them)"
    )
    if show:
        print("\n".join(shown))
    return fx_text


def negative_figures(lines_wanted: int) -> None:
    """2: findings in the generated must-never corpus, as one text per category and line by line."""
    cats = negatives(99, lines_wanted)
    neg_lines = neg_findings = 0
    for cat, lines in cats.items():
        text = "\n".join(lines)
        found = find_secrets(text)
        neg_lines += len(lines)
        neg_findings += len(found)
        for f in found[:3]:
            print(f"    FP {cat}: {f.kind} {text[max(0, f.start - 40) : f.end + 5]!r}")
        # each line alone as well: context from a neighbour must not hide or make a finding
        alone = [f for line in lines[:2000] for f in find_secrets(line)]
        neg_findings += len(alone)
        neg_lines += min(len(lines), 2000)
    per10k = neg_findings / neg_lines * 1e4
    print(
        f"must-never corpus: {neg_findings} findings in {neg_lines:,} lines ({len(cats)} categories)"
        f" = {per10k:.2f} per 10k lines  target <= 1: {'MET' if per10k <= 1 else 'MISSED'}"
    )


def installed_code_figures(max_files: int) -> None:
    """2: findings in the source and docs of the installed Python packages (real code full of
    token/key/password names, docstrings with example URLs and passwords)."""
    root = Path(sysconfig.get_paths()["purelib"])
    exts = {".py", ".md", ".txt", ".json", ".toml", ".yaml", ".yml", ".cfg", ".ini", ".rst", ".sh", ".js", ".ts"}
    files = sorted(p for p in root.rglob("*") if p.suffix in exts and p.is_file())[:max_files]
    lines = findings = 0
    kinds: dict[str, int] = {}
    for path in files:
        text = path.read_bytes().decode("utf-8", "replace")
        lines += text.count("\n") + 1
        for f in find_secrets(text):
            findings += 1
            kinds[f.kind] = kinds.get(f.kind, 0) + 1
    print(
        f"installed packages' source ({len(files):,} files under {root.name}): {findings} findings in {lines:,} lines"
        f" = {findings / max(lines, 1) * 1e4:.2f} per 10k lines  by kind {kinds}  target <= 1:"
        f" {'MET' if findings / max(lines, 1) * 1e4 <= 1 else 'MISSED'}"
    )


def throughput(name: str, corpus: list[str]) -> None:
    """3: find_secrets over `corpus` beside str.lower() and a trivial re.search over the same text."""
    size = sum(len(t.encode()) for t in corpus) / 1e6
    trivial = re.compile("zq#xj")
    ours = best_of(lambda: [find_secrets(t) for t in corpus], 5)
    base_lower = best_of(lambda: [t.lower() for t in corpus], 5)
    base_re = best_of(lambda: [trivial.search(t) for t in corpus], 5)
    print(
        f"throughput on {name} ({size:.2f} MB): find_secrets {size / ours:.1f} MB/s"
        f"  vs str.lower() {size / base_lower:.1f} MB/s  ratio {base_lower / ours:.3f}"
        f"  vs re.search(trivial) {size / base_re:.1f} MB/s  ratio {base_re / ours:.3f}"
    )


def library_figures(ds, fx_text: list[str], quick: bool) -> None:
    """3: detect-secrets' own line scan on the transcripts, and what importing it costs."""
    if ds is None:
        print("detect-secrets: not installed (pip install detect-secrets) - no library figures")
        return
    sample = fx_text[0] if quick else "".join(fx_text)
    ssize = len(sample.encode()) / 1e6
    t = time.perf_counter()
    ds(sample)
    ds_t = time.perf_counter() - t
    ours_s = best_of(lambda: find_secrets(sample), 3)
    print(
        f"detect-secrets scan_line on {ssize:.2f} MB of the transcripts: {ssize / ds_t:.3f} MB/s"
        f"  vs find_secrets {ssize / ours_s:.1f} MB/s  ratio {ours_s / ds_t:.3f}"
    )
    # Each in a fresh interpreter; ours after the packages it sits in (opmem_tui, backend.model),
    # which the app has imported anyway.
    code = "import {pre}; import time; t = time.perf_counter(); import {m}; print(time.perf_counter() - t)"
    ds_imp = min(
        float(subprocess.check_output([sys.executable, "-c", code.format(pre="re", m="detect_secrets.plugins.aws")]))
        for _ in range(3)
    )
    ours_imp = min(
        float(
            subprocess.check_output(
                [sys.executable, "-c", code.format(pre="opmem_tui.backend.model", m="opmem_tui.backend.privacy")]
            )
        )
        for _ in range(3)
    )
    print(
        f"import cost: detect-secrets (one plugin) {ds_imp * 1e3:.0f} ms  vs opmem_tui.backend.privacy"
        f" {ours_imp * 1e3:.1f} ms  ratio {ds_imp / ours_imp:.0f}"
    )


def main() -> None:
    ap = parser(__doc__ or "")
    ap.add_argument("--show-fixtures", action="store_true", help="list every finding in the fixtures for review")
    args = ap.parse_args()
    ds = ds_scanner()
    recall_figures(samples(1234, 12 if args.quick else 40), ds)
    fx_text = fixture_figures(args.show_fixtures)
    negative_figures(7_000 if args.quick else 70_000)
    installed_code_figures(2_000 if args.quick else 100_000)
    throughput("the fixture transcripts", fx_text * (1 if args.quick else 3))
    g = Gen(7)
    words = [
        "the",
        "parser",
        "now",
        "reads",
        "each",
        "line",
        "once",
        "and",
        "the",
        "tests",
        "run",
        "again",
        "after",
        "the",
        "cache",
        "fix",
    ]
    throughput("prose with no candidate", [" ".join(g.r.choice(words) for _ in range(40_000)) for _ in range(4)])
    throughput(
        "a JSON transcript with no candidate",
        [json.dumps({"content": " ".join(g.r.choice(words) for _ in range(40_000))})],
    )
    library_figures(ds, fx_text, args.quick)


if __name__ == "__main__":
    main()
