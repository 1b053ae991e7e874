"""A UCI chess engine for a trained team: ``azdb-uci`` or ``python -m azdb_jax.uci``.

A team trained on chess, or on Gardner's 5x5 minichess (``UCI_Variant gardner``, as
Fairy-Stockfish names it), plays in any UCI GUI or tournament manager. Commands: ``uci``,
``isready``, ``ucinewgame``, ``position startpos|fen ... [moves ...]``, ``go`` with
``nodes``/``movetime``/``wtime``/``btime``/``winc``/``binc``/``movestogo``/``infinite``,
``stop``, ``quit`` (and ``setoption``, ``debug``, ``register``, ``ponderhit``, ``d``).

Options: ``Checkpoint`` (a run directory[@step]), ``Rule`` (the selection rules of
Eq. 9 — visit, value, lcb, gap —, a fixed ``Player``, or the opening ``Lookup`` of
Appendix C.5), ``Move`` (the chosen player's most-visited or LCB move), ``Hash`` (MB
for the search trees), ``Reuse`` (keep the last search's subtree), ``Threads`` (CPU
cores), ``Move Overhead``, ``Seed`` and ``UCI_Variant`` (the checkpoint's game).

The search is anytime (``azdb_jax.anytime``): the team's trees grow in chunks of
simulations until the move's deadline, ``go nodes``, or ``stop``. While searching the
engine prints ``info depth D seldepth S nodes N nps X hashfull H time T score cp C pv
... string player j (...)`` at least once a second and once at the end: nodes are
network evaluations (the simulations in the players' trees, summed), depth the mean
and seldepth the largest depth of the chosen player's tree, the score the chosen
player's value ``v`` as centipawns ``400 · log10((1 + v) / (1 − v))``
(``protocol.value_to_cp``), the pv that player's most-visited line from its move, and
the string names the player whose move is played and every player's move.

Modules: ``protocol`` (parsing and formatting, the games UCI speaks; no JAX),
``timeman`` (the clock), ``server`` (the UCI server core of this engine and of
``azdb-alphabeta``: commands, options, positions, the clock, the search thread, errors),
``searcher`` (the team's anytime search, compiled once), ``lookup`` (the opening table),
``engine`` (the team's options, loading and search on the server), ``main`` (the command
line), ``gauntlet`` (clocked games between UCI engines through python-chess).
"""
