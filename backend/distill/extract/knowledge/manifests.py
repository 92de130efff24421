"""Manifests, lockfiles, imports and file extensions: what a project's files say its stack is."""

from __future__ import annotations

import json
import posixpath
import re
import sys
from collections.abc import Iterable

from .. import vocabulary
from .evidence import word_list
from .techs import VERSIONED_LANGUAGES

EXTENSION_LANGUAGES = {
    ".py": "Python", ".pyi": "Python", ".ts": "TypeScript", ".tsx": "TypeScript", ".js": "JavaScript",
    ".jsx": "JavaScript", ".mjs": "JavaScript", ".go": "Go", ".rs": "Rust", ".rb": "Ruby", ".ex": "Elixir",
    ".exs": "Elixir", ".heex": "Elixir", ".erl": "Erlang", ".java": "Java", ".kt": "Kotlin", ".scala": "Scala",
    ".swift": "Swift", ".c": "C", ".h": "C", ".cpp": "C++", ".cc": "C++", ".hpp": "C++", ".cs": "C#",
    ".php": "PHP", ".lua": "Lua", ".dart": "Dart", ".zig": "Zig", ".hs": "Haskell", ".ml": "OCaml",
    ".clj": "Clojure", ".vue": "Vue", ".svelte": "Svelte", ".sql": "SQL", ".sh": "Bash",
    # the other languages a project's files are written in, by their one extension
    ".kts": "Kotlin", ".groovy": "Groovy", ".al": "AL", ".ps1": "PowerShell", ".psm1": "PowerShell",
    ".r": "R", ".jl": "Julia", ".pl": "Perl", ".pm": "Perl", ".fs": "F#", ".fsx": "F#", ".elm": "Elm", ".nim": "Nim",
    ".cr": "Crystal", ".gleam": "Gleam", ".vb": "Visual Basic", ".sol": "Solidity", ".f90": "Fortran", ".cob": "COBOL",
    ".asm": "Assembly", ".glsl": "GLSL", ".hlsl": "HLSL", ".wgsl": "WGSL", ".gd": "GDScript", ".luau": "Luau",
    ".purs": "PureScript", ".res": "ReScript", ".coffee": "CoffeeScript", ".hx": "Haxe", ".tcl": "Tcl",
    ".cjs": "JavaScript", ".mts": "TypeScript", ".cts": "TypeScript", ".razor": "C#", ".cshtml": "C#", ".csproj": "C#",
    ".fsproj": "F#", ".vbproj": "Visual Basic", ".abap": "ABAP", ".bas": "VBA", ".vhd": "VHDL", ".vhdl": "VHDL",
    ".sv": "SystemVerilog", ".hrl": "Erlang", ".mli": "OCaml",
    ".scss": "Sass", ".sass": "Sass", ".dpr": "Delphi", ".pas": "Object Pascal", ".mojo": "Mojo", ".zsh": "Zsh",
    ".bicep": "Bicep", ".star": "Starlark", ".jsonnet": "Jsonnet", ".applescript": "AppleScript", ".ahk": "AutoHotkey",
    ".vy": "Vyper", ".ipynb": "Python",
}  # fmt: skip


