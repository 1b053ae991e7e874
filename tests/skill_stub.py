"""A fixed random linear stand-in for the team network, for the skill-compatibility tests:
cheap to call, deterministic, with a policy per latent and a value of the observation."""

import jax
import jax.numpy as jnp
import numpy as np

from azdb_jax import networks


def stub_network(env, seed: int):
    """A fixed random linear 'network': policy logits and a tanh value of the observation."""
    obs = env.init(jax.random.PRNGKey(0)).observation
    size = int(np.prod(obs.shape))
    rng = np.random.default_rng(seed)
    weights = {"policy": jnp.asarray(rng.normal(size=(3, size, env.num_actions)), jnp.float32),
               "value": jnp.asarray(rng.normal(size=(size,)) * 0.5, jnp.float32)}

    def apply(params, observation, player):
        x = observation.reshape(observation.shape[0], -1).astype(jnp.float32)
        logits = jnp.einsum("bi,bia->ba", x, params["policy"][player])
        value = jnp.tanh(x @ params["value"])
        return networks.NetOutput(policy_logits=logits, value=value, value_d=jnp.zeros_like(value))

    return apply, weights


__all__ = ["stub_network"]
