#!/usr/bin/python3
# SPDX-License-Identifier: MIT
# race.py -- many processes make the same calls on one database while a
# supervisor kills them with SIGKILL at random moments and restarts them.
#
#   /usr/bin/python3 test/reliability/race.py [--mode wal|delete|both]
#                    [--seed N] [--check-then-act] [--no-control]
#
# Each worker is a process (forked, so that restarts are cheap) with its
# own connections; it runs every call of one list (RACE_CALLS of them, half
# local and half external) in its own shuffled order, spelling the
# arguments its own way.  For RACE_SECONDS the supervisor kills one random
# started worker every 0..2*RACE_KILL_MS ms with SIGKILL and restarts it;
# then it lets them all finish.  A restarted worker runs its whole list
# again, so everything already done must replay.  Afterwards the checker
# reads the three places where executions show: the effects table (local;
# no UNIQUE), the arrivals table of a second database standing in for the
# target system (external; no UNIQUE), and the workers' own logs (one line
# per step, written with O_APPEND, so a kill never loses a written line).
# Each claim's note names the process that made it.
#
# --check-then-act runs only the negative control: the naive recipe (look
# in a log table, act, then insert the log row under a UNIQUE constraint),
# which the checker must catch executing twice.  The default run includes
# a short control, so the checker cannot pass vacuously.
#
# Sizes (environment): RACE_CALLS=500, RACE_WORKERS=8, RACE_SECONDS=5,
# RACE_KILL_MS=40 (0: no kills), RACE_BUSY_MS=50 (the busy_timeout, small
# on purpose, so that SQLITE_BUSY happens and its retry path runs),
# RACE_WORK_MS=2 (an action takes 0..this long; an external send takes it
# twice, there and back), RACE_SYNC=off (PRAGMA synchronous: a SIGKILL
# keeps the OS page cache, so fsync is not what this tests; crash.py runs
# with synchronous=FULL), RACE_CONTROL_CALLS=100, RACE_SEED, RACE_KEEP=1
# (keep the temporary directory).  IDEM_LIB=/path/to/idem.so tests
# another build.
import json
import os
import random
import shutil
import signal
import sqlite3
import sys
import tempfile
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, '..', '..'))
LIB = os.environ.get('IDEM_LIB', os.path.join(ROOT, 'build', 'idem.so'))


def env_int(name, default):
    return int(os.environ.get(name, default))


def connect(path, busy_ms=5000):
    c = sqlite3.connect(path, isolation_level=None, timeout=busy_ms / 1000.0)
    c.enable_load_extension(True)
    c.load_extension(LIB)
    c.enable_load_extension(False)
    return c


def is_busy(e):
    return (isinstance(e, sqlite3.OperationalError)
            and (getattr(e, 'sqlite_errorcode', 0) & 0xff) in (5, 6))


# ---- the calls ------------------------------------------------------------
# Call i is local when i is even, external when odd.  Each worker spells the
# arguments one of three ways; idem_canonical makes them one key.
def call(i, spelling):
    sku, qty = 'A%04d' % i, 1 + i % 5
    who, conv = 'user%d' % (i % 7), 'conv%d' % (i % 13)
    if spelling == 0:
        args = '{"qty":%d,"sku":"%s"}' % (qty, sku)
    elif spelling == 1:
        args = '{ "sku" : "%s" , "qty" : %d }' % (sku, qty)
    else:
        args = '{"qty": %d.0, "sku": "%s"}' % (qty, sku)
    kind = 'local' if i % 2 == 0 else 'external'
    tool = 'order' if kind == 'local' else 'pay'
    return who, conv, tool, args, kind