LOCKFILES = {
    "pnpm-lock.yaml": "pnpm", "yarn.lock": "Yarn", "package-lock.json": "npm", "bun.lockb": "Bun", "bun.lock": "Bun",
    "poetry.lock": "Poetry", "uv.lock": "uv", "Pipfile": "Pipenv", "Pipfile.lock": "Pipenv", "pdm.lock": "PDM",
    "Cargo.lock": "Cargo", "go.sum": "Go modules", "mix.lock": "Mix", "Gemfile.lock": "Bundler",
    "composer.lock": "Composer", "alembic.ini": "Alembic", "manage.py": "Django", "Makefile": "Make",
    "docker-compose.yml": "Docker Compose", "docker-compose.yaml": "Docker Compose", "compose.yaml": "Docker Compose",
    "Dockerfile": "Docker", "tailwind.config.js": "Tailwind CSS", "tailwind.config.ts": "Tailwind CSS",
    "vite.config.ts": "Vite", "vite.config.js": "Vite", "vitest.config.ts": "Vitest", "jest.config.js": "Jest",
    "jest.config.ts": "Jest", "next.config.js": "Next.js", "next.config.mjs": "Next.js", "next.config.ts": "Next.js",
    "tsconfig.json": "TypeScript", "pytest.ini": "pytest", "conftest.py": "pytest", "tox.ini": "tox",
    "ruff.toml": "Ruff", ".eslintrc.json": "ESLint", "eslint.config.js": "ESLint", ".prettierrc": "Prettier",
    "playwright.config.ts": "Playwright", "schema.prisma": "Prisma", "drizzle.config.ts": "Drizzle",
    "webpack.config.js": "webpack", "svelte.config.js": "SvelteKit", "nuxt.config.ts": "Nuxt", "astro.config.mjs": "Astro",
    "Procfile": "Heroku", "fly.toml": "Fly.io", "vercel.json": "Vercel", "netlify.toml": "Netlify",
    "wrangler.toml": "Cloudflare Workers", "serverless.yml": "Serverless Framework", "main.tf": "Terraform",
    "Chart.yaml": "Helm", "mypy.ini": "mypy", "pyrightconfig.json": "Pyright", ".golangci.yml": "golangci-lint",
    ".rubocop.yml": "RuboCop", "phpunit.xml": "PHPUnit", "build.gradle": "Gradle", "pom.xml": "Maven",
    "build.gradle.kts": "Gradle", "deno.json": "Deno", "biome.json": "Biome", ".python-version": "Python",
    ".nvmrc": "Node.js", "Cargo.toml": "Cargo", "go.mod": "Go modules", "mix.exs": "Mix", "Gemfile": "Bundler",
    "pyproject.toml": "Python", "package.json": "npm", "requirements.txt": "pip",
    "jest.config.cjs": "Jest", "jest.config.mjs": "Jest", "vitest.config.js": "Vitest", "vitest.config.mts": "Vitest",
    "vite.config.mjs": "Vite", "vite.config.mts": "Vite", ".eslintrc.cjs": "ESLint", ".eslintrc.js": "ESLint",
    "eslint.config.mjs": "ESLint", "eslint.config.cjs": "ESLint", "eslint.config.ts": "ESLint", ".eslintrc": "ESLint",
    ".eslintrc.yml": "ESLint", ".prettierrc.json": "Prettier", "prettier.config.js": "Prettier", "biome.jsonc": "Biome",
    "rollup.config.js": "Rollup", "rollup.config.mjs": "Rollup", "tsup.config.ts": "tsup", "babel.config.js": "Babel",
    ".babelrc": "Babel", "postcss.config.js": "PostCSS", "postcss.config.mjs": "PostCSS", "karma.conf.js": "Karma",
    ".mocharc.json": "Mocha", ".mocharc.yml": "Mocha", "cypress.config.ts": "Cypress", "cypress.config.js": "Cypress",
    "playwright.config.js": "Playwright", "angular.json": "Angular", "nx.json": "Nx", "turbo.json": "Turborepo",
    "lerna.json": "Lerna", "pnpm-workspace.yaml": "pnpm", ".yarnrc.yml": "Yarn", "bunfig.toml": "Bun",
    "settings.gradle.kts": "Gradle", "settings.gradle": "Gradle", "gradlew": "Gradle", "mvnw": "Maven",
    "build.sbt": "sbt", "project.clj": "Leiningen", "stack.yaml": "Stack", "dune-project": "OCaml", "Package.swift":
    "Swift Package Manager", "Podfile": "CocoaPods", "pubspec.yaml": "Dart", "CMakeLists.txt": "CMake",
    "meson.build": "Meson", "justfile": "Just", "Taskfile.yml": "Task", "Earthfile": "Earthly", "Tiltfile": "Tilt",
    "skaffold.yaml": "Skaffold", "kustomization.yaml": "Kustomize", "Pulumi.yaml": "Pulumi", "ansible.cfg": "Ansible",
    "Vagrantfile": "Vagrant", "nginx.conf": "Nginx", "Caddyfile": "Caddy", "uwsgi.ini": "uWSGI", "gunicorn.conf.py":
    "Gunicorn", ".pre-commit-config.yaml": "pre-commit", ".flake8": "Flake8", ".pylintrc": "Pylint", ".isort.cfg": "isort",
    "noxfile.py": "nox", "setup.cfg": "", "deno.jsonc": "Deno", "svelte.config.mjs": "SvelteKit",
    "remix.config.js": "Remix", "gatsby-config.js": "Gatsby", "docusaurus.config.js": "Docusaurus",
    "capacitor.config.ts": "Capacitor", "electron-builder.yml": "electron-builder", "tauri.conf.json": "Tauri",
    "metro.config.js": "Metro", "codemagic.yaml": "Codemagic", ".gitlab-ci.yml": "GitLab CI", "Jenkinsfile": "Jenkins",
    ".travis.yml": "Travis CI", "bitbucket-pipelines.yml": "Bitbucket Pipelines", "cloudbuild.yaml": "Google Cloud",
    "app.yaml": "", "firebase.json": "Firebase", "supabase": "", "renovate.json": "Renovate", ".husky": "Husky",
    "phpstan.neon": "PHPStan", "psalm.xml": "Psalm", ".php-cs-fixer.php": "PHP-CS-Fixer", "artisan": "Laravel",
    "symfony.lock": "Symfony", ".rspec": "RSpec", "Rakefile": "", ".credo.exs": "Credo", ".formatter.exs": "Mix",
    "rustfmt.toml": "rustfmt", "clippy.toml": "Clippy", "deny.toml": "cargo-deny", "go.work": "Go modules",
    ".golangci.yaml": "golangci-lint", "sqlc.yaml": "sqlc", "atlas.hcl": "Atlas", "AndroidManifest.xml": "Android",
}  # fmt: skip
LOCKFILES = {name: tech for name, tech in LOCKFILES.items() if tech}


