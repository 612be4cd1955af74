"""Who is asking: the one User-Agent builder, naming the project (and a contact e-mail when given) so a publisher
can find out who we are. It sends nothing and reads no settings.
"""

from __future__ import annotations

from paperfetch._version import __version__

__all__ = ["PROJECT_URL", "user_agent", "with_contact"]

#: The project's home page, named in the User-Agent so a publisher can find out who we are.
PROJECT_URL = "https://github.com/paperfetch/paperfetch"


def user_agent(email: str | None = None) -> str:
    """``paperfetch/<version> (+<project URL>; mailto:<email>)``; without an e-mail, no ``mailto``."""
    contact = f"; mailto:{email}" if email else ""
    return f"paperfetch/{__version__} (+{PROJECT_URL}{contact})"


def with_contact(agent: str, email: str | None) -> str:
    """*agent* with ``; mailto:<email>`` inside its closing comment (or a new one); *agent* without an e-mail."""
    if not email:
        return agent
    if agent.endswith(")"):
        return f"{agent[:-1]}; mailto:{email})"
    return f"{agent} (mailto:{email})"
