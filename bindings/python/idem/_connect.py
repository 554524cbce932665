# SPDX-License-Identifier: MIT
"""idem.connect(): a connection that can load idem, whatever this Python's
sqlite3 module was built with.

Where sqlite3 can load extensions (sqlite3.Connection has
enable_load_extension: Debian's /usr/bin/python3), connect() is
sqlite3.connect() and idem.load().  Where it cannot (pyenv and python.org
builds often cannot), connect() opens the database with APSW (the PyPI
package apsw: it brings its own SQLite, which can load extensions;
``pip install 'sqlite-idem[apsw]'``) and returns an ApswConnection: the
sqlite3 module's Connection, as far as idem and most programs use it,
over an apsw.Connection.  It raises the sqlite3 module's exceptions
(sqlite3.OperationalError for a busy database, sqlite3.IntegrityError for
a constraint, with sqlite_errorcode and sqlite_errorname), opens
transactions as sqlite3 does (isolation_level None, '' and the others),
and refuses use from another thread unless check_same_thread=False.
What it does not do is refused with an error that says so.
"""
from __future__ import annotations

import importlib
import os
import re
import sqlite3
import threading
from typing import (Any, Callable, Dict, Iterable, Iterator, List, Mapping,
                    Optional, Sequence, Tuple, Type, Union)

__all__ = ["connect", "ApswConnection", "ApswCursor"]

DRIVERS = ("sqlite3", "apsw")
_LEVELS = ("", "DEFERRED", "IMMEDIATE", "EXCLUSIVE")
_DML = ("INSERT", "UPDATE", "DELETE", "REPLACE")
CANNOT_LOAD = (
    "idem: this Python's sqlite3 module cannot load extensions, so idem cannot"
    " be loaded into this connection (sqlite3.Connection has no"
    " enable_load_extension: this Python was built without"
    " --enable-loadable-sqlite-extensions, as pyenv and python.org builds often"
    " are); open the database with idem.connect(path) instead of"
    " sqlite3.connect(path): it uses APSW here (pip install"
    " 'sqlite-idem[apsw]')")

Params = Union[Sequence[Any], Mapping[str, Any]]


def can_load_extensions() -> bool:
    """Can this Python's sqlite3 module load extensions?"""
    return hasattr(sqlite3.Connection, "enable_load_extension")


def _apsw() -> Any:
    try:
        apsw = importlib.import_module("apsw")
    except ImportError:
        raise RuntimeError(
            "idem.connect(): this Python's sqlite3 module cannot load extensions"
            " (it was built without --enable-loadable-sqlite-extensions, as"
            " pyenv and python.org builds often are), and APSW, which can, is"
            " not installed: pip install 'sqlite-idem[apsw]' (or pip install"
            " apsw)") from None
    return apsw


def connect(database: Union[str, bytes, "os.PathLike[str]"], timeout: float = 5.0,
            isolation_level: Optional[str] = None, check_same_thread: bool = True,
            cached_statements: int = 128, uri: bool = False, *,
            driver: Optional[str] = None) -> Union[sqlite3.Connection, "ApswConnection"]:
    """Open database with idem loaded into the connection.

    The arguments are sqlite3.connect()'s, but isolation_level is None
    (autocommit: idem's recommended mode) unless given.  driver chooses:
    "sqlite3" (the sqlite3 module, which must be able to load extensions),
    "apsw" (an ApswConnection), or None: "sqlite3" where it can load
    extensions, else "apsw"."""
    if driver is None:
        driver = "sqlite3" if can_load_extensions() else "apsw"
    if driver not in DRIVERS:
        raise ValueError("idem.connect(): driver must be 'sqlite3', 'apsw' or"
                         " None (the one that can load extensions here), not %r"
                         % (driver,))
    from . import load
    conn: Union[sqlite3.Connection, ApswConnection]
    if driver == "sqlite3":
        if not can_load_extensions():
            raise RuntimeError(
                "idem.connect(driver='sqlite3'): this Python's sqlite3 module"
                " cannot load extensions; leave driver out (APSW is then used)")
        conn = sqlite3.connect(database, timeout=timeout,
                               isolation_level=isolation_level,
                               check_same_thread=check_same_thread,
                               cached_statements=cached_statements, uri=uri)
    else:
        conn = ApswConnection(database, timeout=timeout,
                              isolation_level=isolation_level,
                              check_same_thread=check_same_thread,
                              cached_statements=cached_statements, uri=uri)
    try:
        load(conn)
    except BaseException:
        conn.close()
        raise
    return conn