INSTALLERS = {
    "pip": "pip", "pip3": "pip", "uv": "uv", "poetry": "Poetry", "pdm": "PDM", "npm": "npm", "pnpm": "pnpm",
    "yarn": "Yarn", "bun": "Bun", "cargo": "Cargo", "go": "Go modules", "gem": "RubyGems", "bundle": "Bundler",
    "composer": "Composer", "mix": "Mix", "conda": "conda", "pipx": "pipx",
}  # fmt: skip


BUILD_TOOLS = {"mix": "Mix", "cargo": "Cargo", "gradle": "Gradle", "mvn": "Maven", "make": "Make", "bundle": "Bundler"}


PROJECT_INSTALLERS = frozenset({"uv", "poetry", "pdm", "pnpm", "yarn", "bun", "cargo", "bundle", "composer", "mix"})


PROGRAM_TECH = {
    "python": "Python", "python3": "Python", "node": "Node.js", "cargo": "Rust", "go": "Go", "mix": "Elixir",
    "iex": "Elixir", "ruby": "Ruby", "bundle": "Bundler", "rails": "Ruby on Rails", "php": "PHP", "deno": "Deno",
    "bun": "Bun", "dotnet": ".NET", "swift": "Swift", "java": "Java", "gradle": "Gradle", "mvn": "Maven",
    "manage.py": "Django", "docker": "Docker", "kubectl": "Kubernetes",
}  # fmt: skip


_NODE_BUILTINS = frozenset(
    word_list(
        "assert buffer child_process cluster crypto dgram dns events fs http http2 https net os path perf_hooks process "
        "querystring readline stream string_decoder timers tls tty url util v8 vm worker_threads zlib module"
    )
)


_PY_STDLIB = frozenset(getattr(sys, "stdlib_module_names", ())) - {"sqlite3", "unittest", "tkinter", "asyncio"}


_PY_IMPORT = re.compile(r"^[ \t+]*(?:from\s+([A-Za-z_][\w]*)[\w.]*\s+import\b|import\s+([A-Za-z_][\w]*))", re.MULTILINE)


_JS_IMPORT = re.compile(
    r"""(?:\bfrom\s+|\brequire\(\s*|\bimport\(\s*|^[ \t+]*import\s+)['"]([^'"\s]+)['"]""", re.MULTILINE
)


