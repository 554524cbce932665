#!/usr/bin/python3
# race.py -- many processes make the same calls on one database while a
# supervisor kills them with SIGKILL at random moments and restarts them.
#
#   /usr/bin/python3 test/reliability/race.py [--mode wal|delete|both]
#                    [--seed N] [--check-then-act] [--no-control]
#
# Each worker process has its own connection to calls.db and runs every
# call of one list (RACE_CALLS of them, half local and half external) in
# its own shuffled order, spelling the arguments its own way.  A restarted
# worker runs its whole list again, so everything it already did must
# replay.  Afterwards the checker reads the three places where executions
# show: the effects table (local), the arrivals table of a second database
# standing in for the target system (external), and the workers' own logs
# (one line per step, written with O_APPEND before/after each step, so a
# kill never loses a line that was written).
#
# --check-then-act runs only the negative control: the naive recipe (look
# in a log table, act, then insert the log row under a UNIQUE constraint),
# which the checker must catch executing twice.  The default run includes
# a short control, so the checker cannot pass vacuously.
#
# Sizes (environment): RACE_CALLS=500 RACE_WORKERS=8 RACE_SECONDS=4 (how
# long the supervisor keeps killing), RACE_KILL_MS=40 (mean interval
# between kills; 0 = no kills), RACE_BUSY_MS=50 (busy_timeout; small on
# purpose, so that SQLITE_BUSY happens and its retry path runs),
# RACE_WORK_MS=1 (an action takes 0..this long), RACE_SYNC=off (PRAGMA
# synchronous: a SIGKILL keeps the OS page cache, so fsync is not what is
# tested here; crash.py runs with synchronous=FULL), RACE_CONTROL_CALLS=100,
# RACE_SEED.  IDEM_LIB=/path/to/idem.so tests another build.
import json
import os
import random
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, '..', '..'))
LIB = os.environ.get('IDEM_LIB', os.path.join(ROOT, 'build', 'idem'))


def env_int(name, default):
    return int(os.environ.get(name, default))


