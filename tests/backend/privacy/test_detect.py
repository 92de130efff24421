"""The secret detector: each kind caught under its name, values only, the must-never list kept
byte-identical, redaction idempotent, one finding where rules overlap, real-looking surroundings.

The tokens below are written by hand (random-looking, never real); none comes from the bench's
generator."""

from __future__ import annotations

import itertools
import json
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from opmem_tui.backend.privacy import find_secrets, redact_text
from opmem_tui.backend.privacy.detect import Finding

PEM_RSA = (
    "-----BEGIN RSA PRIVATE KEY-----\n"
    "MIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gun\n"
    "VTLw7onLRnrq0/IzW7yWR7QkrmBL7jTKEn5u+qKhbwKfBstIs+bMY2Zkp18gnTxK\n"
    "LxoS2tFczGkPLPgizskuemMghRniWaoLcyehkd3qqGElvW/VDL5AaWTg0nLVkjRo\n"
    "-----END RSA PRIVATE KEY-----"
)
PEM_OPENSSH = (
    "-----BEGIN OPENSSH PRIVATE KEY-----\n"
    "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\n"
    "QyNTUxOQAAACDq3bGmk3Yv9Qm2PLGpXk0QXQw8hTzJ1tDkA9r7sWvB4wAAAJgN2f9aDdn/\n"
    "-----END OPENSSH PRIVATE KEY-----"
)
PEM_EC = (
    "-----BEGIN EC PRIVATE KEY-----\n"
    "MHcCAQEEIBkg4LVWM9nuwNSk3yByxZpYRTBnVJk5oZ0eRX1CmA8boAoGCCqGSM49\n"
    "AwEHoUQDQgAE3Yh9bS2N8eOq6ZvK1JxCq0Pzl0Ue5b7oG3cR3Y2vJ4m8Qm0D3m5N\n"
    "-----END EC PRIVATE KEY-----"
)
JWT = (
    "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkFuYSIsImlhdCI6MTcwMDAwMDAwMH0"
    ".Qm9vN2tXcFhRZDNmVGc1TjJ4Yk1yV2pIcTlaY0w4"
)

