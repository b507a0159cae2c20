"""Errors a remote client raises.

A failed server-side operation is raised as a :class:`RemoteError` that is also an
instance of the builtin the server raised (``except ValueError`` keeps working), and its
text names the operation that failed.
"""

from __future__ import annotations


class RemoteError(Exception):
    """An operation failed on the remote server."""


class RemoteConnectionError(RemoteError, ConnectionError):
    """The connection to the server failed, was refused, or was lost."""


class RemoteAuthenticationError(RemoteConnectionError):
    """Client and server did not prove to each other that they know the same token: the server
    refused the client's proof, or the server did not prove it knows the token (it runs without
    one, or it is not the server the client meant). Nothing but the hello was sent."""


class RemoteTimeoutError(RemoteError, TimeoutError):
    """The server did not answer within the client's timeout."""


_BUILTINS: dict[str, type[Exception]] = {
    cls.__name__: cls
    for cls in (
        IndexError,
        ValueError,
        TypeError,
        ZeroDivisionError,
        OverflowError,
        NotImplementedError,
        MemoryError,
        KeyError,
        RuntimeError,
    )
}
_CLASSES: dict[str, type[RemoteError]] = {
    name: type(f"Remote{name}", (RemoteError, base), {"__module__": __name__})
    for name, base in _BUILTINS.items()
}


def remote_error(kind: str, message: str) -> RemoteError:
    """The exception for a server error of ``kind`` (a builtin's name); unknown kinds give RemoteError."""
    cls = _CLASSES.get(kind, RemoteError)
    return cls(message)
