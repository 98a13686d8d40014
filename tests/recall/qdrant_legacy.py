"""The Qdrant layout of earlier memsense, written here the way it wrote it: one collection per user
(one named vector per dense route, the chunk as payload) and a meta record mapping each user to
its collection. Tests build such stores to check they are still read, migrated and converted."""
from __future__ import annotations

import hashlib
import re
import uuid

import numpy as np
from qdrant_client import models

from core.records import DENSE_ROUTES, Chunk


def write_legacy_store(client, users: dict[str, tuple[list[Chunk], dict[str, np.ndarray]]], model_key: str, dim: int) -> None:
    names = {}
    for user_id, (chunks, vectors) in users.items():
        slug = re.sub(r"[^a-zA-Z0-9_-]", "_", user_id)[:40]
        name = f"chunks_{slug}_{hashlib.sha1(user_id.encode()).hexdigest()[:6]}_{uuid.uuid4().hex[:6]}"
        client.create_collection(name, vectors_config={
            r: models.VectorParams(size=dim, distance=models.Distance.COSINE) for r in DENSE_ROUTES})
        points = [models.PointStruct(id=str(uuid.uuid5(uuid.NAMESPACE_URL, "memsense:" + c.memory_id)),
                                     vector={r: vectors[r][i].tolist() for r in DENSE_ROUTES if vectors[r][i].any()},
                                     payload=c.to_payload()) for i, c in enumerate(chunks)]
        for start in range(0, len(points), 128):
            client.upsert(name, points[start:start + 128])
        names[user_id] = name
    client.create_collection("memsense_meta", vectors_config={})
    client.upsert("memsense_meta", [models.PointStruct(id=1, vector={}, payload={
        "model_key": model_key, "dim": dim, "users": names})])