# (text, kind, value): the value is the exact span that must be found.
CASES = [
    ("aws_access_key_id = AKIAZ7Q4N2XK5M3PLW8R", "aws-access-key", "AKIAZ7Q4N2XK5M3PLW8R"),
    ("temp creds ASIAQ3MZ7K2L9XW4BN6T expire at noon", "aws-access-key", "ASIAQ3MZ7K2L9XW4BN6T"),
    (
        "aws_secret_access_key = Jq8v/2Ks9dLm3Rt7Wx1Zb5Nc4Hf6Gy0Pe+UaQiTo",
        "aws-secret-key",
        "Jq8v/2Ks9dLm3Rt7Wx1Zb5Nc4Hf6Gy0Pe+UaQiTo",
    ),
    (
        '"SecretAccessKey": "Zp3R9m/Kq7Lx2Vt8Wb4Nc6Hj0Fd5Gs1Ya+UeQo3Ti"',
        "aws-secret-key",
        "Zp3R9m/Kq7Lx2Vt8Wb4Nc6Hj0Fd5Gs1Ya+UeQo3Ti",
    ),
    (
        "export GITHUB_TOKEN=ghp_R8k2Lm9Qx4Vb7Nc1Zt6Hs3Jd5Wf0Pg2Ya8Ue",
        "github-token",
        "ghp_R8k2Lm9Qx4Vb7Nc1Zt6Hs3Jd5Wf0Pg2Ya8Ue",
    ),
    (
        "GH_TOKEN=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6eD5",
        "github-token",
        "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6eD5",
    ),
    (
        "installation token ghs_9fK3mQ7xL2vB8nC4zT1hS6jD0wF5pG3yA7uE",
        "github-token",
        "ghs_9fK3mQ7xL2vB8nC4zT1hS6jD0wF5pG3yA7uE",
    ),
    ("private_token: glpat-Xk7mQ2vL9zB4nC8tH1sJ", "gitlab-token", "glpat-Xk7mQ2vL9zB4nC8tH1sJ"),
    (
        "SLACK_BOT_TOKEN=xoxb-2948372615-4829375610284-Kq7mZ2vL9xB4nC8tH1sJ6dW0",
        "slack-token",
        "xoxb-2948372615-4829375610284-Kq7mZ2vL9xB4nC8tH1sJ6dW0",
    ),
    (
        "curl -X POST https://hooks.slack.com/services/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 -d @msg.json",
        "slack-webhook",
        "https://hooks.slack.com/services/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",
    ),
    ("stripe.api_key = 'sk_live_51Hq7Zk2Lm9Qx4Vb7Nc1Zt6Hs'", "stripe-key", "sk_live_51Hq7Zk2Lm9Qx4Vb7Nc1Zt6Hs"),
    ("STRIPE_KEY=sk_test_4eC39HqLyjWDarjtT1zdp7dc", "stripe-key", "sk_test_4eC39HqLyjWDarjtT1zdp7dc"),
    (
        "OPENAI_API_KEY=sk-proj-Ab3dE6gH9jK2mN5pQ8sT1vW4yZ7bC0eF3hJ6kL9nP2qR5tU8wX1zA4cD7fG0hJ3T3BlbkFJx9Yz8Wv7Ut6Sr5Qp4On3Ml2",
        "openai-key",
        "sk-proj-Ab3dE6gH9jK2mN5pQ8sT1vW4yZ7bC0eF3hJ6kL9nP2qR5tU8wX1zA4cD7fG0hJ3T3BlbkFJx9Yz8Wv7Ut6Sr5Qp4On3Ml2",
    ),
    (
        "client = Anthropic(api_key='sk-ant-api03-Zq8vX2kL9mB4nC7tH1sJ6dW0pF3gY5aU8eR2oI4uT7yQ1wE9rT3yU6iO0pA2sD5fG8hJ1kL4zX7cV0bN3mQ6wE9rT2yU5iO8pA1sD4fG7hJ0kLAA')",
        "anthropic-key",
        "sk-ant-api03-Zq8vX2kL9mB4nC7tH1sJ6dW0pF3gY5aU8eR2oI4uT7yQ1wE9rT3yU6iO0pA2sD5fG8hJ1kL4zX7cV0bN3mQ6wE9rT2yU5iO8pA1sD4fG7hJ0kLAA",
    ),
    (
        "maps key AIzaSyD8kQ2mL9xV4bN7cT1zH6sJ3dW0fP5gY8a in the page",
        "google-api-key",
        "AIzaSyD8kQ2mL9xV4bN7cT1zH6sJ3dW0fP5gY8a",
    ),
    (
        "AccountName=acme;AccountKey=q7Zk2Lm9Qx4Vb7Nc1Zt6Hs3Jd5Wf0Pg2Ya8Ue+R4tY6uI8oP0aS2dF4gH6jK8lZ0xC2vB4nM6qW8eR0tY2uI4oP6a==;EndpointSuffix=core.windows.net",
        "azure-storage-key",
        "q7Zk2Lm9Qx4Vb7Nc1Zt6Hs3Jd5Wf0Pg2Ya8Ue+R4tY6uI8oP0aS2dF4gH6jK8lZ0xC2vB4nM6qW8eR0tY2uI4oP6a==",
    ),
    ("TWILIO_API_KEY=SK2b7f9e4c1a8d3f6b0e5c9a2d7f4b1e8c", "twilio-key", "SK2b7f9e4c1a8d3f6b0e5c9a2d7f4b1e8c"),
    (
        "sg = SendGridAPIClient('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')",
        "sendgrid-key",
        "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",
    ),
    ("mailgun: key-3f9a7c2e5b8d1f4a6c9e2b7d5f8a1c3e", "mailgun-key", "key-3f9a7c2e5b8d1f4a6c9e2b7d5f8a1c3e"),
    (
        "//registry.npmjs.org/:_authToken=npm_Zq8vX2kL9mB4nC7tH1sJ6dW0pF3gY5aU8eR2",
        "npm-token",
        "npm_Zq8vX2kL9mB4nC7tH1sJ6dW0pF3gY5aU8eR2",
    ),
    (
        "password = pypi-AgEIcHlwaS5vcmcCJDk3ZjE2YzQ1LTNhYjgtNGQ5MS04ZTJjLTZmMWEwYjNjNWQ3ZQACKlszLCJhYmNkZWYiXQAABiB9",
        "pypi-token",
        "pypi-AgEIcHlwaS5vcmcCJDk3ZjE2YzQ1LTNhYjgtNGQ5MS04ZTJjLTZmMWEwYjNjNWQ3ZQACKlszLCJhYmNkZWYiXQAABiB9",
    ),
    (
        "echo dckr_pat_Zq8vX2kL9mB4nC7tH1sJ6dW0pF3 | docker login -u ana --password-stdin",
        "docker-token",
        "dckr_pat_Zq8vX2kL9mB4nC7tH1sJ6dW0pF3",
    ),
    (
        "HEROKU_API_KEY=HRKU-AAq7Zk2Lm9Qx4Vb7Nc1Zt6Hs3Jd5Wf0Pg2Ya8Ue_R4tY6uI8oP0aS2dF4gH6jK8lZ0xC2vB",
        "heroku-key",
        "HRKU-AAq7Zk2Lm9Qx4Vb7Nc1Zt6Hs3Jd5Wf0Pg2Ya8Ue_R4tY6uI8oP0aS2dF4gH6jK8lZ0xC2vB",
    ),
    (
        "X-Shopify-Access-Token: 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",
        "shopify-token",
        "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",
    ),
    (
        "bot.run('MTA4NzY1NDMyMTA5ODc2NTQzMg.GqZk2L.Xm9Qx4Vb7Nc1Zt6Hs3Jd5Wf0Pg2Ya8UeR4t')",
        "discord-token",
        "MTA4NzY1NDMyMTA5ODc2NTQzMg.GqZk2L.Xm9Qx4Vb7Nc1Zt6Hs3Jd5Wf0Pg2Ya8UeR4t",
    ),
    (
        "https://api.telegram.org/bot6123456789:AAHq7Zk2Lm9Qx4Vb7Nc1Zt6Hs3Jd5Wf0Pg2/getMe",
        "telegram-token",
        "6123456789:AAHq7Zk2Lm9Qx4Vb7Nc1Zt6Hs3Jd5Wf0Pg2",
    ),
    (
        "huggingface-cli login --token hf_Zq8vX2kL9mB4nC7tH1sJ6dW0pF3gY5aU8e",
        "huggingface-token",
        "hf_Zq8vX2kL9mB4nC7tH1sJ6dW0pF3gY5aU8e",
    ),
    (
        "doctl auth init -t dop_v1_3f9a7c2e5b8d1f4a6c9e2b7d5f8a1c3e3f9a7c2e5b8d1f4a6c9e2b7d5f8a1c3e",
        "digitalocean-token",
        "dop_v1_3f9a7c2e5b8d1f4a6c9e2b7d5f8a1c3e3f9a7c2e5b8d1f4a6c9e2b7d5f8a1c3e",
    ),
    (f"Cookie: session={JWT}; Path=/", "jwt", JWT),
    (f"$ cat ~/.ssh/id_rsa\n{PEM_RSA}\n$ ls", "private-key", PEM_RSA),
    (f"{PEM_OPENSSH}\n", "private-key", PEM_OPENSSH),
    (f"key: |\n{PEM_EC}", "private-key", PEM_EC),
    ("DATABASE_URL=postgres://app:Vq7mZ2xL9kB4@db.internal:5432/app", "url-password", "Vq7mZ2xL9kB4"),
    ("mysql://root:s3cr3tPassw0rd@127.0.0.1:3306/shop", "url-password", "s3cr3tPassw0rd"),
    ("redis://:Hq7Zk2Lm9Qx4@cache:6379/0", "url-password", "Hq7Zk2Lm9Qx4"),
    ("amqp://guest:Rb8nT3wQ1zX6@rabbit:5672/", "url-password", "Rb8nT3wQ1zX6"),
    ("mongodb+srv://ana:Mq2Lx9Vb7Nc1@cluster0.ab12c.mongodb.net/app?retryWrites=true", "url-password", "Mq2Lx9Vb7Nc1"),
    (
        "curl -H 'Authorization: Basic YW5hOlZxN21aMnhMOWtCNA==' https://api.internal/v1",
        "auth-header",
        "YW5hOlZxN21aMnhMOWtCNA==",
    ),
    ("> authorization: Bearer q7Zk2Lm9Qx4Vb7Nc1Zt6Hs3Jd5Wf", "auth-header", "q7Zk2Lm9Qx4Vb7Nc1Zt6Hs3Jd5Wf"),
    (
        'curl https://api.example/v1 -H "x-api-key: Zq8vX2kL9mB4nC7tH1sJ6dW0pF3gY5aU"',
        "api-key-header",
        "Zq8vX2kL9mB4nC7tH1sJ6dW0pF3gY5aU",
    ),
    ("DB_PASSWORD=hunter2x", "password", "hunter2x"),
    ('{"password": "S3cr3t!pass"}', "password", "S3cr3t!pass"),
    ("  POSTGRES_PASSWORD: Tr0ub4dor&3", "password", "Tr0ub4dor&3"),
    ("PGPASSWORD=Kx82mQz1 psql -h db", "password", "Kx82mQz1"),
    ('export DB_PASSWORD="kd.Tq42wzPe"', "password", "kd.Tq42wzPe"),  # quoted: a literal, not an attribute
    ("JWT_SECRET=f8Kq2Lm9Xv4Bn7Ct1Zh6Sj3Dw0", "secret-assignment", "f8Kq2Lm9Xv4Bn7Ct1Zh6Sj3Dw0"),
    ("  client_secret: 7Qz-Lm9Xv4Bn_7Ct1Zh6Sj3Dw", "secret-assignment", "7Qz-Lm9Xv4Bn_7Ct1Zh6Sj3Dw"),
    ("DD_API_KEY=3f9a7c2e5b8d1f4a6c9e2b7d5f8a1c3e", "secret-assignment", "3f9a7c2e5b8d1f4a6c9e2b7d5f8a1c3e"),
    (
        "HEROKU_API_KEY=8d3f6b0e-5c9a-4d7f-b1e8-c2b7f9e4c1a8",
        "secret-assignment",
        "8d3f6b0e-5c9a-4d7f-b1e8-c2b7f9e4c1a8",
    ),
    ("TWILIO_AUTH_TOKEN=9e4c1a8d3f6b0e5c9a2d7f4b1e8c2b7f", "secret-assignment", "9e4c1a8d3f6b0e5c9a2d7f4b1e8c2b7f"),
    ("curl -s -u admin:Zq8!vX2kL9 https://jenkins.internal/api/json", "password", "Zq8!vX2kL9"),
    ("curl --user 'deploy:Hq7Zk2Lm9Qx4' https://nexus/repo", "password", "Hq7Zk2Lm9Qx4"),
    ("machine api.heroku.com\n  login ana@example.com\n  password 8d3f6b0e5c9aXq2", "password", "8d3f6b0e5c9aXq2"),
    ("docker login -u ana --password Hq7Zk2Lm9Qx4 registry.example", "password", "Hq7Zk2Lm9Qx4"),
    ("vault login --client-secret 7Qz-Lm9Xv4Bn_7Ct1Zh6Sj3Dw", "secret-assignment", "7Qz-Lm9Xv4Bn_7Ct1Zh6Sj3Dw"),
    # an identifier-shaped value with digits is a literal, not a variable
    ("secret_key=OwEuE3_P1iX4ZlwJTagSeFQKOPb1XX from env", "secret-assignment", "OwEuE3_P1iX4ZlwJTagSeFQKOPb1XX"),
    (
        "stripe:\n  webhook_secret: whsec_Zq8vX2kL9mB4nC7tH1sJ6dW0pF3gY5aU",
        "stripe-key",
        "whsec_Zq8vX2kL9mB4nC7tH1sJ6dW0pF3gY5aU",
    ),
]