def connect(path, busy_ms, sync):
    c = sqlite3.connect(path, isolation_level=None, timeout=busy_ms / 1000.0)
    c.enable_load_extension(True)
    c.load_extension(LIB)
    c.enable_load_extension(False)
    c.execute('PRAGMA synchronous=' + sync)
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
def worker(d, idx, seed, recipe):
    cfg = json.load(open(os.path.join(d, 'config.json')))
    pid = os.getpid()
    rnd = random.Random(seed)
    fd = os.open(os.path.join(d, 'w%d.log' % idx),
                 os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)

    def log(*parts):
        os.write(fd, (' '.join(str(p) for p in (pid,) + parts) + '\n').encode())

    c = connect(os.path.join(d, 'calls.db'), cfg['busy_ms'], cfg['sync'])
    t = connect(os.path.join(d, 'target.db'), cfg['busy_ms'], cfg['sync'])
    order = list(range(cfg['calls']))
    rnd.shuffle(order)
    log('start', seed)

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

    for i in order:
        who, conv, tool, args, kind = call(i, idx % 3)
        key = one('SELECT idem_key(?,?,?,?)', (who, conv, tool, args))
        note = 'pid %d' % pid
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
                'INSERT INTO effects(key, idx, pid) VALUES(?,?,?)',
                (key, i, pid)).lastrowid)
            log('committed', i, eid)
            retry(c, 'log', i, lambda: c.execute(
                'INSERT OR IGNORE INTO naive_log(key, eid) VALUES(?,?)', (key, eid)))
            continue

        if kind == 'local':
            # Claim, act and record in one transaction.
            def local_step():
                c.execute('BEGIN IMMEDIATE')
                c.execute('INSERT OR IGNORE INTO calls(who, conv, tool, args, note)'
                          ' VALUES(?,?,?,?,?)', (who, conv, tool, args, note))
                if one('SELECT changes()') == 1:
                    log('won', i)
                    work()
                    eid = c.execute('INSERT INTO effects(key, idx, pid) VALUES(?,?,?)',
                                    (key, i, pid)).lastrowid
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
                      " VALUES(?,?,?,?,'external',?)", (who, conv, tool, args, note))
            return one('SELECT changes()')
        if retry(c, 'claim', i, claim) == 0:
            reply = json.loads(retry(c, 'replay', i, lambda: one(
                'SELECT reply FROM calls WHERE key=? AND member=0', (key,))))
            log('replay', i, reply['status'], reply['id'])
            continue
        log('won', i)
        work()
        # "Send": an arrival at the target.  A busy INSERT did not arrive
        # (the target's own transaction says so), so it may be redone.
        aid = retry(t, 'send', i, lambda: t.execute(
            'INSERT INTO arrivals(key, idx, pid) VALUES(?,?,?)', (key, i, pid)).lastrowid)
        log('arrived', i, aid)
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
        self.killed = set()      # pids that died by our SIGKILL
        self.starts = 0
        self.errors = []         # workers that died on their own

    def setup(self):
        self.d = tempfile.mkdtemp(prefix='idem-race-')
        json.dump(self.cfg, open(os.path.join(self.d, 'config.json'), 'w'))
        c = connect(os.path.join(self.d, 'calls.db'), 5000, 'FULL')
        got = c.execute('PRAGMA journal_mode=' + self.mode).fetchone()[0]
        assert got == self.mode, got
        # No UNIQUE on effects or arrivals: a double execution must show.
        c.executescript('''
          CREATE VIRTUAL TABLE calls USING idem;
          CREATE TABLE effects(eid INTEGER PRIMARY KEY, key TEXT NOT NULL, idx INT, pid INT);
          CREATE TABLE naive_log(key TEXT PRIMARY KEY, eid INT);
        ''')
        self.keys = [c.execute('SELECT idem_key(?,?,?,?)', call(i, 0)[:4]).fetchone()[0]
                     for i in range(self.cfg['calls'])]
        c.close()
        t = connect(os.path.join(self.d, 'target.db'), 5000, 'FULL')
        t.execute('PRAGMA journal_mode=' + self.mode)
        t.execute('CREATE TABLE arrivals(aid INTEGER PRIMARY KEY, key TEXT NOT NULL,'
                  ' idx INT, pid INT)')
        t.close()

    def spawn(self, idx):
        self.starts += 1
        err = open(os.path.join(self.d, 'w%d.err' % idx), 'ab')
        p = subprocess.Popen([sys.executable, os.path.abspath(__file__), '--worker',
                              self.d, str(idx), str(self.rnd.getrandbits(32)), self.recipe],
                             stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=err)
        err.close()
        return p

    def supervise(self):
        cfg = self.cfg
        procs = {i: self.spawn(i) for i in range(cfg['workers'])}
        start = time.monotonic()
        stop_killing = start + cfg['seconds']
        hard_stop = start + cfg['seconds'] + 120

        def gap():
            return self.rnd.uniform(0, 2 * cfg['kill_ms']) / 1000.0
        next_kill = start + gap()
        while procs:
            now = time.monotonic()
            for i, p in list(procs.items()):
                rc = p.poll()
                if rc is None:
                    continue
                del procs[i]
                if rc != 0:
                    self.errors.append('worker %d (pid %d) exited with %d: %s' % (
                        i, p.pid, rc, open(os.path.join(self.d, 'w%d.err' % i)).read()[-2000:]))
            if cfg['kill_ms'] and procs and now >= next_kill and now < stop_killing:
                i = self.rnd.choice(sorted(procs))
                p = procs[i]
                try:
                    os.kill(p.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                if p.wait() == -signal.SIGKILL:
                    self.kills += 1
                    self.killed.add(p.pid)
                    procs[i] = self.spawn(i)
                else:
                    del procs[i]     # it had just finished; polled next round
                    procs_done = p.returncode
                    if procs_done != 0:
                        self.errors.append('worker %d exited with %d' % (i, procs_done))
                next_kill = now + gap()
            if now > hard_stop:
                for p in procs.values():
                    p.kill()
                    p.wait()
                self.errors.append('timeout: workers still running after %d s'
                                   % (hard_stop - start))
                break
            time.sleep(0.002)
        self.elapsed = time.monotonic() - start

    def run(self):
        self.setup()
        try:
            self.supervise()
            return self.check()
        finally:
            shutil.rmtree(self.d, ignore_errors=True)

    # ---- the checker ----
    def read_logs(self):
        events = {}              # pid -> [(event, idx, extra...)]
        for w in range(self.cfg['workers']):
            path = os.path.join(self.d, 'w%d.log' % w)
            if not os.path.exists(path):
                continue
            for line in open(path):
                f = line.split()
                events.setdefault(int(f[0]), []).append(f[1:])
        return events

    def check(self):
        n = self.cfg['calls']
        keys = self.keys
        idx_of = {k: i for i, k in enumerate(keys)}
        local = [i for i in range(n) if call(i, 0)[4] == 'local']
        external = [i for i in range(n) if call(i, 0)[4] == 'external']
        c = connect(os.path.join(self.d, 'calls.db'), 5000, 'FULL')
        t = connect(os.path.join(self.d, 'target.db'), 5000, 'FULL')
        integrity = (c.execute('PRAGMA integrity_check').fetchone()[0],
                     t.execute('PRAGMA integrity_check').fetchone()[0])
        claims = {}
        for key, member, kind, status, cid, note in c.execute(
                'SELECT key, member, kind, status, id, note FROM calls'):
            claims.setdefault(key, []).append((member, kind, status, cid, note))
        effects = {}
        for eid, key, i, pid in c.execute('SELECT eid, key, idx, pid FROM effects'):
            effects.setdefault(key, []).append((eid, pid))
        naive = dict(c.execute('SELECT key, eid FROM naive_log').fetchall())
        arrivals = {}
        for aid, key, pid in t.execute('SELECT aid, key, pid FROM arrivals'):
            arrivals.setdefault(key, []).append((aid, pid))
        c.close()
        t.close()
        events = self.read_logs()

        tests = []               # (name, [violation, ...])

        def test(name, bad):
            tests.append((name, bad))

        test('workers finish cleanly', list(self.errors) + [
            'pid %d: log ends with %r' % (pid, ev[-1])
            for pid, ev in events.items()
            if pid not in self.killed and ev[-1][0] != 'finished'])
        test('integrity_check of both databases',
             [] if integrity == ('ok', 'ok') else ['integrity: %r' % (integrity,)])

        stray = [k for k in list(claims) + list(effects) + list(arrivals) if k not in idx_of]
        test('no claim, effect or arrival for a key nobody called', stray)

        if self.recipe == 'naive':
            test('every call took effect exactly once (expected to FAIL)',
                 ['call %d: %d effects' % (idx_of[k], len(effects.get(k, [])))
                  for k in keys if len(effects.get(k, [])) != 1])
            return self.report(tests, events, effects, arrivals, claims, naive)

        bad = []
        for i in local:
            k = keys[i]
            rows, eff = claims.get(k, []), effects.get(k, [])
            if len(rows) != 1 or rows[0][2] != 'done':
                bad.append('local call %d: claim rows %r' % (i, rows))
            elif len(eff) != 1:
                bad.append('local call %d: done with %d effects %r' % (i, len(eff), eff))
            elif rows[0][3] != eff[0][0] or rows[0][4] != 'pid %d' % eff[0][1]:
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
                claimer = int(note.split()[1])
                if claimer not in self.killed:
                    bad.append('external call %d: pending, but its claimer %d was not killed'
                               % (i, claimer))
                elif len(arr) > 1 or (arr and arr[0][1] != claimer):
                    bad.append('external call %d: pending, arrivals %r' % (i, arr))
                else:
                    self.pending[len(arr)] += 1
            else:
                bad.append('external call %d: status %s' % (i, status))
        test('external: done <=> its one arrival; pending only if its claimer was killed', bad)

        # The logs: who executed what, and what every duplicate saw.
        final = {k: rows[0] for k, rows in claims.items() if k in idx_of}
        won = {}                 # idx -> pids that logged 'won' (external)
        committed = {}           # idx -> count of local 'committed'
        bad_exec, bad_seq, bad_replay = [], [], []
        self.replays = self.busy = self.rolled_back = 0
        self.landed = {}
        for pid, ev in events.items():
            if pid in self.killed:
                last = ev[-1][0]
                if last == 'won':
                    last += '-' + call(int(ev[-1][1]), 0)[4]
                self.landed[last] = self.landed.get(last, 0) + 1
            cur, outcome, open_win = None, False, None
            for j, e in enumerate(ev):
                what = e[0]
                if what == 'busy':
                    self.busy += 1
                    if open_win is not None and e[1] == 'local':
                        open_win = None          # its transaction was rolled back
                    continue
                if what == 'try':
                    if cur is not None and not outcome:
                        bad_seq.append('pid %d: call %s has no outcome' % (pid, cur))
                    if open_win is not None:
                        bad_seq.append('pid %d: local call %s won, not committed' % (pid, open_win))
                    cur, outcome, open_win = e[1], False, None
                    continue
                i = int(e[1]) if len(e) > 1 else None
                if what == 'won':
                    if call(i, 0)[4] == 'external':
                        won.setdefault(i, []).append(pid)
                        if final.get(keys[i], (0, 0, 0, 0, ''))[4] != 'pid %d' % pid:
                            bad_exec.append('external call %d won by pid %d, claim says %r'
                                            % (i, pid, final.get(keys[i])))
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
            if pid not in self.killed:
                if open_win is not None or (cur is not None and not outcome):
                    bad_seq.append('pid %d (not killed): call %s unfinished' % (pid, cur))
            elif open_win is not None:
                self.rolled_back += 1   # killed inside its local transaction
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
        return self.report(tests, events, effects, arrivals, claims, naive)

    def report(self, tests, events, effects, arrivals, claims, naive):
        self.tests = tests
        self.violations = sum(len(b) for _, b in tests)
        self.n_effects = sum(len(e) for e in effects.values())
        self.n_arrivals = sum(len(a) for a in arrivals.values())
        if self.recipe == 'naive':
            self.replays = sum(1 for ev in events.values() for e in ev if e[0] == 'replay')
            self.busy = sum(1 for ev in events.values() for e in ev if e[0] == 'busy')
            self.doubles = sum(1 for e in effects.values() if len(e) > 1)
        return self


def print_table(runs):
    cols = ['mode', 'recipe', 'procs', 'calls', 'kills', 'local effects',
            'ext arrivals', 'replayed', 'busy retries', 'violations', 'seconds']
    rows = [[r.mode, 'check-then-act' if r.recipe == 'naive' else 'claim',
             str(r.cfg['workers']), str(r.cfg['calls']), str(r.kills),
             str(r.n_effects) if r.recipe != 'naive' else '%d (%d keys twice+)' % (r.n_effects, r.doubles),
             str(r.n_arrivals), str(r.replays), str(r.busy), str(r.violations),
             '%.1f' % r.elapsed] for r in runs]
    w = [max(len(x) for x in col) for col in zip(cols, *rows)]
    for row in [cols] + rows:
        print('  '.join(x.rjust(n) for x, n in zip(row, w)))


def main(argv):
    if argv[:1] == ['--worker']:
        worker(argv[1], int(argv[2]), int(argv[3]), argv[4])
        return 0
    modes, control_only, control = ['wal', 'delete'], False, True
    seed = env_int('RACE_SEED', random.randrange(1 << 31))
    a = list(argv)
    while a:
        o = a.pop(0)
        if o == '--mode':
            m = a.pop(0)
            modes = ['wal', 'delete'] if m == 'both' else [m]
        elif o == '--seed':
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
               seconds=env_int('RACE_SECONDS', 4), kill_ms=env_int('RACE_KILL_MS', 40),
               busy_ms=env_int('RACE_BUSY_MS', 50), work_ms=env_int('RACE_WORK_MS', 1),
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
            if recipe == 'naive':
                # The control passes when the checker catches the double effects.
                ok = r.doubles > 0
                passed, failed = passed + ok, failed + (not ok)
                print('%s %s: the checker %s' % (
                    'ok  ' if ok else 'FAIL', label,
                    'finds %d calls that took effect more than once' % r.doubles if ok else
                    'found no double effect: it may be vacuous (or the race was lucky; '
                    'raise RACE_CONTROL_CALLS or RACE_WORK_MS)'))
                continue
            for name, bad in r.tests:
                print('%s %s: %s%s' % ('ok  ' if not bad else 'FAIL', label, name,
                                       '' if not bad else ' (%d)' % len(bad)))
                for b in bad[:10]:
                    print('       ' + b)
                passed, failed = passed + (not bad), failed + bool(bad)
            print('     %s: kills landed after: %s; local transactions killed after winning: %d;'
                  ' external left pending: %d with no arrival, %d with its arrival' % (
                      label, ', '.join('%s %d' % kv for kv in sorted(r.landed.items())),
                      r.rolled_back, r.pending[0], r.pending[1]))
    print()
    print_table(runs)
    print('%d passed, %d failed' % (passed, failed))
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
