"""Reconnaissance Blind Chess (RBC) through the ``reconchess`` package: the first part of DSMCP.

Clark, *Deep Synoptic Monte Carlo Planning in Reconnaissance Blind Chess* (the seed
paper 004): a player that keeps the possible boards, summarises them in synopses and
plans over them. Built so far (docs/rbc.md):

- ``rules``: RBC's move rules on python-chess boards, as reconchess's ``LocalGame`` plays them;
- ``tracking``: the exact set of possible boards of one player, with a cap and lenient rebuilds;
- ``synopsis``: the paper's 104 bitboard planes of a set of boards (definitely / possibly);
- ``sensing``: the sense that leaves the fewest boards in expectation;
- ``player``: ``TrackingPlayer``, a ``reconchess.Player`` built on them;
- ``gauntlet``: games against the reconchess bots with W/D/L, Elo and tracker statistics.

Needs the ``rbc`` extra (``pip install -e ".[rbc]"``, reconchess); no JAX.
"""