@pytest.mark.parametrize(("text", "kind", "value"), CASES, ids=[f"{k}-{i}" for i, (_, k, _) in enumerate(CASES)])
def test_each_kind_is_caught_under_its_name_and_only_its_value_goes(text: str, kind: str, value: str) -> None:
    found = find_secrets(text)
    start = text.index(value)
    assert found == [Finding(kind, start, start + len(value))]
    redacted = redact_text(text)
    assert value not in redacted
    assert re.search(rf"\[secret:{kind}#[0-9a-f]{{4}}\]", redacted)
    assert redacted.startswith(text[:start])  # the name (everything before the value) stays
    assert redacted.endswith(text[start + len(value) :])


def test_the_kinds_cover_what_the_issue_asks_for() -> None:
    kinds = {kind for _, kind, _ in CASES}
    assert len(kinds) >= 25
    for k in ("aws-access-key", "aws-secret-key", "github-token", "slack-token", "stripe-key", "openai-key"):
        assert k in kinds
    for k in ("anthropic-key", "private-key", "jwt", "password", "secret-assignment", "auth-header", "url-password"):
        assert k in kinds


NEVER = [
    # git hashes
    "commit 3f9a1b2c4d5e6f708192a3b4c5d6e7f8091a2b3c",
    "a1b2c3d fix the parser\n9f8e7d6 add tests",
    "Merge: 4e5f6a7 8b9c0d1",
    'GIT_COMMIT=3f9a1b2c4d5e6f708192a3b4c5d6e7f8091a2b3c "sha": "0123456789abcdef0123456789abcdef01234567"',
    # UUIDs
    '{"uuid": "0b7c8e3a-1f2d-4c5b-9a8e-7d6c5b4a3f2e", "sessionId": "f47ac10b-58cc-4372-a567-0e02b2c3d479"}',
    "request_id=f47ac10b-58cc-4372-a567-0e02b2c3d479 status=200",
    # content hashes and digests
    "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855  dist/app.tar.gz",
    "sha512: cf83e1357eefb8bdf1542850d66d8007d620e4050b5715dc83f4a921d36ce9ce47d0d13c5d85f2b0ff8318d2877eec2f63b931bd47417a81a538327af927da3e",
    "docker pull python@sha256:9b2a3f0c4d1e5f6a7b8c9d0e1f2a3b4c5d6e7f8091a2b3c4d5e6f708192a3b4c",
    '"Digest": "sha256:9b2a3f0c4d1e5f6a7b8c9d0e1f2a3b4c5d6e7f8091a2b3c4d5e6f708192a3b4c"',
    '  "hash": "9b2a3f0c4d1e5f6a7b8c9d0e1f2a3b4c5d6e7f8091a2b3c4d5e6f708192a3b4c"',
    '"private_key_id": "3f9a1b2c4d5e6f708192a3b4c5d6e7f8091a2b3c"',
    # npm lockfile
    '"integrity": "sha512-q8vX2kL9mB4nC7tH1sJ6dW0pF3gY5aU8eR2oI4uT7yQ1wE9rT3yU6iO0pA2sD5fG8hJ1kL4zX7cV0bN3mQ6w==",',
    '"resolved": "https://registry.npmjs.org/left-pad/-/left-pad-1.3.0.tgz",',
    # paths
    "/home/ana/src/api/secret_key_store.py:41:12",
    "PRIVATE_KEY_PATH=/etc/ssl/private/server.pem",
    "password_file: /run/secrets/db_password",
    "SSH_KEY=~/.ssh/id_ed25519",
    r"C:\Users\ana\AppData\Roaming\gh\token.json",
    # base64 image data and blobs
    "![shot](data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==)",
    '{"type": "base64", "media_type": "image/png", "data": "AKIAq8vX2kL9mB4nC7tH1sJ6dW0pF3gY5aU8eR2oI4uT7yQ1wE9rT3yU6iO0pA2sD5fG8ghp_X7cV0bN3mQ6wE9rT2yU5iO8pA1sD4fG7hJ0kLAAsk-ant-Zq8v"}',
    # versions
    '"version": "2.14.3"',
    "Successfully installed httpx-0.27.2 anyio-4.6.0 textual-8.2.1",
    # env var references
    "export GITHUB_TOKEN=$GH_TOKEN",
    'curl -H "Authorization: Bearer ${OPENAI_API_KEY}" https://api.openai.com/v1/models',
    "token: ${{ secrets.GITHUB_TOKEN }}",
    'api_key = os.environ["OPENAI_API_KEY"]',
    'password = os.getenv("DB_PASSWORD")',
    "const token = process.env.SLACK_BOT_TOKEN;",
    "DATABASE_URL=postgres://app:${DB_PASSWORD}@db:5432/app",
    "secret_key = settings.SECRET_KEY",
    "password = self.password",
    "db_password = cfg.db.password",
    # placeholders
    "OPENAI_API_KEY=<your-api-key>",
    "export API_TOKEN=xxx",
    "password: changeme",
    'SECRET_KEY="..."',
    "DB_PASSWORD=********",
    "Authorization: Bearer <token>",
    "api_key: YOUR_API_KEY_HERE",
    # markers
    "export GITHUB_TOKEN=[secret:github-token#3f9a]",
    "postgres://app:[secret:url-password#0b1c]@db/app",
    'secret: [secret:secret-assignment#77aa] and "password": "[secret:password#1a2b]"',
    # code and prose with secret words
    "for key, value in sorted(options.items()):",
    '"max_tokens": 4096, "input_tokens": 1532, "cache_read_input_tokens": 88',
    'tokenizer = AutoTokenizer.from_pretrained("bert-base-uncased")',
    '{"key": "ctrl+shift+p", "command": "workbench.action.showCommands"}',
    "if password == confirm_password:",
    "def get_password(self, service: str, username: str) -> str | None:",
    'token_type: "Bearer"',
    "authorization: required",
    "password: str",
    # code from installed packages that an earlier draft flagged
    "        username, password = proxy_auth",
    "        self.key_password = key_password",
    "        pass_fds=pass_fds,",
    "    password: SecretBytes",
    "        private_key: PKCS7PrivateKeyTypes,",
    'SUBSCRIPTION_ID_META_KEY = "io.modelcontextprotocol/subscriptionId"',
    "headers = {'x-amz-date': timestamp, 'Authorization': v4auth_header}",
    '_SK_START = b"-----BEGIN OPENSSH PRIVATE KEY-----"\n_SK_END = b"-----END OPENSSH PRIVATE KEY-----"',
    '    AttributeOID.CHALLENGE_PASSWORD: "challengePassword",',
    "detect-secrets = detect_secrets.main:main",
    '            _PassArg.eval_context: "context.eval_ctx",',
    "    pin_memory: True",
    "curl -u $USER:$API_TOKEN https://api.internal",
    "curl -u admin:changeme http://localhost:8080",
    "ls -u foo:bar",
    "# a password on a command line: curl -u user:password, or in a .netrc",
    "echo $PW | docker login --username ana --password-stdin",
    "gh auth login --with-token < token.txt",
    "  --token TOKEN   the API token to use (default: $GITHUB_TOKEN)",
]


