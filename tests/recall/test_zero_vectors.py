"""An embedder that answers all-zero vectors is refused, not used (issue 21, item 7): a zero
vector matches nothing, so every dense route would score 0 and the ranking be lexical only."""
from __future__ import annotations

import numpy as np
import pytest

from core.errors import MemsenseError
from core.recall.embedding.endpoint import EndpointEmbedder
from tests.memsense_db import MODEL_NAME, EmbeddingEndpoint


@pytest.mark.parametrize("path", ["/embed", "/v1/embeddings"])
def test_an_endpoint_answering_zero_vectors_is_refused(path):
    endpoint = EmbeddingEndpoint(lambda text: np.zeros(384))
    try:
        with pytest.raises(MemsenseError, match="answered an all-zero vector, which would make every dense route "
                                                "score 0"):
            EndpointEmbedder(endpoint.url + path, MODEL_NAME).embed("how many races?")
    finally:
        endpoint.close()


def test_an_endpoint_answering_real_vectors_is_used():
    endpoint = EmbeddingEndpoint(lambda text: np.ones(384) / np.sqrt(384))
    try:
        vec = EndpointEmbedder(endpoint.url + "/embed", MODEL_NAME).embed("how many races?")
        assert vec.shape == (384,) and np.isclose(np.linalg.norm(vec), 1.0)
    finally:
        endpoint.close()
