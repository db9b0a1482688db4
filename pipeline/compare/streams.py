"""The random draws of the resampling tests: keyed, stable, and the same on every platform.

A stream is PCG64 seeded through numpy's SeedSequence with a 128-bit BLAKE2b digest of
(seed, collection, metric, test, number of queries), never Python's `hash()` (salted per process).
Only the bit generator's raw 64-bit words are read: numpy keeps those fixed across versions and
platforms, while `Generator` methods may change how they turn words into numbers.

One stream serves every pair of runs of a collection compared on the same queries, as in the
randomised Tukey HSD test: a sample is one relabelling of the queries, applied to every run at
once. That is what makes all pairs of 100 runs affordable (each run's resampled sums are computed
once, not once per pair), and it leaves a comparison's draws depending on nothing but that key:
not on other runs, on the order of runs in the spec, on threads or on chunk sizes (samples are
read from the stream in order).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator

import numpy as np

__all__ = ["all_flips", "permutations", "resample_counts", "sign_flips", "stream"]

CHUNK_VALUES = 1 << 21  # draws held at once: samples per chunk x queries


def stream(seed: int, collection: str, metric: str, test: str, n: int) -> np.random.PCG64:
    """The bit generator of one (seed, collection, metric, test, number of queries)."""
    key = json.dumps([seed, collection, metric, test, n], ensure_ascii=False).encode("utf-8")
    entropy = int.from_bytes(hashlib.blake2b(key, digest_size=16).digest(), "little")
    return np.random.PCG64(np.random.SeedSequence(entropy))


def _chunks(samples: int, n: int) -> Iterator[int]:
    size = max(1, CHUNK_VALUES // max(n, 1))
    for start in range(0, samples, size):
        yield min(size, samples - start)


def sign_flips(bits: np.random.PCG64, samples: int, n: int) -> Iterator[np.ndarray]:
    """Chunks of (samples, n) signs ±1.0: bit i of a sample's words flips query i."""
    words = -(-n // 64)
    for size in _chunks(samples, n):
        raw = bits.random_raw(size * words).astype("<u8")  # little-endian bytes everywhere
        flat = np.unpackbits(raw.view(np.uint8), bitorder="little")
        flips = flat.reshape(size, words * 64)[:, :n]
        yield 1.0 - 2.0 * flips


def all_flips(n: int) -> Iterator[np.ndarray]:
    """Every one of the 2^n sign vectors, in chunks (the exact randomization test)."""
    total = 1 << n
    start = 0
    for size in _chunks(total, n):
        numbers = np.arange(start, start + size, dtype=np.int64)[:, None]
        yield 1.0 - 2.0 * ((numbers >> np.arange(n)) & 1)
        start += size


def permutations(bits: np.random.PCG64, samples: int, n: int, runs: int) -> Iterator[np.ndarray]:
    """Chunks of (samples, n, runs): a permutation of the runs for each query of each sample
    (the randomised Tukey HSD). A query's permutation orders `runs` raw words (a stable sort:
    two equal words, once in 2^64, keep their order)."""
    for size in _chunks(samples, n * runs):
        raw = bits.random_raw(size * n * runs).reshape(size, n, runs)
        yield np.argsort(raw, axis=2, kind="stable")


def resample_counts(bits: np.random.PCG64, samples: int, n: int) -> Iterator[np.ndarray]:
    """Chunks of (samples, n): how often each query is drawn when n are drawn with replacement.

    A draw is floor(u * n) for u the top 53 bits of a word as a fraction: plain IEEE arithmetic,
    the same everywhere (its bias, under n / 2^53, is far below any p-value's resolution)."""
    for size in _chunks(samples, n):
        raw = bits.random_raw(size * n)
        fractions = (raw >> np.uint64(11)).astype(np.float64) * 2.0**-53
        picks = np.minimum((fractions * n).astype(np.int64), n - 1)
        rows = np.repeat(np.arange(size, dtype=np.int64) * n, n)
        yield np.bincount(rows + picks, minlength=size * n).reshape(size, n).astype(np.float64)