@pytest.mark.parametrize("text", NEVER)
def test_the_must_never_list_survives_byte_identical(text: str) -> None:
    assert find_secrets(text) == []
    assert redact_text(text) is text


def test_names_stay_and_values_go_in_a_printed_env_file() -> None:
    env = (
        "$ cat .env\n"
        "NODE_ENV=production\n"
        "PORT=8080\n"
        "OPENAI_API_KEY=sk-proj-Ab3dE6gH9jK2mN5pQ8sT1vW4yZ7bC0eF3hJ6kL9nP2qR5tU8wX1zA4cD7fG0hJ3T3BlbkFJx9Yz8Wv7Ut6Sr5Qp4On3Ml2\n"
        "DB_PASSWORD=Xq7!mZ2vL9\n"
        "SESSION_SECRET=Kd83jsQ0pLx72mNv5bZt\n"
        "LOG_LEVEL=debug\n"
    )
    redacted = redact_text(env)
    lines = redacted.splitlines()
    assert lines[1:3] == ["NODE_ENV=production", "PORT=8080"]
    assert re.fullmatch(r"OPENAI_API_KEY=\[secret:openai-key#[0-9a-f]{4}\]", lines[3])
    assert re.fullmatch(r"DB_PASSWORD=\[secret:password#[0-9a-f]{4}\]", lines[4])
    assert re.fullmatch(r"SESSION_SECRET=\[secret:secret-assignment#[0-9a-f]{4}\]", lines[5])
    assert lines[6] == "LOG_LEVEL=debug"


