"""Technology names in text: which words of a sentence name a technology of vocabulary.tsv, and versions."""

from __future__ import annotations

import functools
import re

from .. import vocabulary
from ..caseless import Caseless
from .evidence import BACKTICK, word_list

_VERSIONED = Caseless(
    re.compile(  # (written in lower case, which IGNORECASE makes the same: matched lowercased)
        r"\b(python|node(?:\.js)?|go|golang|ruby|elixir|erlang/otp|otp|rust|java|php|typescript|django|rails|react|vue|"
        r"next\.js|postgresql|postgres|mysql|redis|kotlin|swift|deno|bun|\.net|phoenix|angular|svelte|laravel)\s+v?(\d+(?:\.\d+){0,2})\b",
        re.IGNORECASE,
    )
)


VERSIONED_LANGUAGES = frozenset({"Python", "Node.js", "Go", "Ruby", "Elixir", "Rust", "Java", "PHP", "TypeScript",
                                 "Kotlin", "Swift", "Deno", "Bun", ".NET"})  # fmt: skip


NAME = (
    r"`?([A-Za-z@][\w.+#/@-]*(?: (?:CSS|UI|ORM|DB|Query|Router|Migrate|on Rails|Framework|Compose|Test|Library|"
    r"Actions|CI|React App))?)`?"
)


@functools.lru_cache(maxsize=16384)  # the rules look up the same words again and again (every n-gram of a sentence)
def tech_name(raw: str, *, curated: bool) -> vocabulary.Tech | None:
    name = raw.strip("`'\".,;:()[]!?")
    if not name or len(name) > 60:
        return None
    tech = vocabulary.lookup(name)
    if tech is None and name.lower().endswith((".js", "js")) and len(name) > 4:
        tech = vocabulary.lookup(name[:-3] if name.lower().endswith(".js") else name[:-2])
    if tech is None or (curated and not tech.curated):
        return None
    return tech


# Chinese, Japanese and Korean text puts no space between words: "Android下载库" names Android
_CJK = re.compile(r"[\u2e80-\u9fff\uac00-\ud7af\uf900-\ufaff\uff00-\uffef]+")


def spaced(text: str) -> str:
    """The text with its CJK runs as blanks, so that a name written inside one is a word of its own."""
    return _CJK.sub(" ", text) if not text.isascii() else text


def mentioned_techs(sentence: str) -> list[vocabulary.Tech]:
    """The curated technologies a sentence names (backticked names of any kind too)."""
    return list(_mentioned_techs(sentence))


@functools.lru_cache(maxsize=1024)  # several rules ask it of one sentence
def _mentioned_techs(sentence: str) -> tuple[vocabulary.Tech, ...]:
    found: list[vocabulary.Tech] = []
    for m in BACKTICK.finditer(sentence):
        tech = tech_name(m.group(1), curated=False)
        if tech is not None:
            found.append(tech)
    words = re.findall(r"[A-Za-z@][\w.+#/@-]*", spaced(BACKTICK.sub(" ", sentence)))
    i = 0
    while i < len(words):
        hit = None
        for width in (3, 2):
            if i + width <= len(words):
                hit = tech_name(" ".join(words[i : i + width]), curated=True)
                if hit is not None:
                    i += width
                    break
        if hit is None:
            word = words[i].rstrip(".")
            # single plain words: curated names, and not a lower-case English word that is also a name
            hit = tech_name(word, curated=True)
            # a lower-case English word; one that qualifies the next ("Hex color 014073"); a verb
            # opening the sentence ("Make it shorter", "Go ahead", "Just run it")
            common = hit is not None and word.lower() in COMMON_WORDS
            after = words[i + 1] if i + 1 < len(words) else ""
            opening = i == 0 and (after.lower() in _AFTER_VERB or (word == "Just" and after.islower()))
            if common and (word.islower() or _QUALIFIED.match(after) or opening):
                hit = None
            i += 1
        if hit is not None:
            found.append(hit)
    return tuple({t.name: t for t in found}.values())


_AFTER_VERB = frozenset(
    word_list(
        "it sure the a an this that these those them me us him her ahead back to up down on out over through away "
        "into some any all your my our their its"
    )
)


# what follows a word used as an adjective, not a name: "Hex color", "Hex E2F0FF", "Stack trace"
_QUALIFIED = re.compile(
    r"(?:colou?rs?|codes?|values?|strings?|digits?|numbers?|literals?|traces?|overflows?|frames?|"
    r"#?(?=[A-Fa-f]*[0-9])[0-9A-Fa-f]{3,8}|[0-9][\w-]*)$",  # a hex literal has a digit ("Go add" is no colour)
    re.I,
)


