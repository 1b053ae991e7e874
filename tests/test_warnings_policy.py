"""pytest.ini's warning policy: JAX's, flax's and orbax's deprecations (raised in their code,
or attributed to ours) fail a test; other libraries' and pgx's do not."""

import warnings

import pytest


@pytest.mark.parametrize("module", ["jax._src.sharding", "flax.linen.module", "orbax.checkpoint.options",
                                    "azdb_jax.checkpoint"])
@pytest.mark.parametrize("category", [DeprecationWarning, FutureWarning])
def test_deprecations_of_jax_flax_orbax_and_ours_are_errors(module, category):
    with pytest.raises(category, match="going away"):
        warnings.warn_explicit("going away", category, "somewhere.py", 1, module=module)


@pytest.mark.parametrize("module", ["pgx.core", "numpy.core"])
def test_other_deprecations_stay_warnings(module):
    with pytest.warns(DeprecationWarning, match="going away"):
        warnings.warn_explicit("going away", DeprecationWarning, "somewhere.py", 1, module=module)