def test_a_transcript_line_with_escaped_json_keeps_its_shape() -> None:
    """The same .env as a tool result in a JSONL transcript: quotes and newlines are escaped."""
    inner = 'config = {"api_key": "Zq8vX2kL9mB4nC7tH1sJ6dW0pF3gY5aU", "region": "eu-west-1"}\nDB_PASS=Vq7mZ2xL9kB4\n'
    line = json.dumps({"type": "tool_result", "content": inner})
    redacted = redact_text(line)
    doc = json.loads(redacted)  # still valid JSON
    assert "Zq8vX2kL9mB4nC7tH1sJ6dW0pF3gY5aU" not in redacted and "Vq7mZ2xL9kB4" not in redacted
    assert '"region": "eu-west-1"' in doc["content"]
    assert re.search(r'"api_key": "\[secret:secret-assignment#[0-9a-f]{4}\]"', doc["content"])
    assert re.search(r"DB_PASS=\[secret:password#[0-9a-f]{4}\]\n", doc["content"])


def test_a_gcp_service_account_file_loses_its_private_key_only() -> None:
    key = PEM_RSA.replace("RSA PRIVATE KEY", "PRIVATE KEY")
    doc = {
        "type": "service_account",
        "project_id": "acme-prod",
        "private_key_id": "3f9a1b2c4d5e6f708192a3b4c5d6e7f8091a2b3c",
        "private_key": key + "\n",
        "client_email": "deployer@acme-prod.iam.gserviceaccount.com",
        "token_uri": "https://oauth2.googleapis.com/token",
    }
    text = json.dumps(doc, indent=2)
    found = find_secrets(text)
    assert [f.kind for f in found] == ["private-key"]
    redacted = json.loads(redact_text(text))
    assert re.fullmatch(r"\[secret:private-key#[0-9a-f]{4}\]\n", redacted["private_key"])
    assert redacted["private_key_id"] == doc["private_key_id"]
    assert redacted["client_email"] == doc["client_email"]