# ---- SQL text: what sqlite3 looks at before it runs a statement ------------

def _skip(sql: str, i: int = 0) -> int:
    """The index of the first character at or after i that is neither
    space nor comment."""
    n = len(sql)
    while i < n:
        c = sql[i]
        if c in " \t\n\r\f\v":
            i += 1
        elif sql.startswith("--", i):
            j = sql.find("\n", i)
            i = n if j < 0 else j + 1
        elif sql.startswith("/*", i):
            j = sql.find("*/", i + 2)
            i = n if j < 0 else j + 2
        else:
            break
    return i


def _is_dml(sql: str) -> bool:
    i = _skip(sql)
    return sql[i:i + 7].upper().startswith(_DML)


# ---- errors: apsw's, as the sqlite3 module raises them ---------------------

_MISUSE = ("BindingsError", "ConnectionClosedError", "CursorClosedError",
           "ThreadingViolation", "ThreadingViolationError")
_INTERNAL = (2, 12)                                     # INTERNAL, NOTFOUND
_OPERATIONAL = (1, 3, 4, 5, 6, 8, 9, 10, 13, 14, 15, 16, 17)


def _class_of(code: int) -> Type[sqlite3.Error]:
    """The sqlite3 module's exception class for a primary result code (as
    CPython's _pysqlite_seterror chooses it)."""
    if code in _INTERNAL:
        return sqlite3.InternalError
    if code in _OPERATIONAL:
        return sqlite3.OperationalError
    if code == 18:                                      # TOOBIG
        return sqlite3.DataError
    if code in (19, 20):                                # CONSTRAINT, MISMATCH
        return sqlite3.IntegrityError
    if code in (21, 25):                                # MISUSE, RANGE
        return sqlite3.InterfaceError
    return sqlite3.DatabaseError


def _translate(e: BaseException) -> BaseException:
    """The sqlite3 module's exception for an exception of apsw (e itself
    when it is not apsw's)."""
    apsw = _apsw()
    if not isinstance(e, apsw.Error):
        return e
    text = str(e)                       # older apsw: "ConstraintError: ..."
    if text.startswith(type(e).__name__ + ": "):
        text = text[len(type(e).__name__) + 2:]
    if isinstance(e, tuple(getattr(apsw, name) for name in _MISUSE
                           if hasattr(apsw, name))):
        m = re.match(r"Incorrect number of bindings supplied\.  The current statement"
                     r" uses (\d+) and there are (\d+) supplied", text)
        if m:
            return sqlite3.ProgrammingError(
                "Incorrect number of bindings supplied. The current statement"
                " uses %s, and there are %s supplied." % m.groups())
        return sqlite3.ProgrammingError(text)
    code = getattr(e, "result", -1)
    if not isinstance(code, int) or code < 0:
        return sqlite3.DatabaseError(text)
    if code == 7:                                       # NOMEM
        return MemoryError()
    ext = getattr(e, "extendedresult", None)
    if not isinstance(ext, int) or ext < 0:
        ext = code
    new = _class_of(code)(text)
    names = apsw.mapping_extended_result_codes
    setattr(new, "sqlite_errorcode", ext)
    setattr(new, "sqlite_errorname", names.get(ext) or
            apsw.mapping_result_codes.get(code, "SQLITE_UNKNOWN"))
    return new


class _Translated:
    """with _Translated(): apsw's exceptions come out as sqlite3's."""

    def __enter__(self) -> None:
        return None

    def __exit__(self, t: Any, e: Optional[BaseException], tb: Any) -> None:
        if e is None:
            return
        new = _translate(e)
        if new is e:
            return
        raise new from None


_translated = _Translated()


class _Guard(_Translated):
    """with conn._guard: one thread at a time uses the apsw connection (it
    refuses to be used by two at once; sqlite3 waits on SQLite's mutex
    instead), and apsw's exceptions come out as sqlite3's."""

    def __init__(self) -> None:
        self.lock = threading.RLock()

    def __enter__(self) -> None:
        self.lock.acquire()

    def __exit__(self, t: Any, e: Optional[BaseException], tb: Any) -> None:
        self.lock.release()
        super().__exit__(t, e, tb)


# ---- values: what sqlite3 binds ---------------------------------------------

_PLAIN = (type(None), int, float, str, bytes)


