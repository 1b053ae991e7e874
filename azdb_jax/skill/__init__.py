"""Skill-compatible team play (Hamade et al., *Designing Skill-Compatible AI*, ICLR 2024).

A strong senior and a weak junior control one colour together, in two frameworks:
Stochastic Tag Team (a fair coin picks who makes each move) and Hand and Brain (the brain
names a piece type, the hand moves a piece of it). ``frameworks`` holds the games,
``agents`` the juniors, the seniors (plain AlphaZero, *tree*, *expector*) and the team
compositions, ``attuned`` the fine-tuning of the strong player inside a framework (the
*attuned* senior), ``measures`` the framework matches and the move-level loss statistics,
``experiment`` the paper's experiments as calls (attuning, the match tables) and
``reproduce`` the whole chain from a plain training run at a scale (for
colabs/skill_compatible.ipynb). docs/skill_compatible.md has the setup and the measurements.
"""

from azdb_jax.skill import agents, attuned, experiment, frameworks, measures, reproduce

__all__ = ["agents", "attuned", "experiment", "frameworks", "measures", "reproduce"]
