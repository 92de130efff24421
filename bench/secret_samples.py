"""The samples bench/secrets_bench.py measures secret detection on: a seeded generator of 40+
secret kinds in realistic surroundings (shell, .env, curl, JSON, YAML, tracebacks, logs, transcript
lines), and a corpus of must-never values (hashes, UUIDs, digests, paths, placeholders, code)."""

from __future__ import annotations

import base64
import json
import random
import re
import string
import uuid

from opmem_tui.backend.privacy import find_secrets, redact_text

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