def _adapt_one(v: Any, n: Union[int, str]) -> Any:
    if type(v) is int:
        if not -2 ** 63 <= v < 2 ** 63:
            raise OverflowError("Python int too large to convert to SQLite INTEGER")
        return v
    if type(v) in _PLAIN:
        return v
    adapter = sqlite3.adapters.get((type(v), sqlite3.PrepareProtocol))
    if adapter is not None:
        v = adapter(v)
        if type(v) in _PLAIN:
            return v
    for kind in (int, float, str, bytes):          # subclasses (bool, IntEnum)
        if isinstance(v, kind):
            return _adapt_one(kind(v), n)
    if isinstance(v, (bytearray, memoryview)):
        return bytes(v)
    raise sqlite3.ProgrammingError("Error binding parameter %s: type '%s' is"
                                   " not supported" % (n, type(v).__name__))


def _adapt(params: Any) -> Any:
    if isinstance(params, Mapping):
        return {k: _adapt_one(v, ":" + str(k)) for k, v in params.items()}
    if isinstance(params, (str, bytes)) or not isinstance(params, Sequence):
        raise sqlite3.ProgrammingError(
            "parameters are of unsupported type: %s (give a sequence or a dict)"
            % type(params).__name__)
    return tuple(_adapt_one(v, i + 1) for i, v in enumerate(params))


class Row(tuple):  # type: ignore[type-arg]
    """What sqlite3.Row gives, for an ApswConnection whose row_factory is
    sqlite3.Row: a tuple whose items are also found by column name (in
    any case), with keys()."""

    _names: Tuple[str, ...] = ()

    def __new__(cls, cursor: "ApswCursor", row: Tuple[Any, ...]) -> "Row":
        self = super().__new__(cls, row)
        self._names = tuple(d[0] for d in cursor.description or ())
        return self

    def keys(self) -> List[str]:
        return list(self._names)

    def __getitem__(self, key: Any) -> Any:
        if isinstance(key, str):
            for i, name in enumerate(self._names):
                if name.upper() == key.upper():
                    return tuple.__getitem__(self, i)
            raise IndexError("No item with that key")
        return tuple.__getitem__(self, key)


# ---- the connection and its cursors -------------------------------------------

