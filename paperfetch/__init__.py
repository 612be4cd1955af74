"""paperfetch: polite retrieval of legal open-access full texts."""

from paperfetch._version import __version__
from paperfetch.errors import *  # noqa: F401,F403