# ---- a worker process -----------------------------------------------------
def worker(d, cfg, idx, life, seed, recipe, ready):
    # life names this process: worker idx, nth start ("w3.2"); unlike a pid,
    # it is never reused.
    rnd = random.Random(seed)
    fd = os.open(os.path.join(d, 'w%d.log' % idx),
                 os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)

    def log(*parts):
        os.write(fd, (' '.join(str(p) for p in (life,) + parts) + '\n').encode())

    def work():
        time.sleep(rnd.uniform(0, cfg['work_ms']) / 1000.0)

    def retry(db, step, i, fn):
        # SQLITE_BUSY / SQLITE_LOCKED: roll back and redo the whole step.
        # Busy is never "not claimed".
        while True:
            try:
                return fn()
            except sqlite3.OperationalError as e:
                if not is_busy(e):
                    raise
                if db.in_transaction:
                    db.execute('ROLLBACK')
                log('busy', step, i)
                time.sleep(rnd.uniform(0, 0.002))

    def one(sql, params=()):
        return c.execute(sql, params).fetchone()[0]

    c = connect(os.path.join(d, 'calls.db'), cfg['busy_ms'])
    t = connect(os.path.join(d, 'target.db'), cfg['busy_ms'])
    for db in (c, t):
        retry(db, 'open', -1, lambda: db.execute('PRAGMA synchronous=' + cfg['sync']))
    order = list(range(cfg['calls']))
    rnd.shuffle(order)
    log('start', seed)
    os.write(ready, b'.')                # started: the supervisor may kill it now
    os.close(ready)

    for i in order:
        who, conv, tool, args, kind = call(i, idx % 3)
        key = one('SELECT idem_key(?,?,?,?)', (who, conv, tool, args))
        log('try', i)

        if recipe == 'naive':
            # The negative control: check, act, then log under UNIQUE.
            seen = retry(c, 'check', i, lambda: c.execute(
                'SELECT eid FROM naive_log WHERE key=?', (key,)).fetchone())
            if seen:
                log('replay', i, 'done', seen[0])
                continue
            work()
            eid = retry(c, 'act', i, lambda: c.execute(
                'INSERT INTO effects(key, idx, life) VALUES(?,?,?)',
                (key, i, life)).lastrowid)
            log('committed', i, eid)
            retry(c, 'log', i, lambda: c.execute(
                'INSERT OR IGNORE INTO naive_log(key, eid) VALUES(?,?)', (key, eid)))
            continue

        if kind == 'local':
            # Claim, act and record in one transaction.
            def local_step():
                c.execute('BEGIN IMMEDIATE')
                c.execute('INSERT OR IGNORE INTO calls(who, conv, tool, args, note)'
                          ' VALUES(?,?,?,?,?)', (who, conv, tool, args, life))
                if one('SELECT changes()') == 1:
                    log('won', i)
                    work()
                    eid = c.execute('INSERT INTO effects(key, idx, life) VALUES(?,?,?)',
                                    (key, i, life)).lastrowid
                    c.execute("UPDATE calls SET status='done', id=?, result=?"
                              " WHERE key=? AND member=0",
                              (eid, json.dumps({'effect': eid}), key))
                    c.execute('COMMIT')
                    log('committed', i, eid)
                else:
                    reply = json.loads(one('SELECT reply FROM calls WHERE key=? AND member=0',
                                           (key,)))
                    c.execute('COMMIT')
                    log('replay', i, reply['status'], reply['id'])
            retry(c, 'local', i, local_step)
            continue

        # External: the claim commits alone, before anything is sent.
        def claim():
            c.execute('INSERT OR IGNORE INTO calls(who, conv, tool, args, kind, note)'
                      " VALUES(?,?,?,?,'external',?)", (who, conv, tool, args, life))
            return one('SELECT changes()')
        if retry(c, 'claim', i, claim) == 0:
            reply = json.loads(retry(c, 'replay', i, lambda: one(
                'SELECT reply FROM calls WHERE key=? AND member=0', (key,))))
            log('replay', i, reply['status'], reply['id'])
            continue
        log('won', i)
        work()                           # the request travels
        # "Send": an arrival at the target.  A busy INSERT did not arrive
        # (the target's own transaction says so), so it may be redone.
        aid = retry(t, 'send', i, lambda: t.execute(
            'INSERT INTO arrivals(key, idx, life) VALUES(?,?,?)', (key, i, life)).lastrowid)
        log('arrived', i, aid)
        work()                           # the answer travels back
        retry(c, 'record', i, lambda: c.execute(
            "UPDATE calls SET status='done', id=?, result=? WHERE key=? AND member=0",
            (aid, json.dumps({'arrival': aid}), key)))
        log('recorded', i)

    log('finished')
    c.close()
    t.close()


