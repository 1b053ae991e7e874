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

``NetworkEvaluator`` is that network as the search's evaluator (``infostate.Evaluator``,
the one ``uct.Search``, ``player.DSMCPPlayer`` and ``infostate.EvaluatorPolicy`` call):
it reads each information state's synopsis (``InfoState.synopsis``, made with the context
convention of the training examples: ``synopsis.ContextTracker``) and answers the
searching player's states with ``headset`` and the opponent's (``InfoState.opponent``) with
``opponent_headset``; ``"auto"`` picks, when a game starts, the headset named after the
opponent (reconchess's player name, as the examples name their headsets:
``data.headset_of``) when the network has one, else ``headset`` (§5.2: the modelled
opponent's headset, "All" for the rest). The search restricts the logits to the legal
choices itself (``infostate.softmax_over``).
"""

import functools
import pathlib
from typing import Any, Callable, Dict, List, NamedTuple, Optional, Tuple

import jax
import numpy as np

from azdb_jax.rbc import actions, infostate, network, synopsis, training

__all__ = ["Evaluation", "Evaluator", "NetworkEvaluator", "AUTO", "checkpoint_directory"]

AUTO = "auto"  # the opponent's headset: named after the opponent when the network has one

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


def checkpoint_directory(path) -> pathlib.Path:
    """The checkpoints folder of a training run (``experiments/rbc_train.py``'s ``--out``,
    which holds ``checkpoints/``), or ``path`` itself when it is one."""
    path = pathlib.Path(path)
    return path / "checkpoints" if (path / "checkpoints").is_dir() else path


class NetworkEvaluator:
    """A trained network as the search's ``infostate.Evaluator`` (module docstring).

    Args:
      net: a callable ``(synopses [B, 104] uint64, headset) -> Evaluation`` with the names it
        accepts in ``headsets`` (an ``Evaluator``).
      headset: the headset of the searching player's states.
      opponent_headset: the headset of the opponent's states; ``AUTO`` (the default) picks it
        from the opponent's name when a game starts; None: ``headset``.

    Raises:
      ValueError: a headset the network does not have (naming the ones it has).
    """

    def __init__(self, net: Callable[..., Evaluation], headset: str = network.ALL,
                 opponent_headset: Optional[str] = AUTO):
        self.net = net
        self.headsets: Tuple[str, ...] = tuple(net.headsets)
        self._check(headset, "headset")
        if opponent_headset not in (None, AUTO):
            self._check(opponent_headset, "opponent headset")
        self.headset = headset
        self.opponent_headset_option = opponent_headset
        self.opponent_headset = headset if opponent_headset in (None, AUTO) else opponent_headset
        self.calls = 0  # network calls (one per headset present in a batch)

    @classmethod
    def from_checkpoint(cls, directory, step: Optional[int] = None, **kwargs) -> "NetworkEvaluator":
        """The network saved in ``directory`` (``checkpoint_directory``) at ``step`` (default: the latest)."""
        return cls(Evaluator(checkpoint_directory(directory), step), **kwargs)

    def _check(self, name: str, what: str) -> None:
        if name not in self.headsets:
            raise ValueError(f"unknown {what} {name!r}; this network has {', '.join(self.headsets)}")

    def start_game(self, color: bool, opponent_name: str) -> None:
        """Picks the opponent's headset for a game against ``opponent_name`` (with ``AUTO``)."""
        del color
        if self.opponent_headset_option == AUTO:
            self.opponent_headset = opponent_name if opponent_name in self.headsets else self.headset

    def headset_of(self, state: infostate.InfoState) -> str:
        return self.opponent_headset if state.opponent else self.headset

    def __call__(self, batch: infostate.InfoBatch) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(sense_logits [B, NUM_SENSES], move_logits [B, NUM_MOVES], value [B])``, one network
        call per headset in the batch."""
        count = len(batch)
        sense_logits = np.zeros((count, actions.NUM_SENSES), np.float32)
        move_logits = np.zeros((count, actions.NUM_MOVES), np.float32)
        values = np.zeros(count, np.float32)
        groups: Dict[str, List[int]] = {}
        for i, state in enumerate(batch.states):
            groups.setdefault(self.headset_of(state), []).append(i)
        synopses = batch.synopses
        for headset, rows in groups.items():
            out = self.net(synopses[rows], headset)
            self.calls += 1
            sense_logits[rows], move_logits[rows], values[rows] = out.sense_logits, out.move_logits, out.value
        return sense_logits, move_logits, values