_GO_IMPORT = re.compile(
    r'^[ \t+]*(?:import\s+)?(?:\w+\s+)?"((?:github\.com|gitlab\.com|golang\.org|gorm\.io|entgo\.io|go\.uber\.org|google\.golang\.org|[\w-]+\.(?:io|dev|org))/[\w./-]+)"',
    re.MULTILINE,
)


_RUST_USE = re.compile(r"^[ \t+]*use\s+([a-z_][\w]*)::", re.MULTILINE)


_EX_USE = re.compile(r"^[ \t+]*(?:use|alias|import)\s+([A-Z]\w+)", re.MULTILINE)


_IMAGE = re.compile(r"^\s*(?:FROM|image:)\s*[\"']?(?:[\w.-]+/)?([a-z][\w.-]*?)(?::v?(\d+(?:\.\d+)?))?(?:[-@][\w.-]*)?[\"']?\s*(?:AS\s+\w+)?\s*$",
                    re.MULTILINE | re.IGNORECASE)  # fmt: skip


_IMAGE_TECH = {"python": "Python", "node": "Node.js", "golang": "Go", "rust": "Rust", "ruby": "Ruby", "elixir": "Elixir",
               "postgres": "PostgreSQL", "postgis": "PostgreSQL", "mysql": "MySQL", "mariadb": "MariaDB", "redis": "Redis",
               "mongo": "MongoDB", "rabbitmq": "RabbitMQ", "nginx": "Nginx", "memcached": "Memcached",
               "elasticsearch": "Elasticsearch", "openjdk": "Java", "eclipse-temurin": "Java", "php": "PHP",
               "kafka": "Kafka", "minio": "MinIO", "clickhouse": "ClickHouse", "caddy": "Caddy", "traefik": "Traefik",
               "valkey": "Valkey", "nats": "NATS", "localstack": "AWS", "oven/bun": "Bun", "bun": "Bun", "deno": "Deno"}  # fmt: skip


def file_body(text: str) -> str:
    return re.sub(r"^\s*\d+[→\t|:]\s?", "", text, flags=re.MULTILINE)


Found = tuple[list[str], list[tuple[str, str]]]  # (dependency or technology names, (technology, version))


_SIMPLE_VERSIONS = {
    "go.mod": ("Go", re.compile(r"^go\s+(\d+\.\d+)", re.MULTILINE)),
    "mix.exs": ("Elixir", re.compile(r"elixir:\s*\"[^\d]*(\d+\.\d+)")),
    "Gemfile": ("Ruby", re.compile(r"^ruby\s+['\"][^\d]*(\d+\.\d+)", re.MULTILINE)),
    "Cargo.toml": ("Rust", re.compile(r"^rust-version\s*=\s*[\"'](\d+\.\d+)", re.MULTILINE)),
}


_COMPOSE = frozenset({"docker-compose.yml", "docker-compose.yaml", "compose.yaml", "compose.yml"})


def _package_json(body: str) -> Found:
    deps: list[str] = []
    found: list[tuple[str, str]] = []
    try:
        data = json.loads(body)
    except ValueError:
        return deps, found
    if not isinstance(data, dict):
        return deps, found
    engines = data.get("engines")
    if isinstance(engines, dict) and isinstance(engines.get("node"), str):
        v = re.search(r"(\d+(?:\.\d+)?)", engines["node"])
        if v:
            found.append(("Node.js", v.group(1)))
    manager = data.get("packageManager")
    if isinstance(manager, str) and "@" in manager:
        deps.append(manager.split("@", 1)[0])
    scripts = data.get("scripts")
    for script in scripts.values() if isinstance(scripts, dict) else ():
        first = script.split()[0] if isinstance(script, str) and script.split() else ""
        if first and vocabulary.known(first, curated=True):
            deps.append(first)
    return deps, found


