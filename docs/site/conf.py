"""The documentation site (``bash scripts/docs.sh``): the API reference, the tutorial
notebook rendered as it is stored (not executed) and the project's pages, built with
warnings as errors. ``scripts/docs.sh`` lays the sources out as the checkout does
(``docs/``, ``colabs/tutorial.ipynb``) beside this file and the site's index."""

import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent / "docs" / "api"))
import conf as api  # noqa: E402  (the API reference's own settings and autodoc rules)

project = api.project
extensions = ["myst_nb", *api.extensions]
autodoc_default_options = api.autodoc_default_options
autodoc_typehints = api.autodoc_typehints
napoleon_google_docstring = api.napoleon_google_docstring
napoleon_use_ivar = api.napoleon_use_ivar
nb_execution_mode = "off"  # the notebooks' own tests execute them; the site shows them as stored
myst_enable_extensions = ["dollarmath"]
myst_heading_anchors = 4  # the pages link to each other's sections by GitHub-style anchors
exclude_patterns = ["docs/api/conf.py", "docs/site/**"]
html_theme = "alabaster"
html_title = "azdb_jax"


setup = api.setup