# lower-case words that are technology names too but mostly mean something else in a sentence
COMMON_WORDS = frozenset(
    word_list(
        "go rust make task just c r dash play echo warp tide express koa next remix turbo lit flow stack dart nim crystal "
        "hex mix pub spring sequel kind flux render railway fly tap chai sinon pest ent sqlx react vue svelte bootstrap "
        "foundation less stylus skeleton emotion relay got ky req tesla hyper rocket atlas bats rich textual ray dagger "
        "earthly vault consul chef puppet salt packer nomad envoy caddy guardian lucia clerk ory rest mcp sse ember backbone "
        "stimulus hotwire solid qwik inferno stencil astro gatsby expo ionic capacitor electron tauri flutter blitz "
        "prometheus neon turso chroma milvus solr etcd oracle redis celery temporal pulsar luigi prefect huey arq "
        "objection knex bookshelf doctrine eloquent sorbet steep pyre black prettier standard biome taplo spotless "
        "sentry datadog loki jaeger grafana kibana hetzner render linode heroku vercel netlify cloudflare "
        "docker podman helm terraform ansible vagrant kubernetes nginx traefik gunicorn uvicorn puma unicorn supervisor "
        "jest mocha jasmine cypress karma behave locust storybook hypothesis nose unittest pip uv npm pnpm yarn bun cargo "
        "poetry pipenv conda mamba pixi rye gradle maven composer bundler vite webpack rollup esbuild parcel babel gulp "
        "grunt nx lerna tailwind sass postcss mui antd mantine vuetify quasar zustand mobx recoil jotai pinia vuex swr "
        "requests httpx axios undici ruff pylint flake8 eslint mypy pyright tsc django flask fastapi starlette sanic "
        "tornado pyramid bottle quart phoenix rails sinatra hanami laravel symfony gin fiber chi axum streamlit gradio "
        "htmx preact angular jquery lit postgres postgresql mysql mariadb sqlite mongodb cassandra dynamodb duckdb "
        "memcached valkey rabbitmq kafka nats sidekiq oban dramatiq alembic flyway liquibase goose dbmate prisma drizzle "
        "typeorm sequelize mongoose ecto sqlalchemy peewee diesel gorm pytest vitest playwright selenium puppeteer rspec "
        "minitest exunit junit phpunit ginkgo testify nextest python ruby elixir erlang java kotlin scala swift php perl "
        "lua julia haskell ocaml clojure zig gleam elm bash zsh sql html css typescript javascript node deno pandas numpy "
        "polars scipy matplotlib jupyter dask torch pytorch tensorflow keras langchain ollama openai anthropic pydantic "
        "marshmallow zod yup joi graphql grpc protobuf websocket websockets three exposed shell compose nest spark "
        "motor slim brew bull drone tilt vapor varnish apt hatch lambda iced leaflet pika ninja alpine apache gem "
        "hugo elk otp coverage room "
        # names that are words too (issue 37's categories: platforms, libraries by role, services)
        "al apex mojo bicep delphi smalltalk unity unreal sap ghost sanity zephyr bevy maui gcd rayon crossbeam trio "
        "hilt thrift attrs jackson winston monolog timber zap click cobra clap argh clack glide coil picasso fresco "
        "sharp pillow whisper porcupine moonshine parakeet kokoro obsidian notion discord telegram slack stripe paddle "
        "pusher ably raindrop asana confluence resend postmark unison mutagen quill lexical mermaid cesium yew metro "
        "carthage inertia polymer bloc akita vespa beanie quartz faust kombu river caffeine volley refit feign dio "
        "wretch revel buffalo servant connexion sails meteor poem salvo loco loopback pothos smithy swig anyhow snafu "
        "syrupy criterion insta pact allure detox maestro turbine paparazzi enzyme istanbul husky renovate vale volta "
        "rancher amplitude plausible mise chocolatey burn candle flax replicate haystack tesseract diffusers gymnasium "
        "perplexity altair espresso tonic prost juniper taro commander inquirer opa nyc howler fitz lisp kermit bower"
    )
) - frozenset(
    # names that, written in lower case, are still almost always the technology
    word_list(
        "django flask fastapi postgres postgresql mysql sqlite mongodb redis celery kafka rabbitmq pytest vitest jest "
        "mocha cypress playwright selenium puppeteer rspec minitest phpunit pip uv npm pnpm yarn cargo poetry pipenv conda "
        "gradle maven composer vite webpack rollup esbuild parcel babel tailwind sass postcss zustand mobx pinia vuex "
        "httpx axios ruff pylint flake8 eslint mypy pyright tsc sqlalchemy alembic prisma drizzle typeorm sequelize "
        "mongoose ecto peewee gorm pandas numpy polars scipy matplotlib pytorch tensorflow keras langchain pydantic zod "
        "graphql grpc protobuf docker kubernetes terraform ansible nginx gunicorn uvicorn htmx angular jquery duckdb "
        "memcached valkey sidekiq oban dramatiq flyway liquibase dbmate typescript javascript python elixir kotlin "
        "haskell ocaml clojure golang rustc deno laravel symfony streamlit gradio prettier sentry storybook nextest "
        "hypothesis unittest tox nox webpack vuetify quasar mantine antd mui htmx svelte vue react dynamodb cassandra "
        "sveltekit nextjs nuxt"
    )
)


def versions(text: str) -> list[tuple[vocabulary.Tech, str]]:
    out = []
    for m in _VERSIONED.finditer(text):
        tech = vocabulary.lookup(m.group(1)) or vocabulary.lookup(m.group(1).rstrip(".js"))
        if tech is not None:
            out.append((tech, m.group(2)))
    return out


# technologies that are one language's only: naming one names the language (JavaScript and
# TypeScript share theirs, and Spring serves Java and Kotlin: those say nothing)
IMPLIED_LANGUAGE = {
    name: language
    for language, names in (
        ("Python", "Django Flask FastAPI Starlette Litestar Sanic Tornado Pyramid Bottle aiohttp Quart SQLAlchemy "
                   "SQLModel Peewee Alembic pytest Celery Poetry Pipenv PDM uv Ruff mypy Black Pydantic Streamlit"),
        ("Ruby", "Ruby_on_Rails Sinatra Hanami RSpec Minitest Sidekiq Bundler RuboCop"),
        ("Elixir", "Phoenix Ecto Oban ExUnit Mix LiveView"),
        ("Go", "Gin Echo Fiber chi GORM sqlc golangci-lint Go_modules"),
        ("Rust", "Axum Actix_Web Rocket Diesel SeaORM Cargo nextest"),
        ("PHP", "Laravel Symfony Composer PHPUnit Pest Eloquent Doctrine"),
        ("Kotlin", "Ktor"),
    )
    for name in (n.replace("_", " ") for n in names.split())
}  # fmt: skip