def _pyproject(body: str) -> Found:
    found: list[tuple[str, str]] = []
    m = re.search(r"requires-python\s*=\s*[\"'][^\d]*(\d+\.\d+)", body)
    if m:
        found.append(("Python", m.group(1)))
    deps = re.findall(r"^\[tool\.([\w-]+)", body, re.MULTILINE)
    block = re.search(
        r"(?:optional-dependencies|dependency-groups|dev-dependencies)[^\n]*\n(.*?)(?:^\[|\Z)",
        body,
        re.DOTALL | re.MULTILINE,
    )
    if block:
        deps += re.findall(r"[\"']([A-Za-z0-9][\w.-]*)", block.group(1))
    if "[tool.poetry" in body:
        deps.append("Poetry")
        deps += re.findall(r"^([A-Za-z0-9][\w.-]*)\s*=\s*[\"'{]", body, re.MULTILINE)
    return deps, found


def _version_file(base: str, body: str) -> Found:
    found: list[tuple[str, str]] = []
    for m in re.finditer(r"^(?:(python|nodejs|node|elixir|erlang|ruby|golang)\s+)?v?(\d+\.\d+)", body, re.MULTILINE):
        lang = {"nodejs": "Node.js", "node": "Node.js", "golang": "Go"}.get(m.group(1) or "", m.group(1) or "")
        lang = lang or ("Python" if base == ".python-version" else "Node.js")
        found.append((lang.title() if lang.islower() else lang, m.group(2)))
    return [], found


def _images(body: str) -> Found:
    deps: list[str] = []
    found: list[tuple[str, str]] = []
    for m in _IMAGE.finditer(body):
        tech = _IMAGE_TECH.get(m.group(1).lower())
        if tech:
            deps.append(tech)
            if m.group(2) and tech in VERSIONED_LANGUAGES | {"PostgreSQL", "MySQL", "Redis"}:
                found.append((tech, m.group(2)))
    return deps, found


def manifest_packages(name: str, text: str) -> list[str]:
    """Dependency names from a manifest's text as a tool printed it (line-number prefixes tolerated);
    the activity rules (coding.py) read a manifest with it too: one reading of a manifest."""
    body = re.sub(r"^\s*\d+[→\t|:]\s?", "", text, flags=re.MULTILINE)
    if name == "package.json":
        try:
            data = json.loads(body)
        except ValueError:
            return []
        found: list[str] = []
        if isinstance(data, dict):
            for key in ("dependencies", "devDependencies", "peerDependencies"):
                if isinstance(data.get(key), dict):
                    found += [str(k) for k in data[key]]
        return found
    if name == "requirements.txt":
        return [m.group(1) for m in re.finditer(r"^\s*([A-Za-z0-9][\w.-]*)", body, re.MULTILINE)]
    if name == "pyproject.toml":
        block = re.search(r"dependencies\s*=\s*\[(.*?)\]", body, re.DOTALL)
        return re.findall(r"[\"']([A-Za-z0-9][\w.-]*)", block.group(1)) if block else []
    if name == "mix.exs":
        return re.findall(r"\{:(\w+),", body)
    if name == "go.mod":
        return re.findall(r"^\s*(?:require\s+)?([\w.-]+\.[\w.-]+/[\w./-]+)\s+v", body, re.MULTILINE)
    if name == "Cargo.toml":
        block = re.search(r"^\[dependencies\](.*?)(?:^\[|\Z)", body, re.DOTALL | re.MULTILINE)
        return re.findall(r"^([\w-]+)\s*=", block.group(1), re.MULTILINE) if block else []
    if name == "Gemfile":
        return re.findall(r"^\s*gem\s+['\"]([\w-]+)", body, re.MULTILINE)
    if name in _JVM_MANIFESTS:
        return _jvm_packages(name, body)
    return []


_JVM_MANIFESTS = frozenset({"build.gradle", "build.gradle.kts", "libs.versions.toml", "pom.xml", "pubspec.yaml",
                            "Package.swift"})  # fmt: skip


