"""A UCI chess engine for a trained team: ``azdb-uci`` or ``python -m azdb_jax.uci``.

A team trained on chess, or on Gardner's 5x5 minichess (``UCI_Variant gardner``, as
Fairy-Stockfish names it), plays in any UCI GUI or tournament manager. Commands: ``uci``,
``isready``, ``ucinewgame``, ``position startpos|fen ... [moves ...]``, ``go`` with
``nodes``/``movetime``/``wtime``/``btime``/``winc``/``binc``/``movestogo``/``infinite``,
``stop``, ``quit`` (and ``setoption``, ``debug``, ``register``, ``ponderhit``, ``d``).

Options: ``Checkpoint`` (a run directory[@step]), ``Rule`` (the selection rules of
Eq. 9 — visit, value, lcb, gap —, a fixed ``Player``, or the opening ``Lookup`` of
Appendix C.5), ``Move`` (the chosen player's most-visited or LCB move),
``Simulations`` and ``MinSimulations`` (per player), ``Threads`` (CPU cores),
``Move Overhead``, ``Seed`` and ``UCI_Variant`` (the checkpoint's game).

Each search prints ``info depth 1 nodes N nps X time T score cp C pv MOVE string
player j (...)``: nodes are network evaluations (simulations × players), the score is
the chosen player's value ``v`` as centipawns ``400 · log10((1 + v) / (1 − v))``
(``protocol.value_to_cp``), the string names the player whose move is played and
every player's move. The team solver reports root statistics, not the tree, so the pv
is the move played and the depth 1.

Modules: ``protocol`` (parsing and formatting, no JAX), ``timeman`` (the clock),
``searcher`` (the team's compiled searches), ``lookup`` (the opening table),
``engine`` (the two threads), ``main`` (the command line).
"""
