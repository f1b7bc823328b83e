"""Where a team's shared state lives (`BoardLocation`) and the stores opened there (`StoreSet`).

A base module: the factory (stores.py) and every backend (board/ + team/ files, pg/) build
on these two types, so a backend imports this module, never the factory. A location is
the local files (`.tasks/`, `.team/` of the workdir) or a PostgreSQL URL; the URL's password
is never shown: `mask_url` is what every message, repr and listing prints.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, Protocol
from urllib.parse import unquote

from .errors import UserError

if TYPE_CHECKING:  # the interfaces every backend's stores offer (store_api.py)
    from .store_api import BoardStore, MailStore, ProtocolStoreApi, RosterStore

BOARD_ENV = "AGENT_CLI_BOARD"
SCHEMES = ("postgresql", "postgres")
MASK = "***"


# libpq reads a secret from these URL query keys (percent-decoded, so pass%77ord counts)
SECRET_KEYS = frozenset({"password", "sslpassword"})


def _userinfo_end(rest: str) -> int:
    """Where the userinfo may end in what follows `://`: libpq looks for its `@` up to the
    first `/` only (`?` and `#` may sit in a password), so the mask looks as far."""
    slash = rest.find("/")
    return slash if slash >= 0 else len(rest)


def _secret_key(key: str) -> bool:
    return unquote(key).lower() in SECRET_KEYS


def mask_url(url: str) -> str:
    """`url` with its password (user:PASSWORD@, ?password=..., ?sslpassword=...) replaced
    by ***. Works on any text, parsable or not, so even a refused URL is shown without its
    secret."""
    head, sep, rest = url.partition("://")
    if sep:
        end = _userinfo_end(rest)
        userinfo, at, hosts = rest[:end].rpartition("@")
        if at and ":" in userinfo:
            userinfo = userinfo.split(":", 1)[0] + ":" + MASK
        url = head + sep + (userinfo + at if at else "") + hosts + rest[end:]
    base, q, query = url.partition("?")
    if q:
        params = [(k + "=" + MASK) if _secret_key(k) and eq else k + eq + v
                  for k, eq, v in (p.partition("=") for p in query.split("&"))]
        url = base + q + "&".join(params)
    return url


def url_secrets(url: str) -> list[str]:
    """The password texts in `url` as written and percent-decoded, longest first."""
    found: set[str] = set()
    _, sep, rest = url.partition("://")
    if sep:
        userinfo, at, _ = rest[:_userinfo_end(rest)].rpartition("@")
        if at and ":" in userinfo:
            found.add(userinfo.split(":", 1)[1])
    for param in url.partition("?")[2].split("&"):
        key, eq, value = param.partition("=")
        if eq and _secret_key(key):
            found.add(value)
    found |= {unquote(s) for s in found}
    return sorted(found - {""}, key=len, reverse=True)


def scrub(text: str, url: str) -> str:
    """`text` (a driver's or server's message about `url`) with the URL masked and every
    password text in it replaced by ***: libpq quotes a malformed URL, or a bad
    percent-escape of the password, back in its error."""
    text = text.replace(url, mask_url(url))
    for secret in url_secrets(url):
        text = text.replace(secret, MASK)
    return text


def check_url(url: str, where: str) -> str:
    """The URL if it names a PostgreSQL database (postgresql:// or postgres://); else a
    one-line UserError saying `where` it came from, the password masked."""
    text = url.strip()
    if not text:
        raise UserError(f"{where} is empty: give postgresql://user@host/db")
    # not a URL: where a password would sit is unknown, so the value is not shown at all
    shown = repr(mask_url(text)) if "://" in text else "the value (not shown)"
    if any(c.isspace() or not c.isprintable() for c in text):
        raise UserError(f"{where}: {shown} has a space or control character in it")
    scheme = text.partition("://")[0].lower()
    if "://" not in text or scheme not in SCHEMES:
        raise UserError(f"{where}: {shown} is not a PostgreSQL URL "
                        "(give postgresql://user@host/db)")
    return text


@dataclass(frozen=True)
class BoardLocation:
    """The local files of the workdir, or a PostgreSQL URL and the team inside it."""

    kind: Literal["files", "postgresql"] = "files"
    url: str | None = None
    team: str = "default"

    @property
    def shown(self) -> str:
        """How messages name it: "files" or the URL with its password masked."""
        return mask_url(self.url) if self.url else "files"

    def __repr__(self) -> str:  # a traceback or log line never carries the password
        return f"BoardLocation(kind={self.kind!r}, url={self.shown!r}, team={self.team!r})"

    __str__ = __repr__


def board_location(flag: str | None, env: Mapping[str, str], settings_value: Any,
                   team: str = "default") -> BoardLocation:
    """--board URL > $AGENT_CLI_BOARD > settings "board" (the user's own layers: the caller
    passes only those) > the workdir's files. An empty variable counts as unset."""
    if flag is not None:
        return BoardLocation("postgresql", check_url(flag, "--board"), team)
    raw = env.get(BOARD_ENV, "")
    if raw.strip():
        return BoardLocation("postgresql", check_url(raw, f"${BOARD_ENV}"), team)
    if settings_value is not None:
        if not isinstance(settings_value, str):
            raise UserError('settings "board" must be a postgresql:// URL string')
        return BoardLocation("postgresql", check_url(settings_value, 'settings "board"'), team)
    return BoardLocation("files", None, team)


class Wakeups(Protocol):
    """Wakes waiters when another process changes the board or an inbox (files: inotify;
    PostgreSQL: LISTEN). `active` is False when nothing can wake them (they poll)."""

    active: bool

    def start(self) -> bool: ...

    def close(self) -> None: ...


@dataclass
class StoreSet:
    """The team's four stores at one location, how to be woken by others' changes, and how
    to let go of them (files: nothing to close; a database: its connections)."""

    board: BoardStore
    mail: MailStore
    roster: RosterStore
    protocols: ProtocolStoreApi
    location: BoardLocation
    make_wakeups: Callable[[Callable[[], None]], Wakeups]
    closer: Callable[[], None] | None = None
    database: Any = None  # a PostgreSQL board's pg.db.Database (approvals share it)
    _closed: bool = field(default=False, repr=False)

    @property
    def files(self) -> bool:
        """True for the workdir's files: what only exists there (odd-file scans, task file
        paths) is looked at only then."""
        return self.location.kind == "files"

    def wakeups(self, notify: Callable[[], None]) -> Wakeups:
        """A waker (not started) that calls `notify` on every change by another process."""
        return self.make_wakeups(notify)

    def close(self) -> None:
        """Let go of the stores (idempotent)."""
        if self._closed:
            return
        self._closed = True
        if self.closer is not None:
            self.closer()