def _jvm_packages(name: str, body: str) -> list[str]:
    """A Gradle build, version catalog, Maven pom, pubspec or Swift package's dependencies (and the
    Android plugin, the platform)."""
    if name in ("build.gradle", "build.gradle.kts"):
        found = [_coordinate(g, a) for g, a in _GRADLE_DEP.findall(body)]
        found += [m.replace(".", "-") for m in re.findall(r"\blibs\.(?!plugins\.)([\w.]+)", body)]
        if _ANDROID_PLUGIN.search(body):
            found.append("android")
        return [f for f in found if f]
    if name == "libs.versions.toml":
        pairs = re.findall(r"""module\s*=\s*["']([\w.-]+):([\w.-]+)["']""", body)
        pairs += re.findall(r"""group\s*=\s*["']([\w.-]+)["']\s*,\s*name\s*=\s*["']([\w.-]+)["']""", body)
        return [c for c in (_coordinate(g, a) for g, a in pairs) if c]
    if name == "pom.xml":
        pairs = re.findall(r"<groupId>\s*([\w.-]+)\s*</groupId>\s*<artifactId>\s*([\w.-]+)\s*</artifactId>", body)
        return [c for c in (_coordinate(g, a) for g, a in pairs) if c]
    if name == "pubspec.yaml":  # a Flutter/Dart app: the packages under its dependencies
        block = re.search(r"^(?:dev_)?dependencies:\s*\n((?:[ \t]+.*\n?)+)", body, re.MULTILINE)
        found = re.findall(r"^[ \t]{2}([a-z][\w]*):", block.group(1), re.MULTILINE) if block else []
        return ["Flutter" if f == "flutter" else f for f in found]
    if name == "Package.swift":  # a Swift package: its dependencies' repositories
        return re.findall(r"\.package\(\s*(?:name:\s*\"[^\"]*\",\s*)?url:\s*\"[^\"]*/([\w.-]+?)(?:\.git)?\"", body)
    return []


_GRADLE_DEP = re.compile(
    r"""\b(?:implementation|api|compileOnly|runtimeOnly|testImplementation|androidTestImplementation|kapt|ksp|"""
    r"""annotationProcessor|debugImplementation|classpath)\s*\(?\s*(?:platform\()?["']([\w.-]+):([\w.-]+)"""
)
_ANDROID_PLUGIN = re.compile(r"""com\.android\.(?:application|library)|plugins\.android\.(?:application|library)""")


def _coordinate(group: str, artifact: str) -> str:
    """The name a Maven coordinate is known by: `com.squareup.okhttp3:okhttp` is OkHttp,
    `androidx.recyclerview:recyclerview` RecyclerView (the artifact, else the group or a prefix of it)."""
    for name in (artifact, group, *(".".join(group.split(".")[:n]) for n in range(group.count("."), 1, -1))):
        if vocabulary.known(name, curated=True):
            return name
    return artifact


def manifest_facts(path: str, text: str) -> Found:
    """(dependency names, (technology, version) pairs) a manifest names."""
    base = posixpath.basename(path)
    body = file_body(text)
    deps: list[str] = []
    found: list[tuple[str, str]] = []
    if base.startswith("requirements") and base.endswith(".txt"):
        deps = manifest_packages("requirements.txt", text)
    elif base in _DEPENDENCY_FILES:
        deps = manifest_packages(base, text)
    elif base == "AndroidManifest.xml":
        deps = ["android"]
    elif base.endswith((".csproj", ".fsproj", ".vbproj")):
        return _dotnet_project(body)
    elif base == "app.json" and _AL_APP.search(body):  # an AL extension's manifest (Business Central)
        runtime = re.search(r'"runtime"\s*:\s*"(\d+(?:\.\d+)?)', body)
        return ["AL", "Business Central"], [("AL", f"runtime {runtime.group(1)}")] if runtime else []
    more: Found = ([], [])
    if base == "package.json":
        more = _package_json(body)
    elif base == "pyproject.toml":
        more = _pyproject(body)
    elif base in _SIMPLE_VERSIONS:
        language, rx = _SIMPLE_VERSIONS[base]
        m = rx.search(body)
        more = ([], [(language, m.group(1))] if m else [])
    elif base in (".python-version", ".nvmrc", ".tool-versions"):
        more = _version_file(base, body)
    elif base == "Dockerfile" or base.startswith("Dockerfile.") or base in _COMPOSE:
        more = _images(body)
    return deps + more[0], found + more[1]