def test_a_traceback_and_a_compose_file() -> None:
    trace = (
        "Traceback (most recent call last):\n"
        '  File "/srv/app/main.py", line 88, in <module>\n'
        '    client = Client(api_key="Zq8vX2kL9mB4nC7tH1sJ6dW0", timeout=30)\n'
        "ConnectionError: https://api.internal\n"
    )
    assert [(f.kind, trace[f.start : f.end]) for f in find_secrets(trace)] == [
        ("secret-assignment", "Zq8vX2kL9mB4nC7tH1sJ6dW0")
    ]
    compose = (
        "services:\n  db:\n    image: postgres:16.2\n    environment:\n"
        "      - POSTGRES_PASSWORD=Pq9!xZ3mL7\n      - POSTGRES_USER=app\n"
    )
    assert [(f.kind, compose[f.start : f.end]) for f in find_secrets(compose)] == [("password", "Pq9!xZ3mL7")]


def test_overlapping_rules_give_one_finding_named_by_the_provider() -> None:
    token = "ghp_R8k2Lm9Qx4Vb7Nc1Zt6Hs3Jd5Wf0Pg2Ya8Ue"
    for text in (
        f"GITHUB_TOKEN={token}",
        f'"token": "{token}"',
        f"https://x-access-token:{token}@github.com/acme/api.git",
        f"Authorization: token {token}",
    ):
        found = find_secrets(text)
        assert len(found) == 1, text
        assert found[0].kind == "github-token"
        assert text[found[0].start : found[0].end] == token
    bearer = f"Authorization: Bearer {JWT}"
    assert [f.kind for f in find_secrets(bearer)] == ["jwt"]


