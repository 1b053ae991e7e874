project = "azdb_jax"
extensions = ["sphinx.ext.autodoc", "sphinx.ext.napoleon"]
autodoc_default_options = {"members": True}
autodoc_typehints = "none"
napoleon_google_docstring = True
napoleon_use_ivar = True
_current = {"module": None}

def _module(app, what, name, obj, options, lines):
    if what == "module":
        _current["module"] = name

def _skip(app, what, name, obj, skip, options):
    owner = getattr(obj, "__module__", None)
    if isinstance(owner, str) and _current["module"] and owner != _current["module"]:
        if isinstance(obj, type) or callable(obj):
            return True
    return skip

def setup(app):
    app.connect("autodoc-process-docstring", _module)
    app.connect("autodoc-skip-member", _skip)