_SCRIPT_KINDS = (
    ("test", re.compile(r"^test$")),
    ("build", re.compile(r"^build$")),
    ("run", re.compile(r"^(?:dev|start|serve)$")),
    ("lint", re.compile(r"^lint$")),
    ("format", re.compile(r"^(?:format|fmt|format:write|prettier)$")),
    ("typecheck", re.compile(r"^(?:type-?check|typecheck|tsc|types)$")),
    ("migrate", re.compile(r"^(?:migrate|db[:-]migrate)$")),
    ("deploy", re.compile(r"^deploy$")),
)


def script_commands(text: str) -> list[tuple[str, str]]:
    """(kind, command) a package.json's scripts give as the way: `npm test`, `npm run build`."""
    try:
        data = json.loads(file_body(text))
    except ValueError:
        return []
    scripts = data.get("scripts") if isinstance(data, dict) else None
    if not isinstance(scripts, dict):
        return []
    manager = "npm"
    if isinstance(data.get("packageManager"), str):
        manager = data["packageManager"].split("@", 1)[0] or "npm"
    out = []
    for kind, rx in _SCRIPT_KINDS:
        name = next((n for n in scripts if isinstance(n, str) and rx.match(n)), None)
        if name is not None:
            command = f"{manager} test" if name == "test" else f"{manager} run {name}"
            out.append((kind, command))
    return out


_DEPENDENCY_FILES = frozenset({"package.json", "pyproject.toml", "mix.exs", "go.mod", "Cargo.toml", "Gemfile",
                               "build.gradle", "build.gradle.kts", "libs.versions.toml", "pom.xml", "pubspec.yaml",
                               "Package.swift"})  # fmt: skip
_AL_APP = re.compile(r'"idRanges"\s*:|"application"\s*:\s*"\d+\.\d')


def _dotnet_project(body: str) -> Found:
    """A .NET project file: its NuGet packages (`<PackageReference Include="Serilog" .../>`), its target
    framework (`net8.0` is .NET 8)."""
    deps = [_dotted_package(n) for n in re.findall(r'<PackageReference\s+Include="([\w.-]+)"', body)]
    target = re.search(r"<TargetFrameworks?>\s*net(\d+)\.\d", body)
    return [d for d in deps if d], [(".NET", target.group(1))] if target else []


def _dotted_package(name: str) -> str:
    """The longest known prefix of a dotted package name (`Microsoft.EntityFrameworkCore.SqlServer`)."""
    parts = name.split(".")
    for end in range(len(parts), 0, -1):
        prefix = ".".join(parts[:end])
        if vocabulary.known(prefix, curated=True):
            return prefix
    return name


def is_manifest(path: str) -> bool:
    base = posixpath.basename(path)
    return (
        base in _DEPENDENCY_FILES
        or base.endswith((".csproj", ".fsproj", ".vbproj"))
        or base in (".python-version", ".nvmrc", ".tool-versions", "docker-compose.yml", "docker-compose.yaml",
                    "compose.yaml", "compose.yml", "AndroidManifest.xml", "app.json")
        or (base.startswith("requirements") and base.endswith(".txt"))
        or base == "Dockerfile" or base.startswith("Dockerfile.")
    )  # fmt: skip


def imports(path: str, text: str) -> list[str]:
    """Third-party names a piece of code imports (the standard libraries left out)."""
    ext = posixpath.splitext(path)[1].lower()
    out: list[str] = []
    if ext in (".py", ".pyi"):
        for m in _PY_IMPORT.finditer(text):
            name = m.group(1) or m.group(2)
            if name and name not in _PY_STDLIB:
                out.append(name)
    elif ext in (".js", ".jsx", ".ts", ".tsx", ".mjs", ".cjs", ".vue", ".svelte", ".astro"):
        for m in _JS_IMPORT.finditer(text):
            spec = m.group(1)
            if spec.startswith((".", "/", "~", "#", "$")) or spec.startswith("node:"):
                continue
            parts = spec.split("/")
            name = "/".join(parts[:2]) if spec.startswith("@") else parts[0]
            if name not in _NODE_BUILTINS:
                out.append(name)
    elif ext == ".go":
        for m in _GO_IMPORT.finditer(text):
            parts = m.group(1).split("/")
            out.append("/".join(parts[:3]))
    elif ext == ".rs":
        out += [n for n in _RUST_USE.findall(text) if n not in ("std", "core", "alloc", "crate", "super", "self")]
    elif ext in (".ex", ".exs"):
        out += [n for n in _EX_USE.findall(text) if n in ("Ecto", "Phoenix", "Oban", "Absinthe", "Tesla", "Req")]
    else:
        out += _typed_imports(ext, text)
    return list(dict.fromkeys(out))


