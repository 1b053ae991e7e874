"""Reconnaissance Blind Chess (RBC) through the ``reconchess`` package: DSMCP without its network.

Clark, *Deep Synoptic Monte Carlo Planning in Reconnaissance Blind Chess* (the seed
paper 004): a player that keeps the possible boards, summarises them in synopses and
plans over them. Built so far (docs/rbc.md):

- ``rules``: RBC's move rules on python-chess boards, as reconchess's ``LocalGame`` plays them;
- ``tracking``: the exact set of possible boards of one player, with a cap and lenient rebuilds;
- ``synopsis``: the paper's 104 bitboard planes of a set of boards (definitely / possibly);
- ``sensing``: the sense that leaves the fewest boards in expectation;
- ``belief``: the particle filter over the opponent's information states (rejection sampling
  guided by an opponent model, singleton fallback, refilling);
- ``uct``: UCT over approximate information states (the bandit with priors mixed in, aVoP,
  caution, paranoia) with leaves valued by an ``Evaluator`` (a network later; the classical
  evaluation now);
- ``player``: ``TrackingPlayer`` (search-free) and ``DSMCPPlayer`` (belief and search), two
  ``reconchess.Player`` classes built on them;
- ``gauntlet``: games against the reconchess bots with W/D/L, Elo, tracker and planner
  statistics, and replays of games whose opponent's engine died.

Needs the ``rbc`` extra (``pip install -e ".[rbc]"``, reconchess); no JAX.
"""