SECRET_TEXTS = [text for text, _, _ in CASES] + [
    "postgres://app:Vq7mZ2xL9kB4@db/app and AKIAZ7Q4N2XK5M3PLW8R and DB_PASSWORD=hunter2x",
]


@pytest.mark.parametrize("text", SECRET_TEXTS)
def test_redacting_twice_is_redacting_once(text: str) -> None:
    once = redact_text(text)
    assert once != text
    assert find_secrets(once) == []
    assert redact_text(once) == once


_pieces = st.sampled_from(SECRET_TEXTS + NEVER + ["\n", " ", ": ", "=", '"', "'", "\\n", "PASSWORD=", "token: "])


@settings(max_examples=150, deadline=None)
@given(st.lists(_pieces, min_size=1, max_size=8))
def test_findings_are_sorted_disjoint_and_redaction_is_idempotent(parts: list[str]) -> None:
    text = "".join(parts)
    found = find_secrets(text)
    assert all(0 <= f.start < f.end <= len(text) for f in found)
    assert all(a.end <= b.start for a, b in itertools.pairwise(found))
    once = redact_text(text)
    assert redact_text(once) == once


_hex = st.text(alphabet="0123456789abcdef", min_size=7, max_size=40)
_name = st.sampled_from(["commit", "sha", "id", "parent", "tree", "HEAD", "ref", "object", "GIT_COMMIT", "hash"])


@settings(max_examples=200, deadline=None)
@given(_hex, _name, st.sampled_from(["{n}={v}", '"{n}": "{v}"', "{n}: {v}", "{v} fix parser", "{n} {v}"]))
def test_git_hashes_are_never_secrets(value: str, name: str, form: str) -> None:
    text = form.format(n=name, v=value)
    assert find_secrets(text) == []