_PY_RELATIVE = re.compile(r"^[ \t+]*from\s+\.+([\w.]+)\s+import\b", re.MULTILINE)


def local_modules(path: str, text: str) -> list[str]:
    """The project's own modules a piece of code imports (`./logtape.shared.ts`, `from .qdrant_store import`):
    what they are named after is what the project builds on."""
    ext = posixpath.splitext(path)[1].lower()
    if ext in (".py", ".pyi"):
        return [m.replace(".", "/") + ".py" for m in _PY_RELATIVE.findall(text)]
    if ext in (".js", ".jsx", ".ts", ".tsx", ".mjs", ".cjs", ".mts", ".vue", ".svelte"):
        specs = (m.group(1) for m in _JS_IMPORT.finditer(text))
        return [s for s in specs if s.startswith(".") or re.search(r"/[\w.-]+\.[mc]?[jt]sx?$", s)]
    return []


def _typed_imports(ext: str, text: str) -> list[str]:
    """The imports of the JVM languages, C#, Swift and Dart."""
    if ext in (".kt", ".kts", ".java", ".scala", ".groovy"):
        return [p for p in (_package_of(m) for m in _JVM_IMPORT.findall(text)) if p]
    if ext == ".cs":  # (System.* is the platform's own, unless the dictionary knows it: System.Text.Json)
        return [p for p in (_dotted_package(n) for n in _CS_USING.findall(text)) if vocabulary.known(p, curated=True)]
    if ext == ".swift":
        return [n for n in _SWIFT_IMPORT.findall(text) if n not in _SWIFT_SYSTEM]
    if ext == ".dart":
        return _DART_IMPORT.findall(text)
    return []


_JVM_IMPORT = re.compile(r"^[ \t+]*import\s+(?:static\s+)?([a-z][\w]*(?:\.[A-Za-z_]\w*)+)", re.MULTILINE)
_CS_USING = re.compile(r"^[ \t+]*using\s+(?:static\s+)?([A-Z]\w*(?:\.\w+)*)\s*;", re.MULTILINE)
_SWIFT_IMPORT = re.compile(r"^[ \t+]*import\s+([A-Z]\w+)\s*$", re.MULTILINE)
_DART_IMPORT = re.compile(r"""^[ \t+]*import\s+['"]package:([\w]+)/""", re.MULTILINE)
_SWIFT_SYSTEM = frozenset(
    word_list("Foundation UIKit AppKit Combine Darwin Dispatch os XCTest ObjectiveC CoreGraphics")
)
# a JVM language's own packages: importing them names no library
_JVM_OWN = ("java.", "javax.", "kotlin.", "scala.", "groovy.", "sun.", "jdk.")


def _package_of(name: str) -> str:
    """The dependency a JVM import names: the longest of its package prefixes the vocabulary knows
    (`androidx.recyclerview.widget.RecyclerView` -> `androidx.recyclerview`, `okhttp3.OkHttpClient`
    -> `okhttp3`); `android.*` is the platform itself."""
    if name.startswith(_JVM_OWN):
        return ""
    parts = name.split(".")
    if parts[0] == "android":
        return "android"
    for end in range(len(parts) - 1, 0, -1):
        prefix = ".".join(parts[:end])
        if (end >= 2 or prefix in _JVM_ROOTS) and vocabulary.known(prefix, curated=True):
            return prefix
    return ""


# one-word JVM package roots that are a library's own (`okhttp3`, `retrofit2`, `coil`)
_JVM_ROOTS = frozenset(word_list("okhttp3 retrofit2 coil coil3"))


def extension_languages(paths: Iterable[str]) -> list[str]:
    return list(
        dict.fromkeys(
            EXTENSION_LANGUAGES[e] for p in paths if (e := posixpath.splitext(p)[1].lower()) in EXTENSION_LANGUAGES
        )
    )