# ---- the supervisor -------------------------------------------------------
class Run:
    def __init__(self, mode, recipe, cfg, seed):
        self.mode, self.recipe, self.cfg, self.seed = mode, recipe, cfg, seed
        self.rnd = random.Random(seed)
        self.kills = 0
        self.killed = set()      # lives that ended by our SIGKILL
        self.lives = {}          # pid -> life, of the workers running
        self.restarts = {}       # worker -> starts so far
        self.errors = []         # workers that died on their own

    def setup(self):
        c = connect(os.path.join(self.d, 'calls.db'))
        got = c.execute('PRAGMA journal_mode=' + self.mode).fetchone()[0]
        assert got == self.mode, got
        # No UNIQUE on effects or arrivals: a double execution must show.
        # durability=relaxed: the workers run with synchronous=OFF (a
        # SIGKILL keeps the page cache), where idem refuses external claims
        # otherwise; power loss is test/durable.test's part.
        c.executescript('''
          CREATE VIRTUAL TABLE calls USING idem(durability=relaxed);
          CREATE TABLE effects(eid INTEGER PRIMARY KEY, key TEXT NOT NULL, idx INT, life TEXT);
          CREATE TABLE naive_log(key TEXT PRIMARY KEY, eid INT);
        ''')
        self.keys = [c.execute('SELECT idem_key(?,?,?,?)', call(i, 0)[:4]).fetchone()[0]
                     for i in range(self.cfg['calls'])]
        c.close()
        t = connect(os.path.join(self.d, 'target.db'))
        t.execute('PRAGMA journal_mode=' + self.mode)
        t.execute('CREATE TABLE arrivals(aid INTEGER PRIMARY KEY, key TEXT NOT NULL,'
                  ' idx INT, life TEXT)')
        t.close()

    def spawn(self, idx):
        # A forked child: cheap to restart, so kills can be frequent.  The
        # supervisor holds no SQLite connection while workers run, so
        # nothing of SQLite's crosses the fork.  The pipe tells when the
        # worker has started, so that no kill is wasted on its start-up.
        seed = self.rnd.getrandbits(32)
        self.restarts[idx] = self.restarts.get(idx, 0) + 1
        life = 'w%d.%d' % (idx, self.restarts[idx])
        r, w = os.pipe()
        pid = os.fork()
        if pid == 0:
            rc = 0
            os.close(r)
            for fd in self.starting.values():
                os.close(fd)
            try:
                worker(self.d, self.cfg, idx, life, seed, self.recipe, w)
            except BaseException:
                with open(os.path.join(self.d, 'w%d.err' % idx), 'a') as f:
                    traceback.print_exc(file=f)
                rc = 3
            os._exit(rc)
        os.close(w)
        os.set_blocking(r, False)
        self.starting[pid] = r
        self.lives[pid] = life
        return pid

    def started(self, pid):
        fd = self.starting.get(pid)
        if fd is None:
            return True
        try:
            if not os.read(fd, 1):
                return False                     # it died before starting
        except BlockingIOError:
            return False
        os.close(self.starting.pop(pid))
        return True

    def reap(self, idx, pid, status, killing):
        # A worker ended.  True: it was by our SIGKILL (restart it).
        if pid in self.starting:
            os.close(self.starting.pop(pid))
        if killing and os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL:
            return True
        if os.waitstatus_to_exitcode(status) != 0:
            path = os.path.join(self.d, 'w%d.err' % idx)
            self.errors.append('worker %d exited with status %d: %s' % (
                idx, os.waitstatus_to_exitcode(status),
                open(path).read()[-2000:] if os.path.exists(path) else ''))
        return False

    def supervise(self):
        cfg = self.cfg
        start = time.monotonic()
        self.starting = {}
        procs = {i: self.spawn(i) for i in range(cfg['workers'])}
        stop_killing = start + cfg['seconds']
        hard_stop = start + cfg['seconds'] + 300

        def gap():
            return self.rnd.uniform(0, 2 * cfg['kill_ms']) / 1000.0
        next_kill = start + gap()
        while procs:
            for i, pid in list(procs.items()):
                done, status = os.waitpid(pid, os.WNOHANG)
                if done:
                    self.reap(i, pid, status, False)
                    del procs[i]
            now = time.monotonic()
            running = sorted(i for i, pid in procs.items() if self.started(pid))
            if cfg['kill_ms'] and running and now >= next_kill and now < stop_killing:
                i = self.rnd.choice(running)
                os.kill(procs[i], signal.SIGKILL)    # a zombie at worst: not reaped yet
                if self.reap(i, procs[i], os.waitpid(procs[i], 0)[1], True):
                    self.kills += 1
                    self.killed.add(self.lives[procs[i]])
                    procs[i] = self.spawn(i)
                else:
                    del procs[i]                     # it had just finished
                next_kill = now + gap()
            if now > hard_stop:
                for pid in procs.values():
                    os.kill(pid, signal.SIGKILL)
                    os.waitpid(pid, 0)
                self.errors.append('timeout: workers still running after %d s'
                                   % (hard_stop - start))
                break
            time.sleep(0.002)
        for fd in self.starting.values():
            os.close(fd)
        self.elapsed = time.monotonic() - start

    def run(self):
        self.d = tempfile.mkdtemp(prefix='idem-race-')
        try:
            self.setup()
            self.supervise()
            return self.check()
        finally:
            if os.environ.get('RACE_KEEP'):
                print('kept', self.d)
            else:
                shutil.rmtree(self.d, ignore_errors=True)

    # ---- the checker ----
    def read_logs(self):
        events = {}              # life -> [(event, idx, extra...)]
        for w in range(self.cfg['workers']):
            path = os.path.join(self.d, 'w%d.log' % w)
            if not os.path.exists(path):
                continue
            for line in open(path):
                f = line.split()
                events.setdefault(f[0], []).append(f[1:])
        return events

    def check(self):
        n = self.cfg['calls']
        keys = self.keys
        idx_of = {k: i for i, k in enumerate(keys)}
        local = [i for i in range(n) if call(i, 0)[4] == 'local']
        external = [i for i in range(n) if call(i, 0)[4] == 'external']
        c = connect(os.path.join(self.d, 'calls.db'))
        t = connect(os.path.join(self.d, 'target.db'))
        integrity = (c.execute('PRAGMA integrity_check').fetchone()[0],
                     t.execute('PRAGMA integrity_check').fetchone()[0])
        claims = {}
        for key, member, kind, status, cid, note in c.execute(
                'SELECT key, member, kind, status, id, note FROM calls'):
            claims.setdefault(key, []).append((member, kind, status, cid, note))
        effects = {}
        for eid, key, life in c.execute('SELECT eid, key, life FROM effects'):
            effects.setdefault(key, []).append((eid, life))
        arrivals = {}
        for aid, key, life in t.execute('SELECT aid, key, life FROM arrivals'):
            arrivals.setdefault(key, []).append((aid, life))
        c.close()
        t.close()
        events = self.read_logs()

        tests = []               # (name, [violation, ...])

        def test(name, bad):
            tests.append((name, bad))

        test('workers finish cleanly', list(self.errors) + [
            '%s: log ends with %r' % (life, ev[-1])
            for life, ev in events.items()
            if life not in self.killed and ev[-1][0] != 'finished'])
        test('integrity_check of both databases',
             [] if integrity == ('ok', 'ok') else ['integrity: %r' % (integrity,)])

        stray = [k for k in list(claims) + list(effects) + list(arrivals) if k not in idx_of]
        test('no claim, effect or arrival for a key nobody called', stray)

        if self.recipe == 'naive':
            # The same check as 'local: ... exactly one effect' below, which
            # here must find calls that took effect twice.
            self.doubles = sum(1 for k in keys if len(effects.get(k, [])) > 1)
            test('the checker catches check-then-act executing twice (%d calls)'
                 % self.doubles, [] if self.doubles else [
                     'no call took effect twice: the checker may be vacuous (or the'
                     ' race was lucky: raise RACE_CONTROL_CALLS or RACE_WORK_MS)'])
            return self.report(tests, events, effects, arrivals)

        bad = []
        for i in local:
            k = keys[i]
            rows, eff = claims.get(k, []), effects.get(k, [])
            if len(rows) != 1 or rows[0][2] != 'done':
                bad.append('local call %d: claim rows %r' % (i, rows))
            elif len(eff) != 1:
                bad.append('local call %d: done with %d effects %r' % (i, len(eff), eff))
            elif rows[0][3] != eff[0][0] or rows[0][4] != eff[0][1]:
                bad.append('local call %d: claim %r does not match effect %r' % (i, rows, eff))
        test('local: claim done <=> exactly one effect, the one it records', bad)
        test('local: no effect without its claim (and no effect of an external call)',
             ['call %d: effects %r, claims %r' % (idx_of[k], e, claims.get(k))
              for k, e in effects.items()
              if k in idx_of and (call(idx_of[k], 0)[4] != 'local' or k not in claims)])

        test('external: no call arrived twice',
             ['call %d: arrivals %r' % (idx_of.get(k, -1), a)
              for k, a in arrivals.items() if len(a) > 1])
        test('external: every arrival has its claim',
             ['call %d: arrival %r, claim %r' % (idx_of.get(k, -1), a, claims.get(k))
              for k, a in arrivals.items()
              if k not in claims or claims[k][0][1] != 'external'])
        bad = []
        self.pending = [0, 0]            # pending with no arrival, with one
        for i in external:
            k = keys[i]
            rows, arr = claims.get(k, []), arrivals.get(k, [])
            if len(rows) != 1:
                bad.append('external call %d: claim rows %r' % (i, rows))
                continue
            member, kind, status, cid, note = rows[0]
            if status == 'done':
                if len(arr) != 1 or arr[0][0] != cid:
                    bad.append('external call %d: done as %r, arrivals %r' % (i, cid, arr))
            elif status == 'pending':
                if note not in self.killed:
                    bad.append('external call %d: pending, but its claimer (%s) was not killed'
                               % (i, note))
                elif len(arr) > 1 or (arr and arr[0][1] != note):
                    bad.append('external call %d: pending, arrivals %r' % (i, arr))
                else:
                    self.pending[len(arr)] += 1
            else:
                bad.append('external call %d: status %s' % (i, status))
        test('external: done <=> its one arrival; pending only if its claimer was killed', bad)

        # The logs: who executed what, and what every duplicate saw.
        final = {k: rows[0] for k, rows in claims.items() if k in idx_of}
        won = {}                 # idx -> lives that logged 'won' (external)
        committed = {}           # idx -> count of local 'committed'
        bad_exec, bad_seq, bad_replay = [], [], []
        self.replays = self.busy = self.rolled_back = 0
        self.landed = {'startup': len(self.killed - set(events))}
        effect_life = {idx_of[k]: e[0][1] for k, e in effects.items() if k in idx_of}
        for life, ev in events.items():
            if life in self.killed:
                # Where the kill landed: after the last step this process logged.
                last = ([e for e in ev if e[0] != 'busy'] or [['start']])[-1]
                where = {'start': 'startup', 'finished': 'between calls', 'try': 'claiming',
                         'committed': 'between calls', 'recorded': 'between calls',
                         'replay': 'between calls', 'arrived': 'external: sent, not recorded',
                         }.get(last[0])
                if last[0] == 'won' and call(int(last[1]), 0)[4] == 'external':
                    where = 'external: claimed, not sent'
                elif last[0] == 'won':
                    where = 'local: in its transaction'
                    if effect_life.get(int(last[1])) != life:
                        self.rolled_back += 1    # and another process executed it
                self.landed[where] = self.landed.get(where, 0) + 1
            cur, outcome, open_win = None, False, None
            for e in ev:
                what = e[0]
                if what == 'busy':
                    self.busy += 1
                    if open_win is not None and e[1] == 'local':
                        open_win = None          # its transaction was rolled back
                    continue
                if what == 'try':
                    if cur is not None and not outcome:
                        bad_seq.append('%s: call %s has no outcome' % (life, cur))
                    if open_win is not None:
                        bad_seq.append('%s: local call %s won, not committed' % (life, open_win))
                    cur, outcome, open_win = e[1], False, None
                    continue
                i = int(e[1]) if len(e) > 1 else None
                if what == 'won':
                    if call(i, 0)[4] == 'external':
                        won.setdefault(i, []).append(life)
                        if final.get(keys[i], (0, 0, 0, 0, ''))[4] != life:
                            bad_exec.append('external call %d won by %s, claim says %r'
                                            % (i, life, final.get(keys[i])))
                    else:
                        open_win = i
                elif what == 'committed':
                    committed[i] = committed.get(i, 0) + 1
                    open_win, outcome = None, True
                elif what in ('recorded', 'replay'):
                    outcome = True
                    if what == 'replay':
                        self.replays += 1
                        status, rid = e[2], e[3]
                        fin = final.get(keys[i])
                        if fin is None or status != fin[2] and not (
                                status == 'pending' and fin[1] == 'external'):
                            bad_replay.append('call %d: replay saw %s, final %r' % (i, status, fin))
                        elif status == 'done' and rid != str(fin[3]):
                            bad_replay.append('call %d: replay id %s, recorded %r' % (i, rid, fin[3]))
            if life not in self.killed:
                if open_win is not None or (cur is not None and not outcome):
                    bad_seq.append('%s (not killed): call %s unfinished' % (life, cur))
        bad_exec += ['external call %d claimed by %d processes' % (i, len(p))
                     for i, p in won.items() if len(p) > 1]
        bad_exec += ['local call %d committed %d times' % (i, c)
                     for i, c in committed.items() if c > 1]
        test('logs: no call executed twice (one external win, one local commit)', bad_exec)
        test('logs: every attempt ends in an execution or a replay, unless killed there',
             bad_seq)
        test('logs: every duplicate replays what was recorded (local: done)', bad_replay)
        if self.cfg['kill_ms']:
            test('the supervisor killed workers', [] if self.kills else ['no kills'])
        return self.report(tests, events, effects, arrivals)

    def report(self, tests, events, effects, arrivals):
        self.tests = tests
        self.violations = sum(len(b) for _, b in tests)
        self.n_effects = sum(len(e) for e in effects.values())
        self.n_arrivals = sum(len(a) for a in arrivals.values())
        if self.recipe == 'naive':
            self.violations = '%d (expected)' % self.doubles
            self.replays = sum(1 for ev in events.values() for e in ev if e[0] == 'replay')
            self.busy = sum(1 for ev in events.values() for e in ev if e[0] == 'busy')
        return self


