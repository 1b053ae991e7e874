"""Reconnaissance Blind Chess (RBC) through the ``reconchess`` package: DSMCP's parts.

Clark, *Deep Synoptic Monte Carlo Planning in Reconnaissance Blind Chess* (the seed
paper 004): a player that keeps the possible boards, summarises them in synopses and
plans over them. Built so far (docs/rbc.md):

- ``rules``: RBC's move rules on python-chess boards, as reconchess's ``LocalGame`` plays them;
- ``tracking``: the exact set of possible boards of one player, with a cap and lenient rebuilds;
- ``synopsis``: the paper's 104 bitboard planes of a set of boards (definitely / possibly);
- ``sensing``: the sense that leaves the fewest boards in expectation;
- ``actions``: indices of the 36 senses and 4,241 move requests for policies;
- ``belief``: the particle filter over the opponent's information states (rejection sampling
  guided by an opponent model, singleton fallback, refilling);
- ``infostate``: approximate information states with their synopses, and the network-free
  evaluators of their priors and values (classical values; uniform or hand-made priors);
- ``uct``: UCT over approximate information states (the bandit with priors mixed in, aVoP,
  caution, paranoia) with nodes and leaves valued by an ``infostate.Evaluator``;
- ``player``: ``TrackingPlayer`` (search-free) and ``DSMCPPlayer`` (belief and search), two
  ``reconchess.Player`` classes built on them;
- ``gauntlet``: games against the reconchess bots with W/D/L, Elo, tracker and planner
  statistics, and replays of games whose opponent's engine died;
- ``data``: games between the bots and the players saved as reconchess ``GameHistory``
  files, replayed into synopsis examples (action, result, SoonWin/SoonLose, piece counts);
  ``dataset``: the examples as arrays and ``.npz`` files, the split by game;
- ``network``, ``training``, ``evaluator``: the synopsis network with a headset per
  opponent group (flax, on the library's residual tower), its training with a split by
  game, its answers for a batch of synopses and ``evaluator.NetworkEvaluator``, the
  network as the search's evaluator (docs/rbc_network.md).

Needs the ``rbc`` extra (``pip install -e ".[rbc]"``, reconchess); ``network``, ``training``
and ``evaluator`` use JAX, the rest does not.
"""
