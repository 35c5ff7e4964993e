"""Sentence embeddings for the offline router, from a small static word-embedding model shipped in a wheel.

The model is WordLlama's ``l2_supercat`` (256 dimensions, 32,000 tokens): token embeddings averaged over a
sentence. Its weights and tokenizer come inside the ``wordllama`` package from the registry (the ``embeddings``
extra: ``pip install 'podium[embeddings]'``), so nothing is downloaded at run time. Only its files are used: the
vectors are read with ``safetensors`` and the text is split with ``tokenizers``, so importing it has no side
effects. Loading takes under a second and adds about 40 MB, once per process and only when a router first
needs it; without the package the router falls back to its lexical features alone (``Router(embeddings=False)``
forces that, as does ``PODIUM_ROUTER_EMBEDDINGS=0``).
"""

from __future__ import annotations

import importlib.util
import logging
import os
import threading
from pathlib import Path
from typing import Any

__all__ = ["Embedder", "default_embedder"]

_WEIGHTS = ("weights", "l2_supercat_256.safetensors")
_TOKENIZER = ("tokenizers", "l2_supercat_tokenizer_config.json")
_lock = threading.Lock()
_loaded: dict[str, Embedder | None] = {}

_log = logging.getLogger("podium.router")


class Embedder:
    """Embeds sentences as unit vectors: the mean of their tokens' vectors, normalised."""

    def __init__(self, folder: Path) -> None:
        """Load the model files from ``folder`` (the installed ``wordllama`` package)."""
        import numpy as np
        from safetensors.numpy import load_file
        from tokenizers import Tokenizer

        self._np = np
        # kept as stored (float16, 16 MB); only the rows of a sentence's tokens are widened to float32
        self.vectors = load_file(str(folder.joinpath(*_WEIGHTS)))["embedding.weight"]
        self._tokenizer = Tokenizer.from_file(str(folder.joinpath(*_TOKENIZER)))
        self._tokenizer.no_padding()
        self._tokenizer.no_truncation()
        self._recent: dict[str, Any] = {}

    @property
    def dimensions(self) -> int:
        """The length of a vector."""
        return int(self.vectors.shape[1])

    def embed_one(self, text: str) -> Any:
        """The unit vector of one text (the last few are cached: a decision embeds its message more than once)."""
        found = self._recent.get(text)
        if found is None:
            found = self.embed([text])[0]
            if len(self._recent) >= 64:
                self._recent.pop(next(iter(self._recent)))
            self._recent[text] = found
        return found

    def embed(self, texts: list[str]) -> Any:
        """One unit row per text, as a numpy array (a text without known tokens gets a zero row)."""
        np = self._np
        out = np.zeros((len(texts), self.dimensions), dtype=np.float32)
        encodings = (
            [self._tokenizer.encode(texts[0], add_special_tokens=False)]
            if len(texts) == 1
            else self._tokenizer.encode_batch(texts, add_special_tokens=False)
        )
        for row, encoding in enumerate(encodings):
            if encoding.ids:
                vector = self.vectors[encoding.ids].astype(np.float32).mean(axis=0)
                norm = float(np.linalg.norm(vector))
                if norm > 0:
                    out[row] = vector / norm
        return out


def _model_folder() -> Path | None:
    try:
        spec = importlib.util.find_spec("wordllama")  # finds the package without importing it
    except (ImportError, ValueError):  # pragma: no cover - a broken installation
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    folder = Path(next(iter(spec.submodule_search_locations)))
    return folder if folder.joinpath(*_WEIGHTS).is_file() and folder.joinpath(*_TOKENIZER).is_file() else None


def default_embedder() -> Embedder | None:
    """The shared embedder, loaded on first use; ``None`` when the model is not installed or is switched off."""
    if os.environ.get("PODIUM_ROUTER_EMBEDDINGS", "").lower() in ("0", "false", "no", "off"):
        return None
    with _lock:
        if "default" not in _loaded:
            folder = _model_folder()
            embedder = None
            if folder is not None and all(importlib.util.find_spec(m) for m in ("numpy", "safetensors", "tokenizers")):
                embedder = Embedder(folder)
            else:
                _log.warning(
                    "the router's embedding model is not installed: routing by word features alone, which understands "
                    "fewer paraphrases; install it with pip install 'podium[embeddings]'"
                )
            _loaded["default"] = embedder
        return _loaded["default"]