class ApswCursor:
    """sqlite3.Cursor over apsw: execute(), executemany(), executescript(),
    fetchone(), fetchmany(), fetchall(), iteration, description, rowcount,
    lastrowid.  A statement that returns rows is stepped as it is fetched;
    one that writes runs whole in execute()."""

    arraysize = 1

    def __init__(self, connection: "ApswConnection"):
        self.connection = connection
        self.description: Optional[Tuple[Tuple[Any, ...], ...]] = None
        self.rowcount = -1
        self.lastrowid: Optional[int] = None
        self.row_factory: Optional[Callable[..., Any]] = connection.row_factory
        self._rows: Optional[Iterator[Tuple[Any, ...]]] = None
        self._closed = False

    def _check(self) -> Any:
        db = self.connection._check()
        if self._closed:
            raise sqlite3.ProgrammingError("Cannot operate on a closed cursor.")
        return db

    def _run(self, db: Any, sql: str, params: Any) -> Any:
        """An apsw cursor that runs sql, the one statement sqlite3 allows
        (it is refused before it runs when more text follows it), and sets
        description."""
        cur = db.cursor()
        cols: List[Any] = []

        def trace(c: Any, text: str, bindings: Any) -> bool:
            if cols:
                return True
            cols.append(())
            if _skip(sql, len(text)) < len(sql):
                raise sqlite3.ProgrammingError(
                    "You can only execute one statement at a time.")
            try:
                cols[0] = c.getdescription()
            except Exception:
                pass
            return True
        cur.exectrace = trace
        try:
            cur.execute(sql, params)
        finally:
            cur.exectrace = None
        self.description = tuple((name, None, None, None, None, None, None)
                                 for name, _ in (cols[0] if cols else ())) or None
        return cur

    def execute(self, sql: str, parameters: Params = ()) -> "ApswCursor":
        db = self._check()
        if not isinstance(sql, str):
            raise TypeError("execute() argument 1 must be str, not %s"
                            % type(sql).__name__)
        self.description = None
        self.rowcount = -1
        self._rows = None
        with self.connection._guard:
            cur = self._begin_and_run(db, sql, parameters)
            if _is_dml(sql):
                rows = list(cur)                    # RETURNING: all at once
                self._rows = iter(rows)
                self.rowcount = db.changes()
            else:
                self._rows = iter(cur)
            self.lastrowid = db.last_insert_rowid()
        return self

    def _begin_and_run(self, db: Any, sql: str, parameters: Params) -> Any:
        """As sqlite3 does: the implicit BEGIN (outside autocommit mode,
        before a DML statement) once the statement is prepared, then the
        parameters bound, then the statement run."""
        began = self.connection._begin(sql)
        try:
            return self._run(db, sql, _adapt(parameters))
        except BaseException as e:
            if began and self.description is None and not isinstance(
                    _translate(e), (sqlite3.ProgrammingError, OverflowError)):
                db.execute("ROLLBACK")              # not prepared: no BEGIN
            raise

    def executemany(self, sql: str, seq_of_parameters: Iterable[Params]) -> "ApswCursor":
        db = self._check()
        if not isinstance(sql, str):
            raise TypeError("executemany() argument 1 must be str, not %s"
                            % type(sql).__name__)
        if not _is_dml(sql):
            raise sqlite3.ProgrammingError("executemany() can only execute DML statements.")
        self.description = None
        self.rowcount = 0
        self._rows = iter(())
        with self.connection._guard:
            for parameters in seq_of_parameters:
                cur = self._begin_and_run(db, sql, parameters)
                for _ in cur:
                    pass
                self.rowcount += db.changes()
        return self

    def executescript(self, sql_script: str) -> "ApswCursor":
        db = self._check()
        if not isinstance(sql_script, str):
            raise TypeError("executescript() argument must be str, not %s"
                            % type(sql_script).__name__)
        self.connection.commit()
        self.description = None
        self._rows = iter(())
        with self.connection._guard:
            for _ in db.cursor().execute(sql_script):
                pass
        return self

    def fetchone(self) -> Any:
        self._check()
        if self._rows is None:
            return None
        with self.connection._guard:
            row = next(self._rows, None)
        if row is None:
            self._rows = None
            return None
        factory = self.row_factory
        if factory is None:
            return row
        if factory is sqlite3.Row:
            return Row(self, row)
        return factory(self, row)

    def fetchmany(self, size: Optional[int] = None) -> List[Any]:
        n = self.arraysize if size is None else size
        out: List[Any] = []
        while len(out) < n:
            row = self.fetchone()
            if row is None:
                break
            out.append(row)
        return out

    def fetchall(self) -> List[Any]:
        out: List[Any] = []
        while True:
            row = self.fetchone()
            if row is None:
                return out
            out.append(row)

    def __iter__(self) -> "ApswCursor":
        return self

    def __next__(self) -> Any:
        row = self.fetchone()
        if row is None:
            raise StopIteration
        return row

    def setinputsizes(self, sizes: Any) -> None:
        pass

    def setoutputsize(self, size: Any, column: Any = None) -> None:
        pass

    def close(self) -> None:
        self.connection._check()
        self._rows = None
        self._closed = True


