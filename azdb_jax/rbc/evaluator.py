"""A trained synopsis network as the planner asks it: synopses and a headset in, policies and values out (paper §5.2).

DSMCP's search (Algorithm 3) and particle filter (Algorithm 2) ask the network, for a
batch of synopses, the policy of a headset (the modelled opponent's, or the default
one's) and a value. ``Evaluator`` loads a checkpoint written by ``training.save_checkpoint``
(``experiments/rbc_train.py``) and answers ``Evaluator(synopses, headset)`` with
``Evaluation``: sense logits ``[B, NUM_SENSES]``, move logits ``[B, NUM_MOVES]`` (over every
request, not masked: the caller knows which it may make) and values in [-1, 1], plus the
auxiliary heads. ``synopses`` are ``[B, 104]`` uint64 as ``synopsis.synopsis`` returns them
(one ``[104]`` synopsis gives unbatched answers). Batches are padded to a power of two
(at least 8), so a planner's varying batch sizes compile a few functions per headset.
"""

import functools
from typing import Any, NamedTuple, Optional, Tuple

import jax
import numpy as np

from azdb_jax.rbc import network, synopsis, training

__all__ = ["Evaluation", "Evaluator"]

_MIN_BATCH = 8  # batches are padded to a power of two, at least this


class Evaluation(NamedTuple):
    """One headset's answers for a batch of synopses (numpy, float32)."""

    sense_logits: np.ndarray  # [B, NUM_SENSES]
    move_logits: np.ndarray  # [B, NUM_MOVES]
    value: np.ndarray  # [B] in [-1, 1]: the game's expected result for the player
    soon_win: np.ndarray  # [B] probability of winning within the next 5 actions
    soon_lose: np.ndarray  # [B] probability of losing within the next 5 actions
    piece_counts: np.ndarray  # [B, 12] (data.PIECE_COUNT_NAMES)


class Evaluator:
    """The network of a checkpoint directory (its latest step unless ``step`` is given).

    Attributes:
      headsets: the names ``__call__`` accepts ("all" first).
      config: everything saved with the checkpoint (network, training, data).
    """

    def __init__(self, directory, step: Optional[int] = None):
        self.network, self.params, self.config = training.load_checkpoint(directory, step)
        self.headsets: Tuple[str, ...] = self.network.config.headsets

    @classmethod
    def from_params(cls, net: network.RbcNetwork, params: Any) -> "Evaluator":
        """An evaluator of parameters in memory (e.g. right after training)."""
        self = cls.__new__(cls)
        self.network, self.params, self.config = net, params, {}
        self.headsets = net.config.headsets
        return self

    def _compiled(self, headset: str):
        functions = self.__dict__.setdefault("_functions", {})
        if headset not in functions:
            functions[headset] = jax.jit(functools.partial(self.network.apply, headsets=(headset,)))
        return functions[headset]

    def __call__(self, synopses: np.ndarray, headset: str = network.ALL) -> Evaluation:
        self.network.config.index(headset)  # a clear error for an unknown name
        synopses = np.asarray(synopses)
        single = synopses.ndim == 1
        if single:
            synopses = synopses[None]
        if synopses.ndim != 2 or synopses.shape[1] != synopsis.NUM_PLANES or synopses.dtype != np.uint64:
            raise ValueError(f"synopses must be uint64 [B, {synopsis.NUM_PLANES}] or [{synopsis.NUM_PLANES}], got "
                             f"{synopses.dtype} {list(np.asarray(synopses).shape)}")
        count = synopses.shape[0]
        if count == 0:
            raise ValueError("no synopses to evaluate (an empty batch)")
        padded = max(_MIN_BATCH, 1 << max(count - 1, 0).bit_length())  # few batch sizes, few compilations
        if padded > count:
            synopses = np.concatenate([synopses, np.repeat(synopses[-1:], padded - count, axis=0)])
        out = self._compiled(headset)(self.params, network.unpack_synopses(synopses))
        out = jax.tree_util.tree_map(lambda x: x[:, :count], out)
        result = Evaluation(sense_logits=out.sense_logits[0], move_logits=out.move_logits[0], value=out.value[0],
                            soon_win=jax.nn.sigmoid(out.soon_win_logit[0]),
                            soon_lose=jax.nn.sigmoid(out.soon_lose_logit[0]), piece_counts=out.piece_counts[0])
        result = Evaluation(*(np.asarray(x, np.float32) for x in result))
        return Evaluation(*(x[0] for x in result)) if single else result
