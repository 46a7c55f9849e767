"""What to install when a part of tinyinit finds a package missing.

`pip install tinyinit` brings the core: the generator, the initializers, the numerics and the
figures (numpy, matplotlib). The widgets, JupyterLab and Voila come with the extras named in
pyproject.toml (`tinyinit[lab]`, `tinyinit[present]`), so a module that needs one of them
imports it inside `extra(...)`, and a missing package says which extra brings it:

    with extra("lab", "the explorer"):
        import ipywidgets as widgets

>>> with extra("lab", "the explorer"):
...     import no_such_package
Traceback (most recent call last):
ModuleNotFoundError: the explorer needs no_such_package: pip install 'tinyinit[lab]'
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from .core.arguments import one_of

__all__ = ["extra"]

EXTRAS = ("lab", "present")
# Where the module's name is not its package's.
PACKAGES = {"sklearn": "scikit-learn", "IPython": "ipython"}


@contextmanager
def extra(name: str, needed_by: str) -> Iterator[None]:
    """Turn a missing module imported in the block into an error naming the extra `name`.

    Only a module that is not installed is translated; a package that is installed but fails
    to import raises its own error unchanged.
    """
    one_of("extra", name, EXTRAS)
    try:
        yield
    except ModuleNotFoundError as error:
        if error.name is None:
            raise
        module = error.name.split(".")[0]
        package = PACKAGES.get(module, module)
        raise ModuleNotFoundError(
            f"{needed_by} needs {package}: pip install 'tinyinit[{name}]'", name=error.name
        ) from None