class ApswConnection:
    """sqlite3.Connection over an apsw.Connection (its attribute apsw), for a
    Python whose sqlite3 module cannot load extensions.  idem.connect()
    makes one; idem.Calls and idem.load() take it as they take a
    sqlite3.Connection.  Errors are the sqlite3 module's; transactions
    follow isolation_level as in sqlite3 (None: autocommit, BEGIN is
    yours; '', 'DEFERRED', 'IMMEDIATE', 'EXCLUSIVE': a BEGIN before
    INSERT, UPDATE, DELETE and REPLACE, ended by commit() or rollback());
    check_same_thread as in sqlite3."""

    def __init__(self, database: Union[str, bytes, "os.PathLike[str]"],
                 timeout: float = 5.0, isolation_level: Optional[str] = "",
                 check_same_thread: bool = True, cached_statements: int = 128,
                 uri: bool = False):
        apsw = _apsw()
        self._db: Any = None
        self._guard = _Guard()
        self._thread = threading.get_ident() if check_same_thread else None
        self.row_factory: Optional[Callable[..., Any]] = None
        self.isolation_level = isolation_level
        name = os.fsdecode(os.fspath(database))
        flags = apsw.SQLITE_OPEN_READWRITE | apsw.SQLITE_OPEN_CREATE
        if uri:
            flags |= apsw.SQLITE_OPEN_URI
        with _translated:
            db = apsw.Connection(name, flags=flags,
                                 statementcachesize=cached_statements)
            db.setbusytimeout(int(timeout * 1000))
        self._db = db

    @property
    def apsw(self) -> Any:
        """The apsw.Connection underneath."""
        return self._check()

    def _check(self) -> Any:
        if self._thread is not None and self._thread != threading.get_ident():
            raise sqlite3.ProgrammingError(
                "SQLite objects created in a thread can only be used in that"
                " same thread. The object was created in thread id %d and this"
                " is thread id %d." % (self._thread, threading.get_ident()))
        if self._db is None:
            raise sqlite3.ProgrammingError("Cannot operate on a closed database.")
        return self._db

    @property
    def isolation_level(self) -> Optional[str]:
        return self._level

    @isolation_level.setter
    def isolation_level(self, level: Optional[str]) -> None:
        if level is not None:
            if not isinstance(level, str):
                raise TypeError("isolation_level must be str or None")
            if level.upper() not in _LEVELS:
                raise ValueError("isolation_level string must be '', 'DEFERRED',"
                                 " 'IMMEDIATE', or 'EXCLUSIVE'")
        elif self._db is not None:
            self.commit()          # as sqlite3 does when it becomes None
        self._level = level

    def _begin(self, sql: str) -> bool:
        """sqlite3's implicit transaction, outside autocommit mode: True
        when it began one."""
        if self._level is not None and _is_dml(sql) and not self.in_transaction:
            with self._guard:
                self._db.execute("BEGIN " + self._level)
            return True
        return False

    @property
    def in_transaction(self) -> bool:
        db = self._check()
        with self._guard:
            return not db.getautocommit()

    @property
    def total_changes(self) -> int:
        db = self._check()
        with self._guard:
            return int(db.totalchanges())

    def cursor(self, factory: Callable[["ApswConnection"], ApswCursor] = ApswCursor) -> ApswCursor:
        self._check()
        return factory(self)

    def execute(self, sql: str, parameters: Params = ()) -> ApswCursor:
        return self.cursor().execute(sql, parameters)

    def executemany(self, sql: str, seq_of_parameters: Iterable[Params]) -> ApswCursor:
        return self.cursor().executemany(sql, seq_of_parameters)

    def executescript(self, sql_script: str) -> ApswCursor:
        return self.cursor().executescript(sql_script)

    def commit(self) -> None:
        if self.in_transaction:
            with self._guard:
                self._db.execute("COMMIT")

    def rollback(self) -> None:
        if self.in_transaction:
            with self._guard:
                self._db.execute("ROLLBACK")

    def close(self) -> None:
        if self._db is None:
            return
        self._check()
        db, self._db = self._db, None
        with self._guard:
            db.close()

    def __enter__(self) -> "ApswConnection":
        self._check()
        return self

    def __exit__(self, t: Any, e: Any, tb: Any) -> None:
        if e is None:
            try:
                self.commit()
            except BaseException:
                self.rollback()
                raise
        else:
            self.rollback()

    def enable_load_extension(self, enabled: bool) -> None:
        with self._guard:
            self._check().enableloadextension(bool(enabled))

    def load_extension(self, path: str) -> None:
        with self._guard:
            self._check().loadextension(path)

    def create_function(self, name: str, narg: int, func: Optional[Callable[..., Any]],
                        *, deterministic: bool = False) -> None:
        with self._guard:
            self._check().createscalarfunction(name, func, narg,
                                               deterministic=deterministic)

    def set_trace_callback(self, trace_callback: Optional[Callable[[str], object]]) -> None:
        """As sqlite3's: trace_callback(sql) for each statement run on the
        connection (the text SQLite traces: its parameters not expanded)."""
        db = self._check()
        if trace_callback is None:
            db.trace_v2(0, None)
            return
        apsw = _apsw()

        callback = trace_callback

        def trace(event: Dict[str, Any]) -> None:
            callback(event["sql"])
        with self._guard:
            db.trace_v2(apsw.SQLITE_TRACE_STMT, trace)

    def setlimit(self, category: int, limit: int) -> int:
        with self._guard:
            return int(self._check().limit(category, limit))

    def getlimit(self, category: int) -> int:
        with self._guard:
            return int(self._check().limit(category))

    def interrupt(self) -> None:
        if self._db is None:
            raise sqlite3.ProgrammingError("Cannot operate on a closed database.")
        self._db.interrupt()

    def __getattr__(self, name: str) -> Any:
        raise AttributeError(
            "idem.ApswConnection has no attribute %r: it gives what idem and"
            " most programs use of sqlite3.Connection; the apsw.Connection"
            " underneath is its attribute apsw" % name)