@settings(max_examples=200, deadline=None)
@given(st.uuids(), st.sampled_from(["uuid", "id", "sessionId", "request_id", "parentUuid", "trace", "tool_use_id"]))
def test_uuids_are_never_secrets(value, name: str) -> None:
    for text in (f'"{name}": "{value}"', f"{name}={value}", f"{name}: {str(value).upper()}", f"/tmp/{value}.jsonl"):
        assert find_secrets(text) == [], text


_segment = st.text(
    alphabet="abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-.", min_size=1, max_size=24
)


@settings(max_examples=200, deadline=None)
@given(st.lists(_segment, min_size=1, max_size=7), st.sampled_from(["/", "~/", "./", "src/", "/home/ana/"]))
def test_paths_are_never_secrets(segments: list[str], root: str) -> None:
    path = root + "/".join(segments)
    for text in (path, f'  File "{path}", line 3', f"wrote {path}", f"{path}:12:4: E501"):
        assert find_secrets(text) == [], text


@settings(max_examples=100, deadline=None)
@given(st.binary(min_size=30, max_size=600))
def test_base64_blobs_in_json_are_never_secrets(data: bytes) -> None:
    import base64

    blob = base64.b64encode(data).decode()
    for text in (f'{{"data": "{blob}"}}', f"data:image/png;base64,{blob}", f'"integrity": "sha512-{blob}"'):
        assert find_secrets(text) == [], text


def test_detect_secrets_plugins_samples_are_caught_here_too() -> None:
    """The provider patterns taken from detect-secrets: what its plugins find in these lines, the
    detector finds too (a check that the copy did not lose a provider)."""
    pytest.importorskip("detect_secrets")
    from detect_secrets.plugins.aws import AWSKeyDetector
    from detect_secrets.plugins.github_token import GitHubTokenDetector
    from detect_secrets.plugins.gitlab_token import GitLabTokenDetector
    from detect_secrets.plugins.jwt import JwtTokenDetector
    from detect_secrets.plugins.sendgrid import SendGridDetector
    from detect_secrets.plugins.slack import SlackDetector
    from detect_secrets.plugins.stripe import StripeDetector
    from detect_secrets.plugins.twilio import TwilioKeyDetector

    plugins = [
        AWSKeyDetector(),
        GitHubTokenDetector(),
        GitLabTokenDetector(),
        JwtTokenDetector(),
        SendGridDetector(),
        SlackDetector(),
        StripeDetector(),
        TwilioKeyDetector(),
    ]
    checked = 0
    for text, _kind, _value in CASES:
        for plugin in plugins:
            for secret in plugin.analyze_string(text):
                checked += 1
                at = text.index(secret)
                assert any(f.start <= at and at + len(secret) <= f.end for f in find_secrets(text)), (plugin, text)
    assert checked >= 8


_unicode = st.text(alphabet=st.sampled_from("äöü é ñ ß → ✓ 🚨 😀 中文 \u00a0 \u2028 \ud800 a 1 : = \n"), max_size=12)


@settings(max_examples=100, deadline=None)
@given(st.sampled_from(CASES), _unicode, _unicode)
def test_findings_in_text_with_non_ascii_around_them_are_at_the_right_characters(case, before: str, after: str) -> None:
    """The scan runs over UTF-8 bytes; offsets still count characters of the text."""
    text, kind, value = case
    full = before + " " + text + " " + after
    start = full.index(value, len(before))
    found = [f for f in find_secrets(full) if f.end > len(before) and f.start < len(before) + 1 + len(text)]
    assert found == [Finding(kind, start, start + len(value))]
    assert value not in redact_text(full)


@settings(max_examples=200, deadline=None, derandomize=True)
@given(
    st.text(alphabet="abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789", min_size=24, max_size=64),
    st.sampled_from(["API_KEY={v}", '"client_secret": "{v}"', "secret_key = '{v}'", "x-api-key: {v}"]),
)
def test_a_generated_value_under_a_secret_name_is_caught(value: str, form: str) -> None:
    """Random values (not only the hand-picked ones above) with a secret's name: found whole, when
    they read as generated: letters and digits strewn through each other, many distinct characters
    (hypothesis also draws `aaaa...` and `abcdefgh...`, which do not)."""
    text = form.format(v=value)
    if not re.search(r"[a-zA-Z]", value) or len(re.findall(r"[0-9]+", value)) < 3 or len(set(value)) < 12:
        return
    start = text.index(value)
    found = find_secrets(text)
    assert [(f.start, f.end) for f in found] == [(start, start + len(value))], text