def print_table(runs):
    cols = ['mode', 'recipe', 'processes', 'calls', 'kills', 'local effects',
            'external arrivals', 'duplicates replayed', 'busy retries', 'violations',
            'seconds']
    rows = [[r.mode, 'check-then-act' if r.recipe == 'naive' else 'claim',
             str(r.cfg['workers']), str(r.cfg['calls']), str(r.kills),
             str(r.n_effects),
             str(r.n_arrivals), str(r.replays), str(r.busy), str(r.violations),
             '%.1f' % r.elapsed] for r in runs]
    w = [max(len(x) for x in col) for col in zip(cols, *rows)]
    for row in [cols] + rows:
        print('  '.join(x.rjust(n) for x, n in zip(row, w)))


def main(argv):
    modes, control_only, control = ['wal', 'delete'], False, True
    seed = env_int('RACE_SEED', random.randrange(1 << 31))
    a = list(argv)
    while a:
        o = a.pop(0)
        if o == '--mode' and a and a[0] in ('wal', 'delete', 'both'):
            m = a.pop(0)
            modes = ['wal', 'delete'] if m == 'both' else [m]
        elif o == '--seed' and a and a[0].isdigit():
            seed = int(a.pop(0))
        elif o == '--check-then-act':
            control_only = True
        elif o == '--no-control':
            control = False
        else:
            print('usage: race.py [--mode wal|delete|both] [--seed N] '
                  '[--check-then-act] [--no-control]', file=sys.stderr)
            return 2
    cfg = dict(calls=env_int('RACE_CALLS', 500), workers=env_int('RACE_WORKERS', 8),
               seconds=env_int('RACE_SECONDS', 5), kill_ms=env_int('RACE_KILL_MS', 40),
               busy_ms=env_int('RACE_BUSY_MS', 50), work_ms=env_int('RACE_WORK_MS', 2),
               sync=os.environ.get('RACE_SYNC', 'off').upper())
    ccfg = dict(cfg, calls=env_int('RACE_CONTROL_CALLS', 100), kill_ms=0)
    print('race.py: seed %d (RACE_SEED=%d reproduces the orders and kill times, not'
          ' the scheduling); SQLite %s; %s' % (seed, seed, sqlite3.sqlite_version, LIB))
    print('config: %s' % ' '.join('%s=%s' % kv for kv in sorted(cfg.items())))
    runs = []
    passed = failed = 0
    for k, mode in enumerate(modes):
        plan = [] if control_only else [('claim', cfg)]
        if control or control_only:
            plan.append(('naive', ccfg))
        for recipe, c in plan:
            r = Run(mode, recipe, c, seed + k).run()
            runs.append(r)
            label = '%s %s' % (mode, 'check-then-act' if recipe == 'naive' else 'claim')
            for name, bad in r.tests:
                print('%s %s: %s%s' % ('ok  ' if not bad else 'FAIL', label, name,
                                       '' if not bad else ' (%d)' % len(bad)))
                for b in bad[:10]:
                    print('       ' + b)
                passed, failed = passed + (not bad), failed + bool(bad)
            if recipe == 'naive':
                continue
            print('     %s: where the kills landed: %s' % (
                label, ', '.join('%s %d' % kv for kv in sorted(r.landed.items()))))
            print('     %s: local transactions rolled back by a kill and run by another'
                  ' process: %d; external calls left pending: %d not sent, %d sent' % (
                      label, r.rolled_back, r.pending[0], r.pending[1]))
    print()
    print_table(runs)
    print('%d passed, %d failed' % (passed, failed))
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
