"""Sphinx configuration of the alphaseed documentation (``make docs``).

Pages are Markdown (MyST); the API reference is generated from the docstrings (numpydoc style)
by autosummary into ``api/generated/``, which is not under version control. Nothing here needs
the network: no intersphinx, no remote images.
"""

from __future__ import annotations

import importlib
import re
from importlib.metadata import PackageNotFoundError, version

# -- Project -------------------------------------------------------------------------------------

project = "alphaseed"
author = "the alphaseed maintainers"
copyright = "the alphaseed maintainers, BSD-3-Clause"
try:
    release = version("alphaseed")
except PackageNotFoundError:  # building from a checkout that was never installed
    release = "unknown"
version = release

# -- Extensions ----------------------------------------------------------------------------------

extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "numpydoc",
    "sphinx.ext.mathjax",
]

source_suffix = {".md": "markdown", ".rst": "restructuredtext"}
root_doc = "index"
exclude_patterns = ["_build", "_templates"]
templates_path = ["_templates"]

# MyST: $...$ and $$...$$ math, ::: fences, anchors on headings to depth 3 (page.md#a-heading).
myst_enable_extensions = ["dollarmath", "amsmath", "colon_fence", "deflist"]
myst_heading_anchors = 3

# autodoc / autosummary: one page per public object under api/generated/, members in source order.
autosummary_generate = True
autosummary_imported_members = False
autodoc_member_order = "bysource"
autodoc_typehints = "none"  # the numpydoc Parameters sections say the types
autodoc_default_options = {"exclude-members": "__init__, __new__"}

# numpydoc: the class pages list their members through the autosummary template, not numpydoc.
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_xref_param_type = False

# -- HTML ----------------------------------------------------------------------------------------

html_theme = "pydata_sphinx_theme"
html_title = f"alphaseed {release}"
html_static_path: list[str] = []
html_theme_options = {
    "navigation_with_keys": False,
    "show_toc_level": 2,
    "secondary_sidebar_items": ["page-toc"],
    "footer_start": ["copyright"],
    "footer_end": ["sphinx-version"],
}
html_sidebars = {"index": [], "install": []}

# -- Checks --------------------------------------------------------------------------------------

# Each library layer's page lists its layer's __all__; a name added to __all__ but not to the page
# (or the other way round) is a warning, and `make docs` (-W) turns it into an error.
LAYER_PAGES = {
    "api/kernel": "alphaseed.kernel",
    "api/solver": "alphaseed.solver",
    "api/seeding": "alphaseed.seeding",
    "api/cv": "alphaseed.cv",
    "api/sklearn": "alphaseed.sklearn",
}
# A name is listed as an autosummary entry (three spaces, the name) or as a constants table's first cell.
_LISTED = re.compile(r"^(?: {3}(\w+)\s*|\| `(\w+)` \|.*)$", re.MULTILINE)


def _check_layer_page(app, docname, source):
    if docname not in LAYER_PAGES:
        return
    from sphinx.util import logging

    logger = logging.getLogger(__name__)
    module = importlib.import_module(LAYER_PAGES[docname])
    listed = {a or b for a, b in _LISTED.findall(source[0])}
    public = set(module.__all__)
    for name in sorted(public - listed):
        logger.warning("%s.__all__ names %s, which %s.md does not list", module.__name__, name, docname,
                       location=docname)
    for name in sorted(listed - public):
        logger.warning("%s.md lists %s, which is not in %s.__all__", docname, name, module.__name__,
                       location=docname)


def _skip_metadata_requests(app, what, name, obj, skip, options):
    """scikit-learn adds set_{method}_request methods to every estimator (metadata routing); they
    are scikit-learn's, documented there, and their docstrings point into its glossary."""
    if what == "class" and name.startswith("set_") and name.endswith("_request"):
        return True
    return None


def setup(app):
    app.connect("source-read", _check_layer_page)
    app.connect("autodoc-skip-member", _skip_metadata_requests)
